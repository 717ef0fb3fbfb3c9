package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"slices"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/scoring"
)

// Why a sampled span left without any score.
const (
	reasonQueueFull   = "queue_full"
	reasonMaxWait     = "max_wait"
	reasonShutdown    = "shutdown"
	reasonNotScorable = "not_scorable"
	reasonError       = "error"
	reasonRestarted   = "restarted" // found in storage at start after max_wait
)

// Why a sampled generation was not evaluated at all (spans_skipped).
const skipToolCallsOnly = "tool_calls_only"

// Which late results become child spans (late_results).
const (
	lateResultsVerdicts = "verdicts"
	lateResultsAll      = "all"
	lateResultsNone     = "none"
)

// spanOutput annotates held spans and hands them, and late results, to
// the next consumer.
type spanOutput struct {
	next        consumer.Traces
	tel         *telemetry
	redact      func(string) string
	lateResults string // late_results
}

// forward sends spans on and counts them as the processor's output.
func (o *spanOutput) forward(ctx context.Context, td ptrace.Traces) error {
	o.tel.outgoing(ctx, td.SpanCount())
	return o.next.ConsumeTraces(ctx, td)
}

// forwardLater sends spans that left after their request was answered:
// a failure can only be logged.
func (o *spanOutput) forwardLater(ctx context.Context, td ptrace.Traces) {
	if err := o.forward(ctx, td); err != nil {
		o.tel.logFailure("forward", "failed to forward evaluated spans", zap.Error(err))
	}
}

// emitsLate reports whether a late result becomes a child span.
func (o *spanOutput) emitsLate(r evalResult) bool { return lateEmitted(o.lateResults, r) }

// lateEmitted reports whether late_results mode emits a late result.
func lateEmitted(mode string, r evalResult) bool {
	switch mode {
	case lateResultsAll:
		return true
	case lateResultsNone:
		return false
	}
	return r.label() != scoring.LabelError
}

// heldSpan is one sampled generation span, moved out of its batch together
// with a copy of its resource and scope; it is the evalSubject of a span.
type heldSpan struct {
	spanReading
	out *spanOutput
	of  evaluatedSpan
	// td is the span with its resource and scope; only leave uses it.
	td ptrace.Traces
	// lateTemplate is a read-only copy of the resource and scope, for the
	// child spans that carry late results.
	lateTemplate ptrace.Traces

	// The trace context join (tracejoin.go); join is nil when off.
	join       *traceJoin
	parentID   pcommon.SpanID
	end        pcommon.Timestamp
	joined     bool // trace documents were found; joinedDocs holds them
	joinedDocs []string
	// The agent run's trajectory (trajectory.go), assembled once.
	trajectory      *scoring.Trajectory
	trajectoryBuilt bool
}

// spanReading is what admission reads of a generation span, and recovery
// from storage reads again: its content and which scorers apply to it.
type spanReading struct {
	gen genai.Generation
	// agent: an agent or root span, scored by scorers targeting agent
	// with all the context below it.
	agent bool
	// excluded are the scorers whose include/exclude the span fails.
	excluded map[string]bool
	// missing is why an agent span held only for its trajectory scorers
	// has no readable content: the other scorers find it not scorable.
	missing string
}

// newHeldSpan moves span out of its batch, with a copy of its resource and
// scope, into a heldSpan carrying what admission read of it.
func newHeldSpan(out *spanOutput, join *traceJoin, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span, r spanReading) *heldSpan {
	gen := r.gen
	model := gen.Model
	if v, ok := span.Attributes().Get(evalconv.AttrRequestModel); ok && v.Str() != "" {
		model = v.Str()
	}
	h := &heldSpan{
		spanReading: r,
		out:         out,
		of: evaluatedSpan{
			traceID:    span.TraceID(),
			spanID:     span.SpanID(),
			model:      model,
			responseID: gen.ResponseID,
			agentName:  agentNameOf(span),
		},
		td:           lateTemplate(rs, ss),
		join:         join,
		lateTemplate: lateTemplate(rs, ss),
		parentID:     span.ParentSpanID(),
		end:          span.EndTimestamp(),
	}
	span.MoveTo(h.td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().AppendEmpty())
	return h
}

// agentNameOf is the span's gen_ai.agent.name, which late result spans
// repeat so that their metrics keep the agent's label.
func agentNameOf(span ptrace.Span) string {
	if v, ok := span.Attributes().Get(evalconv.AttrAgentName); ok && v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}

// caseFor builds what the scorer evaluates.
func (h *heldSpan) caseFor(cfg ScorerConfig) scoring.Case {
	c := caseFromGeneration(h.gen, h.of, cfg)
	c.Context = h.caseContext(cfg) // the span's own context plus its trace's
	if h.agent && h.join != nil && readsTrajectory(cfg) {
		c.Trajectory = h.caseTrajectory()
	}
	return c
}

// caseFromGeneration builds what the scorer evaluates of one call, read
// from a span or from log events.
func caseFromGeneration(gen genai.Generation, of evaluatedSpan, cfg ScorerConfig) scoring.Case {
	c := scoring.Case{
		Input:   gen.Input,
		Output:  gen.Output,
		Context: ownContext(gen, cfg),
		Metadata: map[string]string{
			"trace_id":   of.traceID.String(),
			"span_id":    of.spanID.String(),
			"convention": gen.Convention,
		},
	}
	if c.Input == "" {
		c.Input = gen.Conversation
	}
	switch {
	case len(cfg.Instructions) > 0:
		c.Instructions = cfg.Instructions
	case cfg.UseSystemInstructions:
		c.Instructions = gen.SystemInstructions
	}
	return c
}

// ownContext is the context a scorer takes from the call itself, by its
// context_sources: the tool results in its input (tool_messages), the
// documents recorded on its span (trace) and its system messages (system).
func ownContext(gen genai.Generation, cfg ScorerConfig) []string {
	var out []string
	add := func(texts []string) {
		for _, t := range texts {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	if cfg.takesContextFrom(contextSourceToolMessages) {
		add(gen.ToolResults)
	}
	if cfg.takesContextFrom(contextSourceTrace) {
		add(gen.Documents)
	}
	if cfg.takesContextFrom(contextSourceSystem) {
		add(gen.SystemInstructions)
	}
	return out
}

// leave annotates the span with its results and forwards it.
func (h *heldSpan) leave(ctx context.Context, results []evalResult) {
	td := h.td
	h.td = ptrace.Traces{}
	span := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	for _, r := range results {
		if r.skipped {
			continue
		}
		annotateSpan(span, r, h.of.responseID, h.out.redact)
	}
	h.out.forwardLater(ctx, td)
}

// late emits a result that finished after the span left as a child span,
// or only counts it, as late_results says.
func (h *heldSpan) late(ctx context.Context, r evalResult) {
	if !h.out.emitsLate(r) {
		h.out.tel.lateResultDropped(ctx, r.scorer)
		return
	}
	h.out.tel.lateResult(ctx, r.scorer)
	h.out.forwardLater(ctx, newLateSpan(h.lateTemplate, h.of, r, h.out.redact))
}
