package scoring

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// TaskRequirements is what a request asks an agent to do: the task in one
// sentence and the separate requirements it must meet, the first being
// the main one (the action or answer without which the request is not
// served). It comes from the request alone, so the same request is always
// measured against the same requirements.
type TaskRequirements struct {
	Task         string   `json:"task"`
	Requirements []string `json:"requirements"`
	// Cached is set when a cache answered (stored requirements, or those
	// of an identical request in flight); Usage is then zero.
	Cached bool `json:"cached,omitempty"`
	// Usage is the cost of the judge calls made for these requirements.
	Usage Usage `json:"-"`
}

// RequirementLister works out the requirements of a request.
// *TaskRequirementLister asks the judge; guard.RequirementCache wraps one
// with a cache keyed by the request's hash.
type RequirementLister interface {
	ListRequirements(ctx context.Context, request string) (TaskRequirements, error)
}

// TaskRequirementLister asks the judge for the requirements of a request:
// one call, plus one re-ask when the reply cannot be used. It sends the
// request as given; the task_completion scorer passes it redacted and cut
// to MaxInputChars.
type TaskRequirementLister struct {
	judge Judge
	now   func() time.Time
}

var _ RequirementLister = (*TaskRequirementLister)(nil)

// NewRequirementLister returns a lister that asks judge. It reports a nil
// judge.
func NewRequirementLister(judge Judge) (*TaskRequirementLister, error) {
	if judge == nil {
		return nil, errors.New("requirement lister: judge is nil")
	}
	return &TaskRequirementLister{judge: judge, now: time.Now}, nil
}

// ListRequirements asks the judge for the requirements of request. A blank
// request makes no call and has none. The error is an *Error with Step
// StepPreprocess; the requirements returned with it still carry the calls'
// Usage.
func (l *TaskRequirementLister) ListRequirements(ctx context.Context, request string) (TaskRequirements, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	out := TaskRequirements{Requirements: []string{}}
	if strings.TrimSpace(request) == "" {
		return out, nil
	}
	msgs, err := render(SchemaTaskCompletionTask, promptData{Scorer: TaskCompletion, Input: request})
	if err != nil {
		return out, &Error{Type: ErrorInvalidCase, Step: StepPreprocess, Err: err}
	}
	x := exchange{ctx: ctx, judge: l.judge, now: l.now, usage: &out.Usage}
	err = x.ask(StepPreprocess, schemaTaskCompletionTask, msgs, func(reply string) error {
		task, perr := parseTaskRequirements(reply)
		if perr == nil {
			out.Task, out.Requirements = task.Task, task.Requirements
		}
		return perr
	})
	return out, err
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

// RequirementVerdict judges one requirement: Verdict "yes" means the run
// accomplished it, "no" that it did not, "n/a" that the steps left out to
// bound the run would decide it, so it is not counted. Main marks the
// request's main requirement.
type RequirementVerdict struct {
	Requirement string `json:"requirement"`
	Main        bool   `json:"main,omitempty"`
	Verdict     string `json:"verdict"`
	Reason      string `json:"reason"`
}

// maxRequirements bounds the requirements a task is split into; the
// prompt asks for at most 10, a reply with more than this is re-asked.
const maxRequirements = 20

// requirementVerdictSpec reads task_completion verdicts; n/a is allowed
// only when steps of the run were left out.
func requirementVerdictSpec(omissions bool) verdictSpec {
	return verdictSpec{schema: schemaTaskCompletionVerdicts, field: "verdicts", keys: []string{"verdict", "result"}, allowNA: omissions, unit: "requirement", echo: "requirement"}
}

// runTaskCompletion is the task_completion pipeline. The preprocess step
// works out the requirements from the request alone (Options.Requirements,
// which may answer from a cache, else the scorer's judge); the analyze
// step judges each of them against the request, the trajectory and the
// final answer. The main requirement weighs as much as all the others
// together plus one, so a run whose main requirement failed scores below
// half the scale however many minor ones it met; requirements that only
// left-out steps could decide are not counted. A case without a
// trajectory, without a request, or whose request asks for nothing, is
// not scorable.
func runTaskCompletion(e *evaluation) {
	if e.c.Trajectory.empty() {
		e.notScorable("The case has no trajectory: task_completion judges the steps of an agent run, and this case records none.")
		return
	}
	if strings.TrimSpace(e.c.Input) == "" {
		e.notScorable("The run has no request, so there is no task to check it against.")
		return
	}
	task, ok := e.requirements()
	if !ok {
		return
	}
	if len(task.Requirements) == 0 {
		e.notScorable("The judge found no task in the run's request, so there is nothing to check the run against.")
		return
	}
	omissions := e.c.Trajectory.hasOmissions()
	msgs, err := render(SchemaTaskCompletionVerdicts, promptData{
		Scorer:     TaskCompletion,
		Input:      e.c.Input,
		Output:     e.c.Output,
		Trajectory: trajectoryLines(e.c.Trajectory),
		Items:      task.Requirements,
		Omissions:  omissions,
	})
	if err != nil {
		e.fail(&Error{Type: ErrorInvalidCase, Step: StepAnalyze, Err: err})
		return
	}
	spec := requirementVerdictSpec(omissions)
	var verdicts []judged
	var reordered bool
	if err := e.ask(StepAnalyze, schemaTaskCompletionVerdicts, msgs, func(reply string) error {
		parsed, perr := parseVerdicts(reply, spec, len(task.Requirements))
		if perr != nil {
			return perr
		}
		verdicts, reordered, perr = matchStatements(parsed, task.Requirements, spec)
		return perr
	}); err != nil {
		e.fail(err)
		return
	}
	result := RequirementVerdicts{Verdicts: make([]RequirementVerdict, len(verdicts)), Reordered: reordered}
	forJudge := make([]any, 0, len(verdicts))
	counted, met := 0, 0
	mainCounted, mainMet := false, false
	var unmet, unjudged []string
	for i, v := range verdicts {
		rv := RequirementVerdict{Requirement: task.Requirements[i], Main: i == 0, Verdict: v.Verdict, Reason: v.Reason}
		result.Verdicts[i] = rv
		forJudge = append(forJudge, rv)
		switch {
		case v.Verdict == verdictNA:
			unjudged = append(unjudged, task.Requirements[i])
			continue
		case isYes(v.Verdict):
			met++
			mainMet = mainMet || i == 0
		default:
			unmet = append(unmet, cmp.Or(v.Reason, task.Requirements[i]))
		}
		counted++
		mainCounted = mainCounted || i == 0
	}
	e.res.Steps.Analyze = result
	if counted == 0 {
		e.notScorable("Every requirement of the task would be decided by steps left out to bound the run, so none could be judged.")
		return
	}
	// Weights: the main requirement counts as many times as there are
	// counted requirements, each other one once.
	total, earned := counted, met
	if mainCounted {
		total += counted - 1
		if mainMet {
			earned += counted - 1
		}
	}
	e.scoreRatio(earned, total)
	e.reason(forJudge, func() string {
		var b strings.Builder
		switch {
		case met == counted:
			fmt.Fprintf(&b, "The score is %s because the run accomplished all %d judged %s of the task",
				formatScore(e.res.Score), counted, plural(counted, "requirement", "requirements"))
		case mainCounted && !mainMet:
			fmt.Fprintf(&b, "The score is %s because the run did not accomplish the task's main requirement (%s), and %d of %d judged %s in all: %s",
				formatScore(e.res.Score), task.Requirements[0], met, counted, plural(counted, "requirement", "requirements"), joinReasons(unmet))
		default:
			fmt.Fprintf(&b, "The score is %s because the run accomplished the main requirement and %d of %d judged %s in all: %s",
				formatScore(e.res.Score), met, counted, plural(counted, "requirement", "requirements"), joinReasons(unmet))
		}
		if len(unjudged) > 0 {
			fmt.Fprintf(&b, "; not judged because steps were left out: %s", strings.Join(unjudged, "; "))
		}
		b.WriteString(".")
		return b.String()
	})
}

// requirements works out the case's requirements from its request, adding
// the calls' cost to the result. It reports false when the evaluation
// failed.
func (e *evaluation) requirements() (TaskRequirements, bool) {
	if e.s.opts.Verbose {
		if msgs, err := render(SchemaTaskCompletionTask, promptData{Scorer: TaskCompletion, Input: e.c.Input}); err == nil {
			e.keepPrompt(StepPreprocess, msgs)
		}
	}
	lister := e.s.opts.Requirements
	if lister == nil {
		lister = &TaskRequirementLister{judge: e.s.judge, now: e.s.now}
	}
	task, err := safeListRequirements(e.ctx, lister, e.c.Input)
	e.res.Usage.Add(task.Usage)
	task.Usage = Usage{}
	if err != nil {
		e.fail(judgeError(e.ctx, StepPreprocess, err))
		return TaskRequirements{}, false
	}
	e.res.Steps.Preprocess = task
	return task, true
}

// safeListRequirements calls the lister, turning a panic into an error.
func safeListRequirements(ctx context.Context, l RequirementLister, request string) (t TaskRequirements, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &Error{Type: ErrorInvalidCase, Step: StepPreprocess, Err: fmt.Errorf("requirement lister panicked: %v", r)}
		}
	}()
	return l.ListRequirements(ctx, request)
}

