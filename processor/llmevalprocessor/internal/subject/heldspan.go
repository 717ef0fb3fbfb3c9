package subject // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/subject"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/persistence"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/resultwrite"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/tracecontext"
	"github.com/llm-eval/llm_eval/scoring"
)

// HeldSpan is one sampled generation or agent span, moved out of its batch
// together with a copy of its resource and scope; it is the subject of a
// span.
type HeldSpan struct {
	Reading
	out *SpanOut
	of  resultwrite.Evaluated
	// td is the span with its resource and scope; only Leave uses it.
	td ptrace.Traces
	// lateTemplate is a read-only copy of the resource and scope, for the
	// child spans that carry late results.
	lateTemplate ptrace.Traces

	// The trace context join (tracejoin.go); join is nil when off.
	join       *TraceJoin
	parentID   pcommon.SpanID
	end        pcommon.Timestamp
	joined     bool // trace documents were found; joinedDocs holds them
	joinedDocs []string
	// The agent run's trajectory, assembled once.
	trajectory      *scoring.Trajectory
	trajectoryBuilt bool
}

var (
	_ evalstore.Subject       = (*HeldSpan)(nil)
	_ evalstore.UpFronter     = (*HeldSpan)(nil)
	_ evalstore.ContextWaiter = (*HeldSpan)(nil)
)

// Reading is what admission reads of a generation span, and recovery
// from storage reads again: its content and which scorers apply to it.
type Reading struct {
	Gen genai.Generation
	// Agent: an agent or root span, scored by scorers targeting agent
	// with all the context below it.
	Agent bool
	// Excluded are the scorers whose include/exclude the span fails.
	Excluded map[string]bool
	// Missing is why an agent span held only for its trajectory scorers
	// has no readable content: the other scorers find it not scorable
	// (TraceJoin.HeldForTrajectory).
	Missing string
}

// NewHeldSpan moves span out of its batch, with a copy of its resource and
// scope, into a HeldSpan carrying what admission read of it; join is nil
// without the trace context join.
func NewHeldSpan(out *SpanOut, join *TraceJoin, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span, r Reading) *HeldSpan {
	gen := r.Gen
	model := gen.Model
	if v, ok := span.Attributes().Get(evalconv.AttrRequestModel); ok && v.Str() != "" {
		model = v.Str()
	}
	h := &HeldSpan{
		Reading: r,
		out:     out,
		of: resultwrite.Evaluated{
			TraceID:    span.TraceID(),
			SpanID:     span.SpanID(),
			Model:      model,
			ResponseID: gen.ResponseID,
			AgentName:  AgentName(span),
		},
		td:           resultwrite.LateTemplate(rs, ss),
		join:         join,
		lateTemplate: resultwrite.LateTemplate(rs, ss),
		parentID:     span.ParentSpanID(),
		end:          span.EndTimestamp(),
	}
	span.MoveTo(h.td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().AppendEmpty())
	return h
}

// AgentName is the span's gen_ai.agent.name, which result spans repeat so
// that their metrics keep the agent's label.
func AgentName(span ptrace.Span) string {
	if v, ok := span.Attributes().Get(evalconv.AttrAgentName); ok && v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}

// NewPair is the subject of the span's call, the span's log events to
// join it.
func (h *HeldSpan) NewPair() evalstore.Pair { return pairOf(h) }

// Case builds what the scorer evaluates.
func (h *HeldSpan) Case(sc evalstore.Scorer) scoring.Case {
	c := caseFromGeneration(h.Gen, h.of, sc)
	c.Context = h.caseContext(sc) // the span's own context plus its trace's
	if h.Agent && h.join != nil && sc.ReadsTrajectory {
		c.Trajectory = h.caseTrajectory()
	}
	return c
}

// Leave annotates the span with its results and forwards it.
func (h *HeldSpan) Leave(ctx context.Context, results []evalstore.Result) {
	td := h.td
	h.td = ptrace.Traces{}
	span := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	for _, r := range results {
		if r.Skipped {
			continue
		}
		resultwrite.AnnotateSpan(span, r, h.of.ResponseID, h.out.Policy.Redact)
	}
	h.out.Sink.ForwardLater(ctx, td)
}

// Late emits a result that finished after the span left as a child span,
// or only counts it, as late_results says.
func (h *HeldSpan) Late(ctx context.Context, r evalstore.Result) {
	if !h.out.Policy.EmitsLate(r.Label()) {
		h.out.Tel.LateResultDropped(ctx, r.Scorer)
		return
	}
	h.out.Tel.LateResult(ctx, r.Scorer)
	h.out.Sink.ForwardLater(ctx, resultwrite.NewLateSpan(h.lateTemplate, h.of, r, h.out.Policy.Redact))
}

// Skips says whether the scorer is left out for the span: it does not
// apply, the span's answer is only tool calls, or it wants context and
// there is none.
func (h *HeldSpan) Skips(sc evalstore.Scorer) bool {
	if !sc.AppliesTo(h.Agent, h.Excluded) {
		return true
	}
	if h.Missing == genai.MissingToolCalls && !sc.ReadsTrajectory {
		return true // an agent whose answer is only tool calls gave no answer to judge
	}
	if !sc.ContextPresent {
		return false
	}
	ctx, _ := h.contextAndSource(sc)
	return len(ctx) == 0
}

