package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

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

// Evaluation targets of a scorer.
const (
	targetGeneration = "generation" // LLM call spans (the default)
	targetAgent      = "agent"      // agent or root spans: the request, the final answer, the trace's context
)

// Scopes of trace_context.scope.
const (
	contextScopeSiblings = "siblings"
	contextScopeTrace    = "trace"
)

// Sources of a scorer's context (scorers[].context_sources).
const (
	// contextSourceTrace: retrieved documents and tool results recorded on
	// spans of the trace (retrieval, tool and memory spans, and documents
	// on the generation span itself).
	contextSourceTrace = "trace"
	// contextSourceToolMessages: tool results in the call's own input.
	contextSourceToolMessages = "tool_messages"
	// contextSourceSystem: the call's system messages, for applications
	// that put their retrieved documents into the system prompt.
	contextSourceSystem = "system"
)

func defaultContextSources() []string {
	return []string{contextSourceTrace, contextSourceToolMessages}
}

// validateContextSources checks scorers[].context_sources.
func validateContextSources(sources []string) []error {
	if len(sources) == 0 {
		return []error{errors.New("context_sources: must name at least one of trace, tool_messages, system")}
	}
	var errs []error
	for i, src := range sources {
		switch src {
		case contextSourceTrace, contextSourceToolMessages, contextSourceSystem:
		default:
			errs = append(errs, fmt.Errorf("context_sources[%d]: %w", i, notOneOf(src, contextSourceTrace, contextSourceToolMessages, contextSourceSystem)))
		}
		if slices.Index(sources, src) < i {
			errs = append(errs, fmt.Errorf("context_sources[%d]: duplicate source %q", i, src))
		}
	}
	return errs
}

// takesContextFrom says whether the scorer's context includes src.
func (sc ScorerConfig) takesContextFrom(src string) bool {
	return slices.Contains(sc.ContextSources, src)
}

