package subject // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/subject"

import (
	"slices"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/tracecontext"
)

// Where a dispatched generation's context came from (context_joins).
const (
	JoinSourceSpan  = "span"  // the span's own context only
	JoinSourceTrace = "trace" // documents joined from other spans of the trace
	JoinSourceNone  = "none"
)

// JoinSources are the values of ContextJoined's source.
func JoinSources() []string { return []string{JoinSourceSpan, JoinSourceTrace, JoinSourceNone} }

// TraceJoin remembers the retrieved documents, tool results and agent steps
// of sampled traces and joins them into held spans' cases at dispatch.
// Context spans are only read: they pass through at once and unchanged.
type TraceJoin struct {
	// Index is the trace context index the join reads.
	Index *tracecontext.Index
	scope tracecontext.Scope
	// waiters are the scorers that read context (hallucination, a
	// criteria scorer with the context field) and take it from the
	// trace: only for them does a generation without context wait.
	waiters []evalstore.Scorer
	// maxChars bounds the joined documents' total length (what the
	// context scorers can judge, from max_input_chars and
	// max_context_chunks; 0: no bound beyond the index's own).
	maxChars int
	// trajectories are the scorers that judge agent runs' trajectories;
	// only with one does the index keep step records.
	trajectories []evalstore.Scorer
	tel          Telemetry
}

// NewTraceJoin makes the join over an index of cfg. A generation's query
// uses scope; maxChars bounds the documents joined into one case, in
// characters; scorers are the configured ones.
func NewTraceJoin(cfg tracecontext.Config, scope tracecontext.Scope, maxChars int, scorers []evalstore.Scorer, tel Telemetry) (*TraceJoin, error) {
	ix, err := tracecontext.New(cfg)
	if err != nil {
		return nil, err
	}
	j := &TraceJoin{Index: ix, scope: scope, maxChars: maxChars, tel: tel}
	for _, sc := range scorers {
		if sc.ReadsContext && sc.FromTrace {
			j.waiters = append(j.waiters, sc)
		}
		if sc.ReadsTrajectory && sc.Agent {
			j.trajectories = append(j.trajectories, sc)
		}
	}
	return j, nil
}

// IndexSpan adds a GenAI span of a sampled trace to the index, with its
// step record when a scorer judges trajectories, and reports whether its
// trace gained context or steps. A candidate for evaluation (candidate;
// agent: an agent span) read as a step returns what was read as gen, so
// it is read once; gen is nil otherwise.
func (j *TraceJoin) IndexSpan(kind genai.Kind, span ptrace.Span, candidate, agent bool) (gained bool, gen *genai.Generation) {
	s := tracecontext.Span{
		TraceID: span.TraceID(), SpanID: span.SpanID(), ParentID: span.ParentSpanID(),
		Start: span.StartTimestamp(), End: span.EndTimestamp(),
	}
	if kind == genai.KindContext {
		src := genai.ReadContext(span)
		s.Role, s.Texts = src.Role, src.Texts
	}
	if j.ReadsSteps() {
		var st genai.Step
		ok := false
		if candidate {
			var g genai.Generation
			if agent {
				g, st, ok = genai.ReadAgentWithStep(span)
			} else {
				g, st, ok = genai.ReadWithStep(span)
			}
			gen = &g
		} else {
			st, ok = genai.ReadStep(kind, span)
		}
		if ok {
			s.Step = &st
		}
	}
	return j.Index.Add(s), gen
}

// ReadsSteps says whether spans are read as steps of agent runs: only
// when a scorer judges trajectories.
func (j *TraceJoin) ReadsSteps() bool { return len(j.trajectories) > 0 }

// withTraceDocs appends the documents of the trace that count for the
// span under scope to own, de-duplicated and bounded by maxChars in
// total, and says where the context came from.
func (j *TraceJoin) withTraceDocs(own, docs []string) ([]string, string) {
	out := own
	total := 0
	for _, d := range own {
		total += len(d)
	}
	joined := false
	for _, d := range docs {
		if j.maxChars > 0 && total >= j.maxChars {
			break
		}
		if slices.Contains(out, d) {
			continue
		}
		if !joined {
			out = slices.Clone(own)
			joined = true
		}
		out = append(out, d)
		total += len(d)
	}
	switch {
	case joined:
		return out, JoinSourceTrace
	case len(own) > 0:
		return own, JoinSourceSpan
	}
	return nil, JoinSourceNone
}

// judgesTrajectory says whether a trajectory scorer applies to an agent
// span whose per-scorer filters left out the excluded scorers.
func (j *TraceJoin) judgesTrajectory(excluded map[string]bool) bool {
	return j != nil && slices.ContainsFunc(j.trajectories, func(sc evalstore.Scorer) bool { return sc.AppliesTo(true, excluded) })
}

// HeldForTrajectory says why an agent span without readable content is
// held anyway, or "": a trajectory scorer judges it, since its run's steps
// are in the trace. It then clears gen.Missing; the span's other scorers
// find it not scorable, or skip it (ResultUpFront, Skips). Admission and
// recovery from storage both decide this way. j may be nil.
func (j *TraceJoin) HeldForTrajectory(agent bool, gen *genai.Generation, excluded map[string]bool) string {
	if !agent || gen.Missing == "" || !j.judgesTrajectory(excluded) {
		return ""
	}
	missing := gen.Missing
	gen.Missing = ""
	return missing
}
