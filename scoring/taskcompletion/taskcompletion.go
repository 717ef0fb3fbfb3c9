// Package taskcompletion is the task completion scorer for agent runs,
// modelled on deepeval's task completion and free of references: the judge
// works out the requirements of the run's request, from the request and
// the conversation before it alone, then decides for each whether the run
// accomplished it. Every requirement is one the run must meet: the score
// is the share met, halved when any was missed. Higher is better.
package taskcompletion

import (
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
)

// Schema names of the task completion scorer's replies.
const (
	SchemaTask     = "task_completion_task"
	SchemaVerdicts = "task_completion_verdicts"
)

// Verdicts is the task_completion scorer's analyze result: one entry per
// requirement.
type Verdicts struct {
	Verdicts []Verdict `json:"verdicts"`
	// Reordered is set when the judge returned the verdicts in another
	// order than the requirements; they were matched by the requirement
	// each repeated.
	Reordered bool `json:"reordered,omitempty"`
}

// Verdict judges one requirement: Verdict "yes" means the run
// accomplished it, "no" that it did not, "n/a" that the steps left out to
// bound the run would decide it, so it is not counted. Main marks the
// request's main requirement.
type Verdict struct {
	Requirement string `json:"requirement"`
	Main        bool   `json:"main,omitempty"`
	Verdict     string `json:"verdict"`
	Reason      string `json:"reason"`
}

//go:embed *.tmpl
var templates embed.FS

var (
	taskPrompt     = &pipeline.Prompt{Schema: schemaTask, User: taskMessage, Demo: demoTask}
	verdictsPrompt = &pipeline.Prompt{
		Schema: pipeline.ItemsSchema(SchemaVerdicts, "verdicts",
			pipeline.Property{Name: "requirement"},
			pipeline.Property{Name: "verdict", Enum: []string{pipeline.VerdictYes, pipeline.VerdictNo, pipeline.VerdictNA}}),
		User: verdictsMessage,
		Demo: demoVerdicts,
	}
)

// Definition is the task completion scorer.
var Definition = pipeline.Definition{
	Name:       scoring.TaskCompletion,
	Sends:      []scoring.Field{scoring.FieldInput, scoring.FieldOutput, scoring.FieldTurns},
	Trajectory: true,
	History:    true,
	Prompts:    pipeline.NewPrompts(templates, nil, taskPrompt, verdictsPrompt),
	Run:        run,
}

// New returns the task completion scorer, asking judge. Without
// Options.Requirements it asks judge for a request's requirements on
// every run.
func New(judge scoring.Judge, opts scoring.Options) (scoring.Scorer, error) {
	return pipeline.New(Definition, judge, opts)
}

// verdictSpec reads task_completion verdicts; n/a is allowed only when
// steps of the run were left out.
func verdictSpec(omissions bool) pipeline.VerdictSpec {
	return pipeline.VerdictSpec{Schema: verdictsPrompt.Schema, Field: "verdicts", Keys: []string{"verdict", "result"}, AllowNA: omissions, Unit: "requirement", Echo: "requirement"}
}

