package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"slices"

	"github.com/llm-eval/llm_eval/scoring"
)

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