// Fixed bounds of the trace context index that are not worth a key.
const (
	contextMaxDocumentBytes = 32 << 10 // each document
	contextMaxTraceBytes    = 4 << 20  // one trace, at most max_bytes
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
func (tc *TraceContextConfig) Validate() error { return joinFields(tc.validate()) }

func (tc TraceContextConfig) validate() []error {
	var errs []error
	if tc.MaxTraces < 1 {
		errs = append(errs, fmt.Errorf("max_traces: must be at least 1, got %d", tc.MaxTraces))
	}
	if tc.MaxBytes < 1 {
		errs = append(errs, fmt.Errorf("max_bytes: must be positive, got %d", tc.MaxBytes))
	}
	if tc.TTL <= 0 {
		errs = append(errs, fmt.Errorf("ttl: must be positive, got %s", tc.TTL))
	}
	switch tc.Scope {
	case contextScopeSiblings, contextScopeTrace:
	default:
		errs = append(errs, fmt.Errorf("scope: %w", notOneOf(tc.Scope, contextScopeSiblings, contextScopeTrace)))
	}
	if tc.ContextWait < 0 {
		errs = append(errs, fmt.Errorf("context_wait: must not be negative, got %s", tc.ContextWait))
	}
	return errs
}

// effectiveWait is how long a generation waits for context: context_wait,
// never longer than max_wait.
func (tc TraceContextConfig) effectiveWait(maxWait time.Duration) time.Duration {
	return min(tc.ContextWait, maxWait)
}

// indexConfig is the index's configuration for these settings.
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

// ScorerSelection says which spans one scorer evaluates. It is meant to be
// squashed into ScorerConfig.
type ScorerSelection struct {
	// Targets are generation and/or agent (default [generation]).
	Targets []string `mapstructure:"targets"`
	// When holds conditions on what was read from the span.
	When WhenConfig `mapstructure:"when"`
	// SpanFilterConfig narrows the scorer to matching spans, after the
	// processor-wide include and exclude.
	SpanFilterConfig `mapstructure:",squash"`
}

// WhenConfig holds conditions checked on the case before it is scored.
type WhenConfig struct {
	// ContextPresent skips spans without retrieved context or tool results
	// (on the span or joined from its trace); they are not scored and not
	// marked not_scorable.
	ContextPresent bool `mapstructure:"context_present"`
}

// defaultScorerSelection is what a scorer entry starts from.
func defaultScorerSelection() ScorerSelection {
	return ScorerSelection{Targets: []string{targetGeneration}}
}

// validate checks the targets and compiles the filters. It runs inside
// ScorerConfig.Validate, so the collector adds the scorers::N path.
func (s ScorerSelection) validate() []error {
	var errs []error
	if len(s.Targets) == 0 {
		errs = append(errs, errors.New("targets: must name at least one of generation, agent"))
	}
	for i, t := range s.Targets {
		switch t {
		case targetGeneration, targetAgent:
		default:
			errs = append(errs, fmt.Errorf("targets[%d]: %w", i, notOneOf(t, targetGeneration, targetAgent)))
		}
		if slices.Index(s.Targets, t) < i {
			errs = append(errs, fmt.Errorf("targets[%d]: duplicate target %q", i, t))
		}
	}
	if _, err := s.SpanFilterConfig.compile(); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// hasTarget says whether the scorer evaluates spans of target.
func (s ScorerSelection) hasTarget(target string) bool {
	return slices.Contains(s.Targets, target)
}

// SpanFilterConfig selects spans by their resource and span attributes.
type SpanFilterConfig struct {
	// Include keeps only spans matching one of the entries; empty keeps all.
	Include []AttributeMatchConfig `mapstructure:"include"`
	// Exclude drops spans matching one of the entries.
	Exclude []AttributeMatchConfig `mapstructure:"exclude"`
}

// AttributeMatchConfig is one filter entry: every listed attribute must match.
type AttributeMatchConfig struct {
	// Resource attributes, by key (service.name, deployment.environment.name).
	Resource map[string]ValueMatchConfig `mapstructure:"resource"`
	// Span attributes, by key (gen_ai.agent.name, gen_ai.request.model).
	Span map[string]ValueMatchConfig `mapstructure:"span"`
}

// ValueMatchConfig matches one attribute value: a bare string is Equals.
type ValueMatchConfig struct {
	// Equals is the exact value.
	Equals string `mapstructure:"equals"`
	// Regexp is an RE2 expression matched anywhere in the value.
	Regexp string `mapstructure:"regexp"`
}

// UnmarshalText reads a bare string as an exact match.
func (v *ValueMatchConfig) UnmarshalText(text []byte) error {
	v.Equals = string(text)
	return nil
}

// spanFilter is a compiled SpanFilterConfig.
type spanFilter struct {
	include, exclude []attributeMatch
}

type attributeMatch struct {
	resource, span []valueMatch
}

type valueMatch struct {
	key    string
	equals string
	re     *regexp.Regexp // nil for an exact match
}

// compile checks and compiles the filter. Its errors start at include or
// exclude; the collector adds the path of the section holding them.
func (c SpanFilterConfig) compile() (spanFilter, error) {
	var f spanFilter
	var errs []error
	var err error
	if f.include, err = compileMatches("include", c.Include); err != nil {
		errs = append(errs, err)
	}
	if f.exclude, err = compileMatches("exclude", c.Exclude); err != nil {
		errs = append(errs, err)
	}
	return f, errors.Join(errs...)
}

func compileMatches(key string, entries []AttributeMatchConfig) ([]attributeMatch, error) {
	out := make([]attributeMatch, 0, len(entries))
	var errs []error
	for i, e := range entries {
		entryKey := fmt.Sprintf("%s[%d]", key, i)
		if len(e.Resource) == 0 && len(e.Span) == 0 {
			errs = append(errs, fmt.Errorf("%s: must list at least one resource or span attribute", entryKey))
			continue
		}
		res, err1 := compileValues(entryKey+".resource", e.Resource)
		span, err2 := compileValues(entryKey+".span", e.Span)
		if err1 != nil || err2 != nil {
			errs = append(errs, err1, err2)
			continue
		}
		out = append(out, attributeMatch{resource: res, span: span})
	}
	return out, errors.Join(errs...)
}

func compileValues(key string, values map[string]ValueMatchConfig) ([]valueMatch, error) {
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	slices.Sort(keys) // stable error order
	out := make([]valueMatch, 0, len(values))
	var errs []error
	for _, k := range keys {
		v := values[k]
		attrKey := fmt.Sprintf("%s[%q]", key, k)
		switch {
		case k == "":
			errs = append(errs, fmt.Errorf("%s: attribute key must not be empty", key))
		case v.Equals != "" && v.Regexp != "":
			errs = append(errs, fmt.Errorf("%s: set equals or regexp, not both", attrKey))
		case v.Regexp != "":
			re, err := regexp.Compile(v.Regexp)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s.regexp: %w", attrKey, err))
				continue
			}
			out = append(out, valueMatch{key: k, re: re})
		case v.Equals != "":
			out = append(out, valueMatch{key: k, equals: v.Equals})
		default:
			errs = append(errs, fmt.Errorf("%s: needs a value, {equals: ...} or {regexp: ...} (use regexp \"^$\" for an empty value)", attrKey))
		}
	}
	return out, errors.Join(errs...)
}

// empty says whether the filter lets every span through.
func (f spanFilter) empty() bool {
	return len(f.include) == 0 && len(f.exclude) == 0
}

// matches says whether an item passes: it matches an include entry (or
// there are none) and no exclude entry. res are its resource attributes,
// attrs its own: a span's, or those of a log call's records.
func (f spanFilter) matches(res, attrs pcommon.Map) bool {
	if len(f.include) > 0 && !anyMatch(f.include, res, attrs) {
		return false
	}
	return !anyMatch(f.exclude, res, attrs)
}

// passes is matches, short-cut for a filter that lets everything through.
func (f spanFilter) passes(res, attrs pcommon.Map) bool {
	return f.empty() || f.matches(res, attrs)
}

// rulesOut says whether a resource alone decides that no item under it
// passes, whatever the items' own attributes: no include entry matches the
// resource, or an exclude entry without span attributes does. The logs
// signal checks it before it copies records for joining.
func (f spanFilter) rulesOut(res pcommon.Map) bool {
	if len(f.include) > 0 && !slices.ContainsFunc(f.include, func(e attributeMatch) bool { return allMatch(e.resource, res) }) {
		return true
	}
	return slices.ContainsFunc(f.exclude, func(e attributeMatch) bool { return len(e.span) == 0 && allMatch(e.resource, res) })
}

func anyMatch(entries []attributeMatch, res, attrs pcommon.Map) bool {
	for _, e := range entries {
		if allMatch(e.resource, res) && allMatch(e.span, attrs) {
			return true
		}
	}
	return false
}

func allMatch(values []valueMatch, attrs pcommon.Map) bool {
	for _, vm := range values {
		v, ok := attrs.Get(vm.key)
		if !ok {
			return false
		}
		s := v.AsString()
		if vm.re != nil {
			if !vm.re.MatchString(s) {
				return false
			}
		} else if s != vm.equals {
			return false
		}
	}
	return true
}