// run is the task_completion pipeline. The preprocess step works out the
// requirements from the request and the conversation before it
// (Options.Requirements, which may answer from a cache, else the scorer's
// judge); the analyze step judges each of them against the conversation,
// the trajectory and the final answer. Every requirement is one the run
// must meet (each deliverable, and who, what, when and how many as asked):
// the score is the share met, halved when any was missed, so a run that
// broke one fails at the default threshold however many it met;
// requirements that only left-out steps could decide are not counted. A
// case without a trajectory, without a request, or whose request asks for
// nothing, is not scorable.
func run(e *pipeline.Evaluation) {
	if !pipeline.HasSteps(e.Case.Trajectory) {
		e.NotScorable("The case has no trajectory: task_completion judges the steps of an agent run, and this case records none.")
		return
	}
	if strings.TrimSpace(e.Case.Input) == "" {
		e.NotScorable("The run has no request, so there is no task to check it against.")
		return
	}
	task, ok := requirements(e)
	if !ok {
		return
	}
	if len(task.Requirements) == 0 {
		e.NotScorable("The judge found no task in the run's request, so there is nothing to check the run against.")
		return
	}
	omissions := e.Omissions()
	verdicts, reordered, ok := e.JudgeItems(verdictsPrompt, pipeline.PromptData{
		Turns:      pipeline.HistoryLines(e.Case.Turns),
		Input:      e.Case.Input,
		Output:     e.Case.Output,
		Trajectory: e.TrajectoryLines(),
		Items:      task.Requirements,
		Omissions:  omissions,
	}, verdictSpec(omissions))
	if !ok {
		return
	}
	result := Verdicts{Verdicts: make([]Verdict, len(verdicts)), Reordered: reordered}
	forJudge := make([]any, 0, len(verdicts))
	counted, met := 0, 0
	var unmet, unjudged []string
	for i, v := range verdicts {
		rv := Verdict{Requirement: task.Requirements[i], Main: i == 0, Verdict: v.Verdict, Reason: v.Reason}
		result.Verdicts[i] = rv
		forJudge = append(forJudge, rv)
		switch {
		case v.Verdict == pipeline.VerdictNA:
			unjudged = append(unjudged, task.Requirements[i])
			continue
		case pipeline.IsYes(v.Verdict):
			met++
		default:
			unmet = append(unmet, cmp.Or(v.Reason, task.Requirements[i]))
		}
		counted++
	}
	e.Result.Steps.Analyze = result
	if counted == 0 {
		e.NotScorable("Every requirement of the task would be decided by steps left out to bound the run, so none could be judged.")
		return
	}
	if met < counted {
		// A requirement missed is a request not served as asked: half the
		// share met, below the default threshold however many were met.
		e.ScoreRatio(met, 2*counted)
	} else {
		e.ScoreRatio(met, counted)
	}
	e.Reason(forJudge, func() string {
		score := pipeline.FormatScore(e.Result.Score)
		var b strings.Builder
		switch {
		case met == counted:
			fmt.Fprintf(&b, "The score is %s because the run accomplished all %d judged %s of the task",
				score, counted, pipeline.Plural(counted, "requirement", "requirements"))
		case met == 0:
			fmt.Fprintf(&b, "The score is %s because the run accomplished none of the %d judged %s: %s",
				score, counted, pipeline.Plural(counted, "requirement", "requirements"), pipeline.JoinReasons(unmet))
		default:
			fmt.Fprintf(&b, "The score is %s because the run accomplished %d of %d judged %s, and a missed one halves the share: %s",
				score, met, counted, pipeline.Plural(counted, "requirement", "requirements"), pipeline.JoinReasons(unmet))
		}
		if len(unjudged) > 0 {
			fmt.Fprintf(&b, "; not judged because steps were left out: %s", strings.Join(unjudged, "; "))
		}
		b.WriteString(".")
		return b.String()
	})
}

// requirements works out the case's requirements from its request and
// the conversation before it, adding the calls' cost to the result. It
// reports false when the evaluation failed.
func requirements(e *pipeline.Evaluation) (scoring.TaskRequirements, bool) {
	opts := e.Options()
	req := scoring.TaskRequest{History: e.Case.Turns, Request: e.Case.Input}
	if opts.Verbose {
		if msgs, err := taskPrompt.Render(taskData(req)); err == nil {
			e.KeepPrompt(scoring.StepPreprocess, msgs)
		}
	}
	lister := opts.Requirements
	if lister == nil {
		lister = &RequirementLister{judge: e.Judge(), now: e.Now}
	}
	task, err := safeListRequirements(e.Context(), lister, req)
	e.Result.Usage.Add(task.Usage)
	task.Usage = scoring.Usage{}
	if err != nil {
		e.FailCall(scoring.StepPreprocess, err)
		return scoring.TaskRequirements{}, false
	}
	e.Result.Steps.Preprocess = task
	return task, true
}

// safeListRequirements calls the lister, turning a panic into an error.
func safeListRequirements(ctx context.Context, l scoring.RequirementLister, req scoring.TaskRequest) (t scoring.TaskRequirements, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &scoring.Error{Type: scoring.ErrorInvalidCase, Step: scoring.StepPreprocess, Err: fmt.Errorf("requirement lister panicked: %v", r)}
		}
	}()
	return l.ListRequirements(ctx, req)
}

var schemaTask = &scoring.Schema{Name: SchemaTask, Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "task": {"type": "string"},
    "requirements": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["task", "requirements"],
  "additionalProperties": false
}`)}

// taskMessage sends the task, the same in every call, then the request;
// a request that came in a conversation is told so last.
func taskMessage(b []byte, d pipeline.PromptData) ([]byte, error) {
	b = append(b, "Work out what this request asks the agent to do.\n\n"...)
	b, err := pipeline.AppendHistory(b, d)
	if err != nil {
		return nil, err
	}
	b = pipeline.AppendText(b, "INPUT", d.Input)
	if len(d.Turns) > 0 {
		b = append(b, "\n\nRead the request with the conversation before it."...)
	}
	return b, nil
}

// verdictsMessage sends the requirements and the run, then the task, which
// names their number: what differs between calls comes last.
func verdictsMessage(b []byte, d pipeline.PromptData) ([]byte, error) {
	b = pipeline.AppendList(b, "REQUIREMENTS", d.Items)
	b = append(b, "\n\n"...)
	b, err := pipeline.AppendRun(b, d)
	if err != nil {
		return nil, err
	}
	n := strconv.Itoa(len(d.Items))
	b = append(b, "\n\nJudge whether this agent run accomplished each of these "+n+" requirements of its request. Return exactly "+n+" verdicts."...)
	if d.Omissions {
		b = append(b, " Steps of the run were left out: answer \"n/a\" for a requirement that only they could decide."...)
	}
	return b, nil
}
