package taskcompletion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
)

func TestTaskCompletionScore(t *testing.T) {
	tests := []struct {
		verdicts []string
		opts     scoring.Options
		score    float64
		label    scoring.Label
	}{
		{[]string{"yes"}, scoring.Options{}, 1, scoring.LabelPass},
		{[]string{"yes", "yes", "yes"}, scoring.Options{}, 1, scoring.LabelPass},
		// Every requirement must be met: a missed one halves the share
		// met, so the run fails at the default threshold, whichever one
		// it was (the main one used to outweigh the others: 0.67, 0.6).
		{[]string{"yes", "no"}, scoring.Options{}, 0.25, scoring.LabelFail},
		{[]string{"yes", "no", "no"}, scoring.Options{}, 0.17, scoring.LabelFail},
		{[]string{"no", "yes"}, scoring.Options{}, 0.25, scoring.LabelFail},
		{[]string{"no", "no"}, scoring.Options{}, 0, scoring.LabelFail},
		{[]string{"yes", "yes", "yes", "yes", "yes", "yes", "yes", "yes", "yes", "no"}, scoring.Options{}, 0.45, scoring.LabelFail},
		{[]string{"yes", "yes", "no"}, scoring.Options{Scale: 10}, 3.33, scoring.LabelFail},
		// A lower threshold gives partial runs credit.
		{[]string{"yes", "yes", "no"}, scoring.Options{Threshold: testkit.Ptr(0.3)}, 0.33, scoring.LabelPass},
		{[]string{"yes", "no"}, scoring.Options{StrictMode: true}, 0, scoring.LabelFail},
		{[]string{"Yes.", "**YES**"}, scoring.Options{StrictMode: true}, 1, scoring.LabelPass},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.verdicts, ","), func(t *testing.T) {
			j := testkit.NewJudge(testkit.TaskReplies(tc.verdicts...))
			res := testkit.Scorer(t, New, j, tc.opts).Score(context.Background(), testkit.AgentCase())
			require.NoError(t, res.Err)
			assert.InDelta(t, tc.score, res.Score, 1e-12)
			assert.Equal(t, tc.label, res.Label)
			assert.Equal(t, []string{SchemaTask, SchemaVerdicts, scoring.SchemaReason}, j.Schemas())
			assert.Equal(t, 3, res.Usage.LLMCalls)
			assert.Equal(t, "judge reason", res.Reason)
			task := res.Steps.Preprocess.(scoring.TaskRequirements)
			assert.Equal(t, "the task", task.Task)
			assert.Len(t, res.Steps.Analyze.(Verdicts).Verdicts, len(tc.verdicts))
		})
	}
}

func TestTaskCompletionPrompts(t *testing.T) {
	j := testkit.NewJudge(testkit.TaskReplies("yes", "no"))
	res := testkit.Scorer(t, New, j, scoring.Options{Verbose: true}).Score(context.Background(), testkit.AgentCase())
	require.NoError(t, res.Err)
	reqs := j.Requests()
	require.Len(t, reqs, 3)
	pre := reqs[0].Messages[1].Content
	assert.Equal(t, "Work out what this request asks the agent to do.\n\n<<<INPUT\n\"What's the weather in Lyon tomorrow?\"\nINPUT>>>", pre,
		"the requirements come from the request alone")
	analyze := reqs[1].Messages[1].Content
	for _, want := range []string{
		"Return exactly 2 verdicts.",
		"<<<REQUIREMENTS\n1. \"requirement 1\"\n2. \"requirement 2\"\nREQUIREMENTS>>>",
		"<<<INPUT\n\"What's the weather in Lyon tomorrow?\"\nINPUT>>>",
		`{"step":1,"kind":"generation","tool_calls":[{"call":1,"tool":"get_weather","arguments":"{\"city\": \"Lyon\"}"}]}`,
		`{"step":2,"kind":"tool","call":1,"tool":"get_weather","result":"rain, 14°C"}`,
		"<<<OUTPUT\n\"Tomorrow Lyon will be rainy, 14°C.\"\nOUTPUT>>>",
	} {
		assert.Contains(t, analyze, want)
	}
	assert.NotContains(t, analyze, "OUTCOME", "the verdict step sees the run, not a summary of it")
	assert.NotContains(t, analyze, `"n/a"`, "n/a is offered only when steps were left out")
	assert.Contains(t, reqs[1].Messages[0].Content, "How an agent run is given:")
	reason := reqs[2].Messages[1].Content
	assert.Contains(t, reason, `{"requirement":"requirement 1","main":true,"verdict":"yes","reason":"reason 1"}`)
	assert.Contains(t, reqs[2].Messages[0].Content, "task completion score")
	assert.Contains(t, res.Steps.PreprocessPrompt, "<<<INPUT")
	assert.NotContains(t, res.Steps.PreprocessPrompt, "TRAJECTORY")
	assert.Contains(t, res.Steps.AnalyzePrompt, "TRAJECTORY")
}

