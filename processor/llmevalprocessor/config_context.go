package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"fmt"
	"time"

	"github.com/llm-eval/llm_eval/internal/duration"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/configcheck"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/tracecontext"
)

// The keys for agent and RAG traces (issue 8). In YAML:
//
//	trace_context:
//	  max_traces: 10000      # traces remembered
//	  max_bytes: 67108864    # bytes of context and bookkeeping, all traces
//	  ttl: 2m                # kept this long after the trace was last added to
//	  scope: siblings        # siblings (default) or trace
//	  context_wait: 2s       # a generation without context waits this long; <= max_wait
//	include:                 # score only spans matching one of these (all when empty)
//	  - resource: {service.name: checkout}
//	exclude:                 # never score spans matching one of these
//	  - span: {gen_ai.request.model: {regexp: "^gpt-3\\."}}
//	scorers:
//	  - name: hallucination
//	    targets: [generation, agent]   # default [generation]
//	    when: {context_present: true}  # skip spans without retrieved context
//	    include:
//	      - span: {gen_ai.agent.name: {regexp: "^support-"}}
//
// A filter entry lists resource and span attributes; it matches a span when
// every attribute it lists matches (AND), and a list matches when any entry
// does (OR). A value is matched exactly when given as a string (or as
// {equals: ...}), or by an RE2 regular expression given as {regexp: ...},
// which matches anywhere in the value unless anchored with ^ and $.
// Non-string attributes are compared in their string form (true, 42, 0.5);
// write numbers in quotes. A missing attribute matches nothing.

// Scopes of trace_context.scope.
const (
	contextScopeSiblings = "siblings"
	contextScopeTrace    = "trace"
)

// Fixed bounds of the trace context index that are not worth a key.
const (
	contextMaxDocumentBytes = 32 << 10 // each document
	contextMaxTraceBytes    = 4 << 20  // one trace, at most max_bytes
	// likelyMaxContextTTL is the longest trace_context.ttl plausibly
	// meant (see duration.AtLeast).
	likelyMaxContextTTL = 24 * time.Hour
)

// TraceContextConfig sizes the per-trace index of retrieved documents and
// tool results, and says which of them a generation is judged against.
type TraceContextConfig struct {
	// MaxTraces is the most traces remembered (default 10000).
	MaxTraces int `mapstructure:"max_traces"`
	// MaxBytes bounds the context texts and bookkeeping of all traces
	// (default 64 MiB).
	MaxBytes int64 `mapstructure:"max_bytes"`
	// TTL is how long a trace is remembered after its last GenAI span
	// (default 2m).
	TTL time.Duration `mapstructure:"ttl"`
	// Scope is siblings (the generation's siblings and their descendants,
	// plus its ancestors' retrieval and tool children that ended before it
	// ended) or trace (every context span of the trace).
	Scope string `mapstructure:"scope"`
	// ContextWait is how long a generation that has no context yet waits
	// for context spans arriving later (default 2s, capped at max_wait).
	ContextWait time.Duration `mapstructure:"context_wait"`
}

// defaultTraceContextConfig is the trace_context section when left out.
func defaultTraceContextConfig() TraceContextConfig {
	return TraceContextConfig{
		MaxTraces:   10_000,
		MaxBytes:    64 << 20,
		TTL:         2 * time.Minute,
		Scope:       contextScopeSiblings,
		ContextWait: 2 * time.Second,
	}
}

// validate checks the section. context_wait is not checked against
// max_wait: the processor waits at most max_wait (effectiveWait), so that
// setting only a short max_wait needs no second change.
// Validate checks the index settings; the collector prefixes the errors
// with trace_context, as for every other section.
func (tc *TraceContextConfig) Validate() error { return configcheck.JoinFields(tc.validate()) }

func (tc TraceContextConfig) validate() []error {
	var errs []error
	if tc.MaxTraces < 1 {
		errs = append(errs, fmt.Errorf("max_traces: must be at least 1, got %d", tc.MaxTraces))
	}
	if tc.MaxBytes < 1 {
		errs = append(errs, fmt.Errorf("max_bytes: must be positive, got %d", tc.MaxBytes))
	}
	if err := duration.AtLeast(tc.TTL, minWait, likelyMaxContextTTL); err != nil {
		errs = append(errs, fmt.Errorf("ttl: %w", err))
	}
	switch tc.Scope {
	case contextScopeSiblings, contextScopeTrace:
	default:
		errs = append(errs, fmt.Errorf("scope: %w", configcheck.NotOneOf(tc.Scope, contextScopeSiblings, contextScopeTrace)))
	}
	if err := duration.ZeroOrAtLeast(tc.ContextWait, minWait, likelyMaxWait, "0 for no wait"); err != nil {
		errs = append(errs, fmt.Errorf("context_wait: %w", err))
	}
	return errs
}

// effectiveWait is how long a generation waits for context: context_wait,
// never longer than max_wait.
func (tc TraceContextConfig) effectiveWait(maxWait time.Duration) time.Duration {
	return min(tc.ContextWait, maxWait)
}

// Defaults of log_events. The window covers the model's answer time: the
// input events are sent before the call, the gen_ai.choice after it.
const (
	defaultJoinWindow      = 30 * time.Second
	defaultMaxPending      = 1000
	defaultMaxPendingBytes = 64 << 20
	// defaultCrossSignalWait covers the export delays of the SDKs: the
	// batch span processors of OpenTelemetry SDKs flush every 5s by
	// default, their log record processors every 1s to 5s.
	defaultCrossSignalWait = 10 * time.Second
	// The area of spans without content waiting for their events: a
	// content-less span holds about 1 to 2 KiB.
	defaultMaxWaitingSpans = 10000
	defaultMaxWaitingBytes = 32 << 20
	// defaultContentCaptureOffAfter: spans of a service in a row whose
	// events never came before its spans stop waiting.
	defaultContentCaptureOffAfter = 50
)

