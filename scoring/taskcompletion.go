package scoring

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
)

// TaskOutcome is the task_completion scorer's preprocess result: what the
// user wanted, split into requirements, and what the run achieved.
type TaskOutcome struct {
	Task         string   `json:"task"`
	Requirements []string `json:"requirements"`
	Outcome      string   `json:"outcome"`
}

// RequirementVerdicts is the task_completion scorer's analyze result: one
// entry per requirement.
type RequirementVerdicts struct {
	Verdicts []RequirementVerdict `json:"verdicts"`
	// Reordered is set when the judge returned the verdicts in another
	// order than the requirements; they were matched by the requirement
	// each repeated.
	Reordered bool `json:"reordered,omitempty"`
}

// RequirementVerdict judges one requirement; Verdict "yes" means the run
// accomplished it.
type RequirementVerdict struct {
	Requirement string `json:"requirement"`
	Verdict     string `json:"verdict"`
	Reason      string `json:"reason"`
}

// maxRequirements bounds the requirements a task is split into; the
// prompt asks for at most 10, a reply with more than this is re-asked.
const maxRequirements = 20

var requirementVerdictSpec = verdictSpec{schema: schemaTaskCompletionVerdicts, field: "verdicts", keys: []string{"verdict", "result"}, unit: "requirement", echo: "requirement"}

// runTaskCompletion is the task_completion pipeline: the judge works out
// the task (split into requirements) and the outcome of the run from its
// request, trajectory and final answer, then decides for each requirement
// whether the outcome accomplishes it. Score = accomplished / requirements
// × scale. A case without a trajectory, or whose run shows no task, is not
// scorable.
func runTaskCompletion(e *evaluation) {
	if e.c.Trajectory.empty() {
		e.notScorable("The case has no trajectory: task_completion judges the steps of an agent run, and this case records none.")
		return
	}
	msgs, err := render(SchemaTaskCompletionTask, promptData{
		Scorer:     TaskCompletion,
		Input:      e.c.Input,
		Output:     e.c.Output,
		Trajectory: trajectoryLines(e.c.Trajectory),
	})
	if err != nil {
		e.fail(&Error{Type: ErrorInvalidCase, Step: StepPreprocess, Err: err})
		return
	}
	var task TaskOutcome
	if err := e.ask(StepPreprocess, schemaTaskCompletionTask, msgs, func(reply string) error {
		var perr error
		task, perr = parseTaskOutcome(reply)
		return perr
	}); err != nil {
		e.fail(err)
		return
	}
	e.res.Steps.Preprocess = task
	if len(task.Requirements) == 0 {
		e.notScorable("The judge found no task in the run's request or steps, so there is nothing to check the outcome against.")
		return
	}

	msgs, err = render(SchemaTaskCompletionVerdicts, promptData{
		Scorer:  TaskCompletion,
		Task:    task.Task,
		Outcome: task.Outcome,
		Items:   task.Requirements,
	})
	if err != nil {
		e.fail(&Error{Type: ErrorInvalidCase, Step: StepAnalyze, Err: err})
		return
	}
	var verdicts []judged
	var reordered bool
	if err := e.ask(StepAnalyze, schemaTaskCompletionVerdicts, msgs, func(reply string) error {
		parsed, perr := parseVerdicts(reply, requirementVerdictSpec, len(task.Requirements))
		if perr != nil {
			return perr
		}
		verdicts, reordered, perr = matchStatements(parsed, task.Requirements, requirementVerdictSpec)
		return perr
	}); err != nil {
		e.fail(err)
		return
	}
	result := RequirementVerdicts{Verdicts: make([]RequirementVerdict, len(verdicts)), Reordered: reordered}
	met := 0
	var unmet []string
	forJudge := make([]any, 0, len(verdicts)+1)
	forJudge = append(forJudge, struct {
		Task    string `json:"task"`
		Outcome string `json:"outcome"`
	}{task.Task, task.Outcome})
	for i, v := range verdicts {
		rv := RequirementVerdict{Requirement: task.Requirements[i], Verdict: v.Verdict, Reason: v.Reason}
		result.Verdicts[i] = rv
		forJudge = append(forJudge, rv)
		if isYes(v.Verdict) {
			met++
		} else {
			unmet = append(unmet, cmp.Or(v.Reason, task.Requirements[i]))
		}
	}
	e.res.Steps.Analyze = result
	n := len(task.Requirements)
	e.scoreRatio(met, n)
	e.reason(forJudge, func() string {
		if met == n {
			return fmt.Sprintf("The score is %s because the run accomplished all %d %s of the task.",
				formatScore(e.res.Score), n, plural(n, "requirement", "requirements"))
		}
		return fmt.Sprintf("The score is %s because the run accomplished %d of %d %s of the task: %s.",
			formatScore(e.res.Score), met, n, plural(n, "requirement", "requirements"), joinReasons(unmet))
	})
}

// parseTaskOutcome parses a task_completion preprocess reply. A task with
// no requirements listed becomes its own single requirement; an empty task
// with no requirements means the judge found none.
func parseTaskOutcome(reply string) (TaskOutcome, error) {
	v, err := extractJSON(reply, schemaTaskCompletionTask)
	if err != nil {
		return TaskOutcome{}, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return TaskOutcome{}, fmt.Errorf(`the reply must be a JSON object with "task", "requirements" and "outcome", got %s`, jsonKind(v))
	}
	var out TaskOutcome
	raw, ok := lookup(m, "task", "goal")
	if !ok {
		return TaskOutcome{}, errors.New(`the reply has no "task"`)
	}
	if s, isString := raw.(string); isString {
		out.Task = strings.TrimSpace(s)
	} else if raw != nil {
		return TaskOutcome{}, fmt.Errorf(`the "task" must be a string, got %s`, jsonKind(raw))
	}
	if raw, ok := lookup(m, "outcome", "task_outcome"); ok {
		s, isString := raw.(string)
		if !isString && raw != nil {
			return TaskOutcome{}, fmt.Errorf(`the "outcome" must be a string, got %s`, jsonKind(raw))
		}
		out.Outcome = strings.TrimSpace(s)
	} else {
		return TaskOutcome{}, errors.New(`the reply has no "outcome"`)
	}
	if raw, ok := lookup(m, "requirements", "subtasks", "parts"); ok && raw != nil {
		list, isList := raw.([]any)
		if !isList {
			if s, isString := raw.(string); isString {
				list = []any{s}
			} else {
				return TaskOutcome{}, fmt.Errorf(`the "requirements" must be a list of strings, got %s`, jsonKind(raw))
			}
		}
		for i, it := range list {
			s, isString := it.(string)
			if !isString {
				return TaskOutcome{}, fmt.Errorf(`item %d of "requirements" must be a string, got %s`, i+1, jsonKind(it))
			}
			if s = strings.TrimSpace(s); s != "" {
				out.Requirements = append(out.Requirements, s)
			}
		}
	}
	if len(out.Requirements) > maxRequirements {
		return TaskOutcome{}, fmt.Errorf(`the "requirements" list has %d items; list at most 10`, len(out.Requirements))
	}
	if len(out.Requirements) == 0 && out.Task != "" {
		out.Requirements = []string{out.Task}
	}
	if out.Requirements == nil {
		out.Requirements = []string{}
	}
	return out, nil
}
