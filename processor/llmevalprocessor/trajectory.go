package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"slices"
	"time"

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

// scorerWaits says whether a scorer's evaluation waits (context_wait) while
// its item waits: scorers that read context wait for it, trajectory
// scorers for the agent run's steps.
func scorerWaits(sc ScorerConfig) bool {
	return scorerReadsContext(sc) || readsTrajectory(sc)
}
