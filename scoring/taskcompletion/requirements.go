package taskcompletion

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
)

// RequirementLister asks the judge for the requirements of a request: one
// call, plus one re-ask when the reply cannot be used. It sends the
// request and its conversation as given; the task_completion scorer
// passes them redacted and cut to MaxInputChars.
type RequirementLister struct {
	judge scoring.Judge
	now   func() time.Time
}

var _ scoring.RequirementLister = (*RequirementLister)(nil)

// NewRequirementLister returns a lister that asks judge. It reports a nil
// judge.
func NewRequirementLister(judge scoring.Judge) (*RequirementLister, error) {
	if judge == nil {
		return nil, errors.New("requirement lister: judge is nil")
	}
	return &RequirementLister{judge: judge, now: time.Now}, nil
}

// maxRequirements bounds the requirements a task is split into; the
// prompt asks for at most 10, a reply with more than this is re-asked.
const maxRequirements = 20

// ListRequirements asks the judge for the requirements of req, read with
// the conversation before it. A blank request makes no call and has none.
// The error is an *scoring.Error with Step StepPreprocess; the
// requirements returned with it still carry the calls' Usage.
func (l *RequirementLister) ListRequirements(ctx context.Context, req scoring.TaskRequest) (scoring.TaskRequirements, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	out := scoring.TaskRequirements{Requirements: []string{}}
	if strings.TrimSpace(req.Request) == "" {
		return out, nil
	}
	x := pipeline.Exchange{Judge: l.judge, Now: l.now, Usage: &out.Usage}
	err := x.Ask(ctx, scoring.StepPreprocess, taskPrompt, taskData(req), func(reply string) error {
		task, perr := parseTaskRequirements(reply)
		if perr == nil {
			out.Task, out.Requirements = task.Task, task.Requirements
		}
		return perr
	})
	return out, err
}

// taskData is what the preprocess prompt is built from.
func taskData(req scoring.TaskRequest) pipeline.PromptData {
	return pipeline.PromptData{Scorer: scoring.TaskCompletion, Turns: pipeline.HistoryLines(req.History), Input: req.Request}
}

// parseTaskRequirements parses a task_completion preprocess reply. A task
// with no requirements listed becomes its own single requirement; an empty
// task with no requirements means the judge found none. Repeated
// requirements are kept once.
func parseTaskRequirements(reply string) (scoring.TaskRequirements, error) {
	v, err := pipeline.ExtractJSON(reply, schemaTask)
	if err != nil {
		return scoring.TaskRequirements{}, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return scoring.TaskRequirements{}, fmt.Errorf(`the reply must be a JSON object with "task" and "requirements", got %s`, pipeline.JSONKind(v))
	}
	var out scoring.TaskRequirements
	raw, ok := pipeline.Lookup(m, "task", "goal")
	if !ok {
		return scoring.TaskRequirements{}, errors.New(`the reply has no "task"`)
	}
	if s, isString := raw.(string); isString {
		out.Task = strings.TrimSpace(s)
	} else if raw != nil {
		return scoring.TaskRequirements{}, fmt.Errorf(`the "task" must be a string, got %s`, pipeline.JSONKind(raw))
	}
	if raw, ok := pipeline.Lookup(m, "requirements", "subtasks", "parts"); ok && raw != nil {
		list, isList := raw.([]any)
		if !isList {
			if s, isString := raw.(string); isString {
				list = []any{s}
			} else {
				return scoring.TaskRequirements{}, fmt.Errorf(`the "requirements" must be a list of strings, got %s`, pipeline.JSONKind(raw))
			}
		}
		seen := map[string]bool{}
		for i, it := range list {
			s, isString := it.(string)
			if !isString {
				return scoring.TaskRequirements{}, fmt.Errorf(`item %d of "requirements" must be a string, got %s`, i+1, pipeline.JSONKind(it))
			}
			s = strings.TrimSpace(s)
			if key := pipeline.StatementKey(s); key != "" && !seen[key] {
				seen[key] = true
				out.Requirements = append(out.Requirements, s)
			}
		}
	}
	if len(out.Requirements) > maxRequirements {
		return scoring.TaskRequirements{}, fmt.Errorf(`the "requirements" list has %d items; list at most 10`, len(out.Requirements))
	}
	if len(out.Requirements) == 0 && out.Task != "" {
		out.Requirements = []string{out.Task}
	}
	if out.Requirements == nil {
		out.Requirements = []string{}
	}
	return out, nil
}