func TestTaskCompletionNotScorable(t *testing.T) {
	tests := []struct {
		name    string
		c       scoring.Case
		replies map[string][]string
		calls   int
		reason  string
	}{
		{"no trajectory", scoring.Case{Input: "q", Output: "a"}, nil, 0, "has no trajectory"},
		{"trajectory without steps", scoring.Case{Input: "q", Output: "a", Trajectory: &scoring.Trajectory{}}, nil, 0, "has no trajectory"},
		{"only omitted steps", scoring.Case{Input: "q", Output: "a", Trajectory: &scoring.Trajectory{Steps: []scoring.Step{{Kind: scoring.StepOmitted, Count: 9}}}}, nil, 0, "has no trajectory"},
		{"judge finds no task", testkit.AgentCase(), map[string][]string{
			SchemaTask: {`{"task": "", "requirements": []}`},
		}, 1, "found no task"},
		{"no request", scoring.Case{Output: "a", Trajectory: testkit.WeatherRun()}, nil, 0, "has no request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := testkit.NewJudge(tc.replies)
			res := testkit.Scorer(t, New, j, scoring.Options{}).Score(context.Background(), tc.c)
			assert.Equal(t, scoring.LabelNotScorable, res.Label)
			assert.Contains(t, res.Reason, tc.reason)
			assert.Len(t, j.Requests(), tc.calls)
			assert.Zero(t, res.Score)
		})
	}
}

