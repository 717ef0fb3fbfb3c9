package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"errors"
	"slices"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/checks"
	"github.com/llm-eval/llm_eval/scoring/scorers"
)

// evalResult is one scorer's finished evaluation of one item.
type evalResult = evalstore.Result

// errorResult is a failed evaluation of type t.
func errorResult(t scoring.ErrorType, err error) scoring.Result { return evalstore.ErrorResult(t, err) }

// marker is the result written for every scorer of an item that is not
// evaluated, and why it is unscored; record counts the results too.
type marker struct {
	res    scoring.Result
	reason string
	record bool
}

// notScorable marks an item that cannot be scored: counted as results.
func notScorable(reason string) marker {
	return marker{res: scoring.Result{Label: scoring.LabelNotScorable, Reason: reason}, reason: reasonNotScorable, record: true}
}

// refused marks an item the store did not take (queue full, shut down) of
// a signal whose items are named what; nothing else is marked.
func refused(res evalstore.AdmitResult, what string) marker {
	switch res {
	case evalstore.RejectedFull:
		return marker{res: errorResult(scoring.ErrorQueueFull, errors.New("queue_size "+what+" were already waiting for results")), reason: reasonQueueFull}
	case evalstore.RejectedClosed:
		return marker{res: errorResult(scoring.ErrorShutdown, errors.New("the processor was shutting down")), reason: reasonShutdown}
	}
	return marker{}
}

// evalScorers are what the store and its subjects see of the configured
// scorers, in their order; Start sets each one's Run.
func evalScorers(scorers []ScorerConfig) []evalstore.Scorer {
	out := make([]evalstore.Scorer, len(scorers))
	for i, sc := range scorers {
		out[i] = evalstore.Scorer{
			Name:                  sc.Name,
			Generation:            sc.hasTarget(targetGeneration),
			Agent:                 sc.hasTarget(targetAgent),
			Conversation:          sc.hasTarget(targetConversation),
			Instructions:          sc.Instructions,
			UseSystemInstructions: sc.UseSystemInstructions,
			ContextPresent:        sc.When.ContextPresent,
			FromToolMessages:      sc.takesContextFrom(contextSourceToolMessages),
			FromTrace:             sc.takesContextFrom(contextSourceTrace),
			FromSystem:            sc.takesContextFrom(contextSourceSystem),
			ReadsContext:          scorerReadsContext(sc),
			ReadsTrajectory:       readsTrajectory(sc),
		}
	}
	return out
}

// compileScorerSelection compiles the include/exclude and the sampling of
// each scorer that has one.
func compileScorerSelection(scorers []ScorerConfig) (scorerSelection, error) {
	var out scorerSelection
	for _, sc := range scorers {
		if p := sc.Sampling; p != nil && p.Percentage < 100 {
			if out.samplers == nil {
				out.samplers = map[string]traceSampler{}
			}
			out.samplers[sc.Name] = newTraceSampler(p.Percentage)
		}
		f, err := sc.SpanFilterConfig.compile()
		if err != nil {
			return scorerSelection{}, err
		}
		if f.empty() {
			continue
		}
		if out.filters == nil {
			out.filters = map[string]spanFilter{}
		}
		out.filters[sc.Name] = f
	}
	return out, nil
}

// scorerReadsContext says whether a scorer judges the answer against
// retrieved context.
func scorerReadsContext(sc ScorerConfig) bool {
	return sc.When.ContextPresent || slices.Contains(scorers.ContextNames(), sc.scorerType()) || (sc.isCriteria() && slices.Contains(sc.Fields, string(scoring.FieldContext)))
}

// readsTrajectory says whether a scorer judges an agent run's trajectory:
// task_completion, tool_use, or a checks scorer with a trajectory rule.
func readsTrajectory(sc ScorerConfig) bool {
	if slices.Contains(scorers.TrajectoryNames(), sc.scorerType()) {
		return true
	}
	if !sc.isChecks() {
		return false
	}
	return slices.ContainsFunc(sc.Rules, func(r checks.Rule) bool { return checks.TrajectoryRule(r.Type) })
}