// parseTaskRequirements parses a task_completion preprocess reply. A task
// with no requirements listed becomes its own single requirement; an empty
// task with no requirements means the judge found none. Repeated
// requirements are kept once.
func parseTaskRequirements(reply string) (TaskRequirements, error) {
	v, err := extractJSON(reply, schemaTaskCompletionTask)
	if err != nil {
		return TaskRequirements{}, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return TaskRequirements{}, fmt.Errorf(`the reply must be a JSON object with "task" and "requirements", got %s`, jsonKind(v))
	}
	var out TaskRequirements
	raw, ok := lookup(m, "task", "goal")
	if !ok {
		return TaskRequirements{}, errors.New(`the reply has no "task"`)
	}
	if s, isString := raw.(string); isString {
		out.Task = strings.TrimSpace(s)
	} else if raw != nil {
		return TaskRequirements{}, fmt.Errorf(`the "task" must be a string, got %s`, jsonKind(raw))
	}
	if raw, ok := lookup(m, "requirements", "subtasks", "parts"); ok && raw != nil {
		list, isList := raw.([]any)
		if !isList {
			if s, isString := raw.(string); isString {
				list = []any{s}
			} else {
				return TaskRequirements{}, fmt.Errorf(`the "requirements" must be a list of strings, got %s`, jsonKind(raw))
			}
		}
		seen := map[string]bool{}
		for i, it := range list {
			s, isString := it.(string)
			if !isString {
				return TaskRequirements{}, fmt.Errorf(`item %d of "requirements" must be a string, got %s`, i+1, jsonKind(it))
			}
			s = strings.TrimSpace(s)
			if key := statementKey(s); key != "" && !seen[key] {
				seen[key] = true
				out.Requirements = append(out.Requirements, s)
			}
		}
	}
	if len(out.Requirements) > maxRequirements {
		return TaskRequirements{}, fmt.Errorf(`the "requirements" list has %d items; list at most 10`, len(out.Requirements))
	}
	if len(out.Requirements) == 0 && out.Task != "" {
		out.Requirements = []string{out.Task}
	}
	if out.Requirements == nil {
		out.Requirements = []string{}
	}
	return out, nil
}
