package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"slices"
	"time"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/trajectory"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/guard"
)

// Bounds of the task_completion requirement cache, one per processor. Each
// entry is at most 20 short requirements of one request; an agent serves
// many distinct requests, so entries are many and small.
const (
	requirementCacheSize = 4096
	requirementCacheTTL  = time.Hour
)

// requirementLister returns the lister every task_completion scorer of
// the processor shares: it asks the same guarded judge the scorers ask and
// keeps each request's requirements by the request's hash, so the runs of
// one request are measured against one list. The scorer sends it the
// request already redacted and cut to max_input_chars.
func (js *judgeSet) requirementLister(judge scoring.Judge) (scoring.RequirementLister, error) {
	if js.requirements == nil {
		lister, err := scoring.NewRequirementLister(judge)
		if err != nil {
			return nil, err
		}
		if js.requirements, err = guard.NewRequirementCache(lister, guard.CacheConfig{Size: requirementCacheSize, TTL: requirementCacheTTL}); err != nil {
			return nil, err
		}
	}
	return js.requirements, nil
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
		h.trajectory, _ = trajectory.Build(h.join.ix.StepsBelow(h.of.traceID, h.of.spanID))
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
	return trajectory.Pending(h.join.ix.StepsBelow(h.of.traceID, h.of.spanID))
}

// scorerWaits says whether a scorer's evaluation waits (context_wait) while
// its item waits: scorers that read context wait for it, trajectory
// scorers for the agent run's steps.
func scorerWaits(sc ScorerConfig) bool {
	return scorerReadsContext(sc) || readsTrajectory(sc)
}

// resultUpFront implements upFrontResulter: an agent span without readable
// content is held for its trajectory scorers alone, and every other scorer
// finds it not scorable, as it would have without them (one whose answer
// is only tool calls is skipped by them instead, skips).
func (h *heldSpan) resultUpFront(sc ScorerConfig) (scoring.Result, bool) {
	if h.missing == "" || readsTrajectory(sc) {
		return scoring.Result{}, false
	}
	return scoring.Result{Scorer: sc.Name, Label: scoring.LabelNotScorable, Reason: h.missing}, true
}