func TestTaskCompletionTolerantParsing(t *testing.T) {
	t.Run("task without requirements is its own requirement", func(t *testing.T) {
		j := testkit.NewJudge(map[string][]string{
			SchemaTask:     {"```json\n{\"task\": \"Book a table\", \"outcome\": \"Booked.\"}\n```"},
			SchemaVerdicts: {`{"verdicts": [{"requirement": "Book a table", "verdict": "yes", "reason": "done"}]}`},
		})
		res := testkit.Scorer(t, New, j, scoring.Options{OmitReason: true}).Score(context.Background(), testkit.AgentCase())
		require.NoError(t, res.Err)
		assert.Equal(t, []string{"Book a table"}, res.Steps.Preprocess.(scoring.TaskRequirements).Requirements)
		assert.Equal(t, 1.0, res.Score)
	})
	t.Run("verdicts in another order are matched by requirement", func(t *testing.T) {
		j := testkit.NewJudge(map[string][]string{
			SchemaTask: {`{"task": "t", "requirements": ["a table is booked", "for two people"], "outcome": "o"}`},
			SchemaVerdicts: {`{"verdicts": [{"requirement": "For two people.", "verdict": "no", "reason": "for four"},
				{"requirement": "a table is booked", "verdict": "yes", "reason": "booked"}]}`},
		})
		res := testkit.Scorer(t, New, j, scoring.Options{ReasonMode: scoring.ReasonSummary}).Score(context.Background(), testkit.AgentCase())
		require.NoError(t, res.Err)
		v := res.Steps.Analyze.(Verdicts)
		assert.True(t, v.Reordered)
		assert.Equal(t, "yes", v.Verdicts[0].Verdict)
		assert.Equal(t, "for two people", v.Verdicts[1].Requirement)
		assert.Equal(t, "The score is 0.25 because the run accomplished 1 of 2 judged requirements, and a missed one halves the share: for four.", res.Reason)
	})
	t.Run("wrong verdict count is re-asked once", func(t *testing.T) {
		j := testkit.NewJudge(testkit.TaskReplies("yes", "yes"))
		j.Prepend(SchemaVerdicts, testkit.Reply{Resp: scoring.Response{Content: `{"verdicts": [{"requirement": "requirement 1", "verdict": "yes", "reason": "r"}]}`}})
		res := testkit.Scorer(t, New, j, scoring.Options{OmitReason: true}).Score(context.Background(), testkit.AgentCase())
		require.NoError(t, res.Err)
		assert.Equal(t, 1.0, res.Score)
		assert.Equal(t, []string{SchemaTask, SchemaVerdicts, SchemaVerdicts}, j.Schemas())
		assert.Contains(t, j.Requests()[2].Messages[3].Content, "expected exactly 2 items")
	})
	t.Run("a verdict about another requirement is re-asked naming the requirement key", func(t *testing.T) {
		// The second verdict's echo is reworded, so the first one naming
		// requirement 2 cannot be a reordering: the judge is asked again,
		// told to repeat each requirement under the key its schema has.
		j := testkit.NewJudge(map[string][]string{
			SchemaTask: {`{"task": "t", "requirements": ["a table is booked", "for two people"], "outcome": "o"}`},
			SchemaVerdicts: {
				`{"verdicts": [{"requirement": "for two people", "verdict": "no", "reason": "for four"},
					{"requirement": "booking", "verdict": "yes", "reason": "booked"}]}`,
				`{"verdicts": [{"requirement": "a table is booked", "verdict": "yes", "reason": "booked"},
					{"requirement": "for two people", "verdict": "no", "reason": "for four"}]}`},
		})
		res := testkit.Scorer(t, New, j, scoring.Options{OmitReason: true}).Score(context.Background(), testkit.AgentCase())
		require.NoError(t, res.Err)
		assert.InDelta(t, 0.25, res.Score, 1e-12)
		reqs := j.Requests()
		require.Len(t, reqs, 3)
		reask := reqs[2].Messages[len(reqs[2].Messages)-1].Content
		assert.Contains(t, reask, "verdict 1 is about requirement 2")
		assert.Contains(t, reask, `repeating each as "requirement"`)
		assert.NotContains(t, reask, `"statement"`, "the task_completion schema has no statement key")
	})
	t.Run("an unusable preprocess reply twice is a parse error", func(t *testing.T) {
		j := testkit.NewJudge(map[string][]string{SchemaTask: {`{"task": ["not", "a string"], "outcome": "o"}`}})
		res := testkit.Scorer(t, New, j, scoring.Options{}).Score(context.Background(), testkit.AgentCase())
		var e *scoring.Error
		require.True(t, errors.As(res.Err, &e), "%v", res.Err)
		assert.Equal(t, scoring.ErrorJudgeParse, e.Type)
		assert.Equal(t, scoring.StepPreprocess, e.Step)
		assert.Equal(t, scoring.LabelError, res.Label)
		assert.Equal(t, 2, res.Usage.LLMCalls)
	})
	t.Run("too many requirements are re-asked", func(t *testing.T) {
		many := make([]string, 25)
		for i := range many {
			many[i] = fmt.Sprintf("r%d", i)
		}
		_, err := parseTaskRequirements(testkit.MustJSON(map[string]any{"task": "t", "requirements": many}))
		assert.ErrorContains(t, err, "list at most 10")
	})
}