// scope is the index scope of the span's query: an agent span gets
// everything below it, a generation the configured scope.
func (h *HeldSpan) scope() tracecontext.Scope {
	if h.Agent {
		return tracecontext.ScopeSubtree
	}
	return h.join.scope
}

// traceDocs are the documents of the span's trace in its scope. They are
// looked up at dispatch; once some were found they are kept, so every later
// case of the span sees the same context.
func (h *HeldSpan) traceDocs() []string {
	if h.joined {
		return h.joinedDocs
	}
	docs := h.join.Index.ContextFor(h.of.TraceID, h.of.SpanID, h.parentID, h.end, h.scope())
	if len(docs) > 0 {
		h.joinedDocs, h.joined = docs, true
	}
	return docs
}

// caseContext is the context of the held span's case for a scorer: what it
// takes from the call itself, then, when it takes context from the trace,
// the trace's documents. Only scorers that read context count in
// context_joins.
func (h *HeldSpan) caseContext(sc evalstore.Scorer) []string {
	out, source := h.contextAndSource(sc)
	if h.join != nil && sc.ReadsContext {
		h.join.tel.ContextJoined(source)
	}
	return out
}

func (h *HeldSpan) contextAndSource(sc evalstore.Scorer) ([]string, string) {
	own := ownContext(h.Gen, sc)
	if h.join == nil || !sc.FromTrace {
		if len(own) > 0 {
			return own, JoinSourceSpan
		}
		return nil, JoinSourceNone
	}
	return h.join.withTraceDocs(own, h.traceDocs())
}

// WaitsForContext implements evalstore.ContextWaiter: a generation waits
// while a scorer that reads context from the trace has none of its own and
// the trace has none for it yet; an agent span judged on its trajectory
// also waits while its run looks unfinished (tracecontext.Index.RunPending).
func (h *HeldSpan) WaitsForContext() (pcommon.TraceID, bool) {
	if h.join == nil {
		return h.of.TraceID, false
	}
	if h.judgedOnTrajectory() && h.trajectoryPending() {
		return h.of.TraceID, true
	}
	for _, sc := range h.join.waiters {
		if len(ownContext(h.Gen, sc)) == 0 {
			return h.of.TraceID, len(h.traceDocs()) == 0
		}
	}
	return h.of.TraceID, false
}

// judgedOnTrajectory says whether a trajectory scorer applies to the held
// span.
func (h *HeldSpan) judgedOnTrajectory() bool {
	return h.Agent && h.join.judgesTrajectory(h.Excluded)
}

// caseTrajectory is the agent run's trajectory, assembled from the trace
// context index when the first trajectory scorer's case is built and kept,
// so every such scorer of the span judges the same steps.
func (h *HeldSpan) caseTrajectory() *scoring.Trajectory {
	if !h.trajectoryBuilt {
		h.trajectory = h.join.Index.Trajectory(h.of.TraceID, h.of.SpanID)
		if h.td.ResourceSpans().Len() > 0 { // the agent span's own tools (Mastra lists them there)
			tracecontext.AddTools(h.trajectory, genai.ReadToolDefinitions(h.td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)))
		}
		h.trajectoryBuilt = true
	}
	return h.trajectory
}

// trajectoryPending says whether the agent run's trace looks unfinished in
// the index (tracecontext.Index.RunPending), for the wait before dispatch.
func (h *HeldSpan) trajectoryPending() bool {
	return h.join.Index.RunPending(h.of.TraceID, h.of.SpanID)
}

// ResultUpFront implements evalstore.UpFronter: an agent span without
// readable content is held for its trajectory scorers alone, and every
// other scorer finds it not scorable, as it would have without them (one
// whose answer is only tool calls is skipped by them instead, Skips).
func (h *HeldSpan) ResultUpFront(sc evalstore.Scorer) (scoring.Result, bool) {
	if h.Missing == "" || sc.ReadsTrajectory {
		return scoring.Result{}, false
	}
	return scoring.Result{Scorer: sc.Name, Label: scoring.LabelNotScorable, Reason: h.Missing}, true
}

// Record implements persistence.Stored for a held span.
func (h *HeldSpan) Record(admitted time.Time) ([]byte, error) {
	return persistence.EncodeSpan(h.td, admitted)
}

// Unjoined makes a span recovered from storage, where it waited for its
// log events, stand alone where spans and events are no longer joined:
// without content, nothing is judged.
func (h *HeldSpan) Unjoined() {
	if h.Missing == "" && h.Gen.Missing != "" {
		h.Missing = h.Gen.Missing
	}
}

// TakeContent makes a span without content of its own judged on what its
// log events hold; the span's model and response id win when it has them.
func (h *HeldSpan) TakeContent(from genai.Generation) {
	gen := from
	if h.Gen.Model != "" {
		gen.Model = h.Gen.Model
	}
	if h.Gen.ResponseID != "" {
		gen.ResponseID = h.Gen.ResponseID
	}
	h.Gen = gen
	if h.of.Model == "" {
		h.of.Model = gen.Model
	}
	h.of.ResponseID = gen.ResponseID
}
