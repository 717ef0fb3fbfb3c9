package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"slices"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/tracecontext"
	"github.com/llm-eval/llm_eval/scoring"
)

// traceJoin remembers the retrieved documents and tool results of sampled
// traces and joins them into held generations' cases at dispatch. Context
// spans are only read: they pass through at once and unchanged.
type traceJoin struct {
	ix    *tracecontext.Index
	scope tracecontext.Scope
	// waiters are the scorers that read context (hallucination, a
	// criteria scorer with the context field) and take it from the
	// trace: only for them does a generation without context wait.
	waiters []ScorerConfig
	// maxChars bounds the joined documents' total length (max_input_chars;
	// 0: no bound beyond the index's own).
	maxChars int
	// trajectories are the scorers that judge agent runs' trajectories
	// (tracejoin.go); only with one does the index keep step records.
	trajectories []ScorerConfig
	tel          *telemetry
}

func newTraceJoin(cfg *Config, tel *telemetry) (*traceJoin, error) {
	ix, err := tracecontext.New(cfg.TraceContext.indexConfig())
	if err != nil {
		return nil, err
	}
	j := &traceJoin{ix: ix, scope: cfg.TraceContext.scope(), maxChars: cfg.MaxInputChars, tel: tel,
		trajectories: trajectoryScorers(cfg.Scorers)}
	for _, sc := range cfg.Scorers {
		if scorerReadsContext(sc) && sc.takesContextFrom(contextSourceTrace) {
			j.waiters = append(j.waiters, sc)
		}
	}
	return j, nil
}

// scorerReadsContext says whether a scorer judges the answer against
// retrieved context.
func scorerReadsContext(sc ScorerConfig) bool {
	return sc.When.ContextPresent || slices.Contains(scoring.ContextNames(), sc.Name) || (sc.isCriteria() && slices.Contains(sc.Fields, string(scoring.FieldContext)))
}

// indexSpan adds a GenAI span of a sampled trace to the index, with its
// step record when a scorer judges trajectories, and reports whether its
// trace gained context or steps. A candidate (cand, else nil) read as a
// step keeps what was read, so it is read once.
func (j *traceJoin) indexSpan(kind genai.Kind, span ptrace.Span, cand *generationAt) bool {
	s := tracecontext.Span{
		TraceID: span.TraceID(), SpanID: span.SpanID(), ParentID: span.ParentSpanID(),
		Start: span.StartTimestamp(), End: span.EndTimestamp(),
	}
	if kind == genai.KindContext {
		src := genai.ReadContext(span)
		s.Role, s.Texts = src.Role, src.Texts
	}
	if j.readsSteps() {
		var st genai.Step
		ok := false
		if cand != nil {
			var gen genai.Generation
			if cand.agent {
				gen, st, ok = genai.ReadAgentWithStep(span)
			} else {
				gen, st, ok = genai.ReadWithStep(span)
			}
			cand.gen = &gen
		} else {
			st, ok = genai.ReadStep(kind, span)
		}
		if ok {
			s.Step = &st
		}
	}
	return j.ix.Add(s)
}

// readsSteps says whether spans are read as steps of agent runs: only
// when a scorer judges trajectories.
func (j *traceJoin) readsSteps() bool { return len(j.trajectories) > 0 }

// withTraceDocs appends the documents of the trace that count for the
// span under scope to own, de-duplicated and bounded by max_input_chars in
// total, and says where the context came from.
func (j *traceJoin) withTraceDocs(own, docs []string) ([]string, string) {
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
		return out, joinSourceTrace
	case len(own) > 0:
		return own, joinSourceSpan
	}
	return nil, joinSourceNone
}

// judgesTrajectory says whether a trajectory scorer applies to an agent
// span whose per-scorer filters left out the excluded scorers.
func (j *traceJoin) judgesTrajectory(excluded map[string]bool) bool {
	return j != nil && slices.ContainsFunc(j.trajectories, func(sc ScorerConfig) bool { return sc.appliesTo(targetAgent, excluded) })
}

// heldForTrajectory says why an agent span without readable content is
// held anyway, or "": a trajectory scorer judges it, since its run's steps
// are in the trace. It then clears gen.Missing; the span's other scorers
// find it not scorable, or skip it (resultUpFront, skips). Admission and
// recovery from storage both decide this way.
func (j *traceJoin) heldForTrajectory(agent bool, gen *genai.Generation, excluded map[string]bool) string {
	if !agent || gen.Missing == "" || !j.judgesTrajectory(excluded) {
		return ""
	}
	missing := gen.Missing
	gen.Missing = ""
	return missing
}

// generationAt is where a sampled generation span sits in its batch.
type generationAt struct {
	resource, scope, span int
	agent                 bool // an agent span, scored by scorers targeting agent
	// gen is the generation when indexing it as a step read it already.
	gen *genai.Generation
}

// readsTrajectory says whether a scorer judges an agent run's trajectory:
// task_completion, tool_use, or a checks scorer with a trajectory rule.
func readsTrajectory(sc ScorerConfig) bool {
	if slices.Contains(scoring.TrajectoryNames(), sc.Name) {
		return true
	}
	if !sc.isChecks() {
		return false
	}
	return slices.ContainsFunc(sc.Rules, func(r scoring.CheckRule) bool { return scoring.TrajectoryRule(r.Type) })
}

// trajectoryScorers are the scorers that judge the trajectories of agent
// spans. Only when there is one does the processor read step records.
func trajectoryScorers(scorers []ScorerConfig) []ScorerConfig {
	var out []ScorerConfig
	for _, sc := range scorers {
		if readsTrajectory(sc) && sc.hasTarget(targetAgent) {
			out = append(out, sc)
		}
	}
	return out
}

// scorerWaits says whether a scorer's evaluation waits (context_wait) while
// its item waits: scorers that read context wait for it, trajectory
// scorers for the agent run's steps.
func scorerWaits(sc ScorerConfig) bool {
	return scorerReadsContext(sc) || readsTrajectory(sc)
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
