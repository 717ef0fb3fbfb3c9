package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/heldrecord"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/resultwrite"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/tracecontext"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/trajectory"
	"github.com/llm-eval/llm_eval/scoring"
)

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
	// The agent run's trajectory (tracejoin.go), assembled once.
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
			TraceID:    span.TraceID(),
			SpanID:     span.SpanID(),
			Model:      model,
			ResponseID: gen.ResponseID,
			AgentName:  agentNameOf(span),
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

// agentNameOf is the span's gen_ai.agent.name, which late result spans
// repeat so that their metrics keep the agent's label.
func agentNameOf(span ptrace.Span) string {
	if v, ok := span.Attributes().Get(evalconv.AttrAgentName); ok && v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}

// caseFor builds what the scorer evaluates.
func (h *heldSpan) Case(cfg ScorerConfig) scoring.Case {
	c := caseFromGeneration(h.gen, h.of, cfg)
	c.Context = h.caseContext(cfg) // the span's own context plus its trace's
	if h.agent && h.join != nil && readsTrajectory(cfg) {
		c.Trajectory = h.caseTrajectory()
	}
	return c
}

// leave annotates the span with its results and forwards it.
func (h *heldSpan) Leave(ctx context.Context, results []evalResult) {
	td := h.td
	h.td = ptrace.Traces{}
	span := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	for _, r := range results {
		if r.Skipped {
			continue
		}
		resultwrite.AnnotateSpan(span, r.Scorer, r.Result, r.At, h.of.ResponseID, h.out.redact)
	}
	h.out.forwardLater(ctx, td)
}

// late emits a result that finished after the span left as a child span,
// or only counts it, as late_results says.
func (h *heldSpan) Late(ctx context.Context, r evalResult) {
	if !h.out.emitsLate(r) {
		h.out.tel.lateResultDropped(ctx, r.Scorer)
		return
	}
	h.out.tel.lateResult(ctx, r.Scorer)
	h.out.forwardLater(ctx, resultwrite.NewLateSpan(h.lateTemplate, h.of, r.Scorer, r.Result, r.At, h.out.redact))
}

// skips implements scorerSkipper for a held generation.
func (h *heldSpan) Skips(sc ScorerConfig) bool {
	target := targetGeneration
	if h.agent {
		target = targetAgent
	}
	if !sc.appliesTo(target, h.excluded) {
		return true
	}
	if h.missing == genai.MissingToolCalls && !readsTrajectory(sc) {
		return true // an agent whose answer is only tool calls gave no answer to judge
	}
	if !sc.When.ContextPresent {
		return false
	}
	ctx, _ := h.contextAndSource(sc)
	return len(ctx) == 0
}

// scope is the index scope of the span's query: an agent span gets
// everything below it, a generation the configured scope.
func (h *heldSpan) scope() tracecontext.Scope {
	if h.agent {
		return tracecontext.ScopeSubtree
	}
	return h.join.scope
}

// traceDocs are the documents of the span's trace in its scope. They are
// looked up at dispatch; once some were found they are kept, so every later
// case of the span sees the same context.
func (h *heldSpan) traceDocs() []string {
	if h.joined {
		return h.joinedDocs
	}
	docs := h.join.ix.ContextFor(h.of.TraceID, h.of.SpanID, h.parentID, h.end, h.scope())
	if len(docs) > 0 {
		h.joinedDocs, h.joined = docs, true
	}
	return docs
}

// caseContext is the context of the held span's case for a scorer: what it
// takes from the call itself, then, when it takes context from the trace,
// the trace's documents. Only scorers that read context count in
// context_joins.
func (h *heldSpan) caseContext(cfg ScorerConfig) []string {
	out, source := h.contextAndSource(cfg)
	if h.join != nil && scorerReadsContext(cfg) {
		h.join.tel.contextJoined(source)
	}
	return out
}

func (h *heldSpan) contextAndSource(cfg ScorerConfig) ([]string, string) {
	own := ownContext(h.gen, cfg)
	if h.join == nil || !cfg.takesContextFrom(contextSourceTrace) {
		if len(own) > 0 {
			return own, joinSourceSpan
		}
		return nil, joinSourceNone
	}
	return h.join.withTraceDocs(own, h.traceDocs())
}

// waitsForContext implements contextWaiter: a generation waits while a
// scorer that reads context from the trace has none of its own and the
// trace has none for it yet; an agent span judged on its trajectory also
// waits while its run looks unfinished (trajectory.Pending).
func (h *heldSpan) WaitsForContext() (pcommon.TraceID, bool) {
	if h.join == nil {
		return h.of.TraceID, false
	}
	if h.judgedOnTrajectory() && h.trajectoryPending() {
		return h.of.TraceID, true
	}
	for _, sc := range h.join.waiters {
		if len(ownContext(h.gen, sc)) == 0 {
			return h.of.TraceID, len(h.traceDocs()) == 0
		}
	}
	return h.of.TraceID, false
}

// judgedOnTrajectory says whether a trajectory scorer applies to the held
// span.
func (h *heldSpan) judgedOnTrajectory() bool {
	return h.agent && h.join.judgesTrajectory(h.excluded)
}

// caseTrajectory is the agent run's trajectory, assembled from the trace
// context index when the first trajectory scorer's case is built and kept,
// so every such scorer of the span judges the same steps.
func (h *heldSpan) caseTrajectory() *scoring.Trajectory {
	if !h.trajectoryBuilt {
		h.trajectory, _ = trajectory.Build(h.join.ix.StepsBelow(h.of.TraceID, h.of.SpanID))
		if h.td.ResourceSpans().Len() > 0 { // the agent span's own tools (Mastra lists them there)
			trajectory.AddTools(h.trajectory, genai.ReadToolDefinitions(h.td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)))
		}
		h.trajectoryBuilt = true
	}
	return h.trajectory
}

// trajectoryPending says whether the agent run's trace looks unfinished in
// the index (trajectory.Pending), for the wait before dispatch.
func (h *heldSpan) trajectoryPending() bool {
	return trajectory.Pending(h.join.ix.StepsBelow(h.of.TraceID, h.of.SpanID))
}

// resultUpFront implements upFrontResulter: an agent span without readable
// content is held for its trajectory scorers alone, and every other scorer
// finds it not scorable, as it would have without them (one whose answer
// is only tool calls is skipped by them instead, skips).
func (h *heldSpan) ResultUpFront(sc ScorerConfig) (scoring.Result, bool) {
	if h.missing == "" || readsTrajectory(sc) {
		return scoring.Result{}, false
	}
	return scoring.Result{Scorer: sc.Name, Label: scoring.LabelNotScorable, Reason: h.missing}, true
}

// Record implements itemstore.Stored for a held span.
func (h *heldSpan) Record(admitted time.Time) ([]byte, error) {
	return heldrecord.EncodeSpan(h.td, admitted)
}

// takeContent makes a span without content of its own judged on what its
// log events hold; the span's model and response id win when it has them.
func (h *heldSpan) takeContent(from genai.Generation) {
	gen := from
	if h.gen.Model != "" {
		gen.Model = h.gen.Model
	}
	if h.gen.ResponseID != "" {
		gen.ResponseID = h.gen.ResponseID
	}
	h.gen = gen
	if h.of.Model == "" {
		h.of.Model = gen.Model
	}
	h.of.ResponseID = gen.ResponseID
}