// Bounds of the memory of calls that left, by which a half of a call
// arriving after its call left is recognised (the pair of both halves, internal/evalstore).
const (
	crossSignalRemember    = 2 * time.Minute
	crossSignalRememberPer = 8 // halves remembered per queue_size
)

// LogEventsConfig bounds the joining of the per-message GenAI log events
// (semantic conventions ≤ 1.36) of one call in the logs pipeline.
type LogEventsConfig struct {
	// JoinWindow is how long the events of one call are waited for, from
	// its first event, before it is read with what came (default 30s).
	JoinWindow time.Duration `mapstructure:"join_window"`
	// MaxPending is the most calls being joined at once; beyond it the
	// oldest is given up (default 1000).
	MaxPending int `mapstructure:"max_pending"`
	// MaxPendingBytes caps the estimated size of the events held for
	// joining, in bytes (default 64 MiB).
	MaxPendingBytes int `mapstructure:"max_pending_bytes"`
	// CrossSignalWait is how long, with the component in a traces and a
	// logs pipeline, a span without content waits for its GenAI log
	// events and a call read from log events waits for its span, so the
	// call is evaluated once with its results on the span (default 10s;
	// at most half of max_wait; 0 evaluates each signal on its own).
	CrossSignalWait time.Duration `mapstructure:"cross_signal_wait"`
	// MaxWaitingSpans bounds the spans without content waiting for their
	// log events; they take no queue_size slot. A span finding the area
	// full is not_scorable at once (default 10000).
	MaxWaitingSpans int `mapstructure:"max_waiting_spans"`
	// MaxWaitingBytes bounds the estimated bytes of those spans (default
	// 32 MiB).
	MaxWaitingBytes int `mapstructure:"max_waiting_bytes"`
	// ContentCaptureOffAfter is how many spans of one service in a row
	// must wait in vain before its spans stop waiting (not_scorable at
	// once, "content capture is off") until an event of the service
	// arrives (default 50; 0 never stops waiting).
	ContentCaptureOffAfter int `mapstructure:"content_capture_off_after"`
}

func defaultLogEventsConfig() LogEventsConfig {
	return LogEventsConfig{
		JoinWindow:      defaultJoinWindow,
		MaxPending:      defaultMaxPending,
		MaxPendingBytes: defaultMaxPendingBytes,
		CrossSignalWait: defaultCrossSignalWait,

		MaxWaitingSpans:        defaultMaxWaitingSpans,
		MaxWaitingBytes:        defaultMaxWaitingBytes,
		ContentCaptureOffAfter: defaultContentCaptureOffAfter,
	}
}

// Validate checks the joining bounds; the collector prefixes the errors
// with log_events.
func (c *LogEventsConfig) Validate() error { return configcheck.JoinFields(c.validate()) }

func (c LogEventsConfig) validate() []error {
	var errs []error
	if err := duration.AtLeast(c.JoinWindow, minWait, likelyMaxWait); err != nil {
		errs = append(errs, fmt.Errorf("join_window: %w", err))
	}
	if c.MaxPending < 1 {
		errs = append(errs, fmt.Errorf("max_pending: must be at least 1, got %d", c.MaxPending))
	}
	if c.MaxPendingBytes < 1 {
		errs = append(errs, fmt.Errorf("max_pending_bytes: must be at least 1, got %d", c.MaxPendingBytes))
	}
	if err := duration.ZeroOrAtLeast(c.CrossSignalWait, minWait, likelyMaxWait, "0 to evaluate each signal on its own"); err != nil {
		errs = append(errs, fmt.Errorf("cross_signal_wait: %w", err))
	}
	if c.MaxWaitingSpans < 1 {
		errs = append(errs, fmt.Errorf("max_waiting_spans: must be at least 1, got %d", c.MaxWaitingSpans))
	}
	if c.MaxWaitingBytes < 1 {
		errs = append(errs, fmt.Errorf("max_waiting_bytes: must be at least 1, got %d", c.MaxWaitingBytes))
	}
	if c.ContentCaptureOffAfter < 0 {
		errs = append(errs, fmt.Errorf("content_capture_off_after: must not be negative (0 never stops waiting), got %d", c.ContentCaptureOffAfter))
	}
	return errs
}

// effectiveCrossSignalWait is how long a half waits for its other half:
// cross_signal_wait, at most half of max_wait, so the evaluation has time.
func (c LogEventsConfig) effectiveCrossSignalWait(maxWait time.Duration) time.Duration {
	return min(c.CrossSignalWait, maxWait/2)
}

// indexConfig is the trace context index's configuration for these
// settings.
func (tc TraceContextConfig) indexConfig() tracecontext.Config {
	return tracecontext.Config{
		MaxTraces:        tc.MaxTraces,
		MaxBytes:         tc.MaxBytes,
		TTL:              tc.TTL,
		MaxDocumentBytes: contextMaxDocumentBytes,
		MaxTraceBytes:    min(tc.MaxBytes, contextMaxTraceBytes),
	}
}

// scope is the index scope a generation's query uses.
func (tc TraceContextConfig) scope() tracecontext.Scope {
	if tc.Scope == contextScopeTrace {
		return tracecontext.ScopeTrace
	}
	return tracecontext.ScopeSiblings
}