// TestTaskExamplesAgreeWithRules checks the worked examples: the task
// example's requirements are what its verdict example judges.
func TestTaskExamplesAgreeWithRules(t *testing.T) {
	d := pipeline.PromptData{Scorer: scoring.TaskCompletion}
	task, err := taskPrompt.System(d)
	require.NoError(t, err)
	outcome, err := parseTaskRequirements(testkit.ExampleReply(t, task))
	require.NoError(t, err)
	verdicts, err := verdictsPrompt.System(d)
	require.NoError(t, err)
	var rv Verdicts
	require.NoError(t, json.Unmarshal([]byte(testkit.ExampleReply(t, verdicts)), &rv))
	require.Len(t, rv.Verdicts, len(outcome.Requirements))
	for i, v := range rv.Verdicts {
		assert.Equal(t, outcome.Requirements[i], v.Requirement)
		assert.Equal(t, "no", v.Verdict, "the example's rescheduling failed")
	}
}

// TestBrokenConstraintFails checks the issue's case: "Book a table for
// two on Friday and email me the confirmation", where the run booked a
// table, for six on Monday, and sent no e-mail. Every requirement is one
// the run must meet, so a run that breaks any fails at the default
// threshold, the main requirement met or not (issue 36 item 3).
func TestBrokenConstraintFails(t *testing.T) {
	for _, tc := range []struct {
		name     string
		verdicts []string
		score    float64
		label    scoring.Label
	}{
		{"booked, wrong size and day, no e-mail", []string{"yes", "no", "no", "no"}, 0.13, scoring.LabelFail},
		{"booked as asked, no e-mail", []string{"yes", "yes", "yes", "no"}, 0.38, scoring.LabelFail},
		{"everything met", []string{"yes", "yes", "yes", "yes"}, 1, scoring.LabelPass},
		{"nothing met", []string{"no", "no", "no", "no"}, 0, scoring.LabelFail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reqs := []string{"a table for two is booked for Friday", "the booking is for two people", "the booking is for Friday", "the confirmation is e-mailed to the user"}
			var vs []map[string]string
			for i, v := range tc.verdicts {
				vs = append(vs, map[string]string{"requirement": reqs[i], "verdict": v, "reason": "r"})
			}
			j := testkit.NewJudge(map[string][]string{
				SchemaTask:     {testkit.MustJSON(map[string]any{"task": "Book a table and e-mail the confirmation.", "requirements": reqs})},
				SchemaVerdicts: {testkit.MustJSON(map[string]any{"verdicts": vs})},
			})
			c := testkit.AgentCase()
			c.Input = "Book a table for two on Friday and email me the confirmation."
			res := testkit.Scorer(t, New, j, scoring.Options{ReasonMode: scoring.ReasonSummary}).Score(context.Background(), c)
			require.NoError(t, res.Err)
			assert.Equal(t, tc.score, res.Score)
			assert.Equal(t, tc.label, res.Label, res.Reason)
		})
	}
}

// TestRequirementsFromTheConversation checks a follow-up turn: the
// requirements are worked out from the conversation up to the request,
// not from "Yes, go ahead" alone, and the judge of the run sees that
// conversation too (issue 36 item 3).
func TestRequirementsFromTheConversation(t *testing.T) {
	j := testkit.NewJudge(testkit.TaskReplies("yes"))
	c := testkit.AgentCase()
	c.Turns = []scoring.Turn{
		{Role: "user", Content: "Find me a flight to Lisbon on May 3."},
		{Role: "assistant", Content: "TAP at 9:40 for 120 EUR. Shall I book it?"},
	}
	c.Input = "Yes, go ahead."
	res := testkit.Scorer(t, New, j, scoring.Options{OmitReason: true}).Score(context.Background(), c)
	require.NoError(t, res.Err)
	reqs := j.Requests()
	require.Len(t, reqs, 2)
	for i, step := range []string{"preprocess", "analyze"} {
		user := reqs[i].Messages[1].Content
		assert.Contains(t, user, `{"turn":1,"role":"user","content":"Find me a flight to Lisbon on May 3."}`, step)
		assert.Contains(t, user, `{"turn":2,"role":"assistant","content":"TAP at 9:40 for 120 EUR. Shall I book it?"}`, step)
		assert.Contains(t, user, "<<<INPUT\n\"Yes, go ahead.\"\nINPUT>>>", step)
	}
	assert.Contains(t, reqs[0].Messages[0].Content, "HISTORY", "the preprocess prompt says how to read the earlier turns")
}
