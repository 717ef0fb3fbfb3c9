package scoring

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// taskReplies scripts a task_completion run: the preprocess step finds one
// requirement per verdict, the analyze step gives the verdicts.
func taskReplies(verdicts ...string) map[string][]string {
	reqs := []string{}
	var vs []map[string]string
	for i, v := range verdicts {
		r := fmt.Sprintf("requirement %d", i+1)
		reqs = append(reqs, r)
		vs = append(vs, map[string]string{"requirement": r, "verdict": v, "reason": fmt.Sprintf("reason %d", i+1)})
	}
	return map[string][]string{
		SchemaTaskCompletionTask:     {mustJSON(map[string]any{"task": "the task", "requirements": reqs})},
		SchemaTaskCompletionVerdicts: {mustJSON(map[string]any{"verdicts": vs})},
		SchemaReason:                 {`{"reason": "judge reason"}`},
	}
}

func agentCase() Case {
	return Case{Input: "What's the weather in Lyon tomorrow?", Output: "Tomorrow Lyon will be rainy, 14°C.", Trajectory: weatherRun()}
}

func TestTaskCompletionScore(t *testing.T) {
	tests := []struct {
		verdicts []string
		opts     Options
		score    float64
		label    Label
	}{
		{[]string{"yes"}, Options{}, 1, LabelPass},
		// The main requirement (the first) weighs as much as the others
		// together plus one: 2 of 3 weights, 3 of 5, 4 of 5.
		{[]string{"yes", "no"}, Options{}, 0.67, LabelPass},
		{[]string{"yes", "no", "no"}, Options{}, 0.6, LabelPass},
		{[]string{"no", "no"}, Options{}, 0, LabelFail},
		{[]string{"yes", "yes", "no"}, Options{Scale: 10, Threshold: ptr(7.0)}, 8, LabelPass},
		{[]string{"yes", "no"}, Options{StrictMode: true}, 0, LabelFail},
		{[]string{"Yes.", "**YES**"}, Options{StrictMode: true}, 1, LabelPass},
		// The main requirement failed: below half the scale however many
		// minor ones were met (it passed at 0.5 when all counted alike).
		{[]string{"no", "yes"}, Options{}, 0.33, LabelFail},
		{[]string{"no", "yes", "yes", "yes", "yes", "yes", "yes", "yes", "yes", "yes"}, Options{}, 0.47, LabelFail},
		{[]string{"no", "yes", "yes", "yes"}, Options{Scale: 10}, 4.29, LabelFail},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.verdicts, ","), func(t *testing.T) {
			j := newJudge(taskReplies(tc.verdicts...))
			res := mustNew(t, TaskCompletion, j, tc.opts).Score(context.Background(), agentCase())
			require.NoError(t, res.Err)
			assert.InDelta(t, tc.score, res.Score, 1e-12)
			assert.Equal(t, tc.label, res.Label)
			assert.Equal(t, []string{SchemaTaskCompletionTask, SchemaTaskCompletionVerdicts, SchemaReason}, j.schemas())
			assert.Equal(t, 3, res.Usage.LLMCalls)
			assert.Equal(t, "judge reason", res.Reason)
			task := res.Steps.Preprocess.(TaskRequirements)
			assert.Equal(t, "the task", task.Task)
			assert.Len(t, res.Steps.Analyze.(RequirementVerdicts).Verdicts, len(tc.verdicts))
		})
	}
}

func TestTaskCompletionPrompts(t *testing.T) {
	j := newJudge(taskReplies("yes", "no"))
	res := mustNew(t, TaskCompletion, j, Options{Verbose: true}).Score(context.Background(), agentCase())
	require.NoError(t, res.Err)
	reqs := j.requests()
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
		c       Case
		replies map[string][]string
		calls   int
		reason  string
	}{
		{"no trajectory", Case{Input: "q", Output: "a"}, nil, 0, "has no trajectory"},
		{"trajectory without steps", Case{Input: "q", Output: "a", Trajectory: &Trajectory{}}, nil, 0, "has no trajectory"},
		{"only omitted steps", Case{Input: "q", Output: "a", Trajectory: &Trajectory{Steps: []Step{{Kind: StepOmitted, Count: 9}}}}, nil, 0, "has no trajectory"},
		{"judge finds no task", agentCase(), map[string][]string{
			SchemaTaskCompletionTask: {`{"task": "", "requirements": []}`},
		}, 1, "found no task"},
		{"no request", Case{Output: "a", Trajectory: weatherRun()}, nil, 0, "has no request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := newJudge(tc.replies)
			res := mustNew(t, TaskCompletion, j, Options{}).Score(context.Background(), tc.c)
			assert.Equal(t, LabelNotScorable, res.Label)
			assert.Contains(t, res.Reason, tc.reason)
			assert.Len(t, j.requests(), tc.calls)
			assert.Zero(t, res.Score)
		})
	}
}

func TestTaskCompletionTolerantParsing(t *testing.T) {
	t.Run("task without requirements is its own requirement", func(t *testing.T) {
		j := newJudge(map[string][]string{
			SchemaTaskCompletionTask:     {"```json\n{\"task\": \"Book a table\", \"outcome\": \"Booked.\"}\n```"},
			SchemaTaskCompletionVerdicts: {`{"verdicts": [{"requirement": "Book a table", "verdict": "yes", "reason": "done"}]}`},
		})
		res := mustNew(t, TaskCompletion, j, Options{OmitReason: true}).Score(context.Background(), agentCase())
		require.NoError(t, res.Err)
		assert.Equal(t, []string{"Book a table"}, res.Steps.Preprocess.(TaskRequirements).Requirements)
		assert.Equal(t, 1.0, res.Score)
	})
	t.Run("verdicts in another order are matched by requirement", func(t *testing.T) {
		j := newJudge(map[string][]string{
			SchemaTaskCompletionTask: {`{"task": "t", "requirements": ["a table is booked", "for two people"], "outcome": "o"}`},
			SchemaTaskCompletionVerdicts: {`{"verdicts": [{"requirement": "For two people.", "verdict": "no", "reason": "for four"},
				{"requirement": "a table is booked", "verdict": "yes", "reason": "booked"}]}`},
		})
		res := mustNew(t, TaskCompletion, j, Options{ReasonMode: ReasonSummary}).Score(context.Background(), agentCase())
		require.NoError(t, res.Err)
		v := res.Steps.Analyze.(RequirementVerdicts)
		assert.True(t, v.Reordered)
		assert.Equal(t, "yes", v.Verdicts[0].Verdict)
		assert.Equal(t, "for two people", v.Verdicts[1].Requirement)
		assert.Equal(t, "The score is 0.67 because the run accomplished the main requirement and 1 of 2 judged requirements in all: for four.", res.Reason)
	})
	t.Run("wrong verdict count is re-asked once", func(t *testing.T) {
		j := newJudge(taskReplies("yes", "yes"))
		j.script[SchemaTaskCompletionVerdicts] = append([]scriptedReply{{resp: Response{Content: `{"verdicts": [{"requirement": "requirement 1", "verdict": "yes", "reason": "r"}]}`}}},
			j.script[SchemaTaskCompletionVerdicts]...)
		res := mustNew(t, TaskCompletion, j, Options{OmitReason: true}).Score(context.Background(), agentCase())
		require.NoError(t, res.Err)
		assert.Equal(t, 1.0, res.Score)
		assert.Equal(t, []string{SchemaTaskCompletionTask, SchemaTaskCompletionVerdicts, SchemaTaskCompletionVerdicts}, j.schemas())
		assert.Contains(t, j.requests()[2].Messages[3].Content, "expected exactly 2 items")
	})
	t.Run("a verdict about another requirement is re-asked naming the requirement key", func(t *testing.T) {
		// The second verdict's echo is reworded, so the first one naming
		// requirement 2 cannot be a reordering: the judge is asked again,
		// told to repeat each requirement under the key its schema has.
		j := newJudge(map[string][]string{
			SchemaTaskCompletionTask: {`{"task": "t", "requirements": ["a table is booked", "for two people"], "outcome": "o"}`},
			SchemaTaskCompletionVerdicts: {
				`{"verdicts": [{"requirement": "for two people", "verdict": "no", "reason": "for four"},
					{"requirement": "booking", "verdict": "yes", "reason": "booked"}]}`,
				`{"verdicts": [{"requirement": "a table is booked", "verdict": "yes", "reason": "booked"},
					{"requirement": "for two people", "verdict": "no", "reason": "for four"}]}`},
		})
		res := mustNew(t, TaskCompletion, j, Options{OmitReason: true}).Score(context.Background(), agentCase())
		require.NoError(t, res.Err)
		assert.InDelta(t, 0.67, res.Score, 1e-12)
		reqs := j.requests()
		require.Len(t, reqs, 3)
		reask := reqs[2].Messages[len(reqs[2].Messages)-1].Content
		assert.Contains(t, reask, "verdict 1 is about requirement 2")
		assert.Contains(t, reask, `repeating each as "requirement"`)
		assert.NotContains(t, reask, `"statement"`, "the task_completion schema has no statement key")
	})
	t.Run("an unusable preprocess reply twice is a parse error", func(t *testing.T) {
		j := newJudge(map[string][]string{SchemaTaskCompletionTask: {`{"task": ["not", "a string"], "outcome": "o"}`}})
		res := mustNew(t, TaskCompletion, j, Options{}).Score(context.Background(), agentCase())
		var e *Error
		require.True(t, errors.As(res.Err, &e), "%v", res.Err)
		assert.Equal(t, ErrorJudgeParse, e.Type)
		assert.Equal(t, StepPreprocess, e.Step)
		assert.Equal(t, LabelError, res.Label)
		assert.Equal(t, 2, res.Usage.LLMCalls)
	})
	t.Run("too many requirements are re-asked", func(t *testing.T) {
		many := make([]string, 25)
		for i := range many {
			many[i] = fmt.Sprintf("r%d", i)
		}
		_, err := parseTaskRequirements(mustJSON(map[string]any{"task": "t", "requirements": many}))
		assert.ErrorContains(t, err, "list at most 10")
	})
}

func TestTaskCompletionSummaryReason(t *testing.T) {
	j := newJudge(taskReplies("yes", "yes"))
	res := mustNew(t, TaskCompletion, j, Options{ReasonMode: ReasonSummary}).Score(context.Background(), agentCase())
	require.NoError(t, res.Err)
	assert.Equal(t, "The score is 1 because the run accomplished all 2 judged requirements of the task.", res.Reason)
	assert.Equal(t, 2, res.Usage.LLMCalls)

	j = newJudge(taskReplies("yes", "no"))
	res = mustNew(t, TaskCompletion, j, Options{OmitReason: true}).Score(context.Background(), agentCase())
	require.NoError(t, res.Err)
	assert.Empty(t, res.Reason, "include_reason: false")
	assert.Equal(t, []string{SchemaTaskCompletionTask, SchemaTaskCompletionVerdicts}, j.schemas())
	assert.InDelta(t, 0.67, res.Score, 1e-12)

	j = newJudge(toolReplies(toolVerdict{1, "yes", "yes", "yes", ""}, toolVerdict{2, "yes", "yes", "yes", ""}, toolVerdict{3, "yes", "yes", "yes", ""}))
	res = mustNew(t, ToolUse, j, Options{OmitReason: true, Verbose: true}).Score(context.Background(), threeCalls())
	require.NoError(t, res.Err)
	assert.Empty(t, res.Reason)
	assert.Equal(t, []string{SchemaToolUseVerdicts}, j.schemas())
	assert.Contains(t, res.Steps.AnalyzePrompt, "<<<TRAJECTORY", "verbose keeps the prompt")
	assert.Equal(t, Usage{LLMCalls: 1, PromptTokens: 10, CompletionTokens: 5, Latency: res.Usage.Latency}, res.Usage)
}

func TestTrajectoryIsBoundedBeforeTheJudge(t *testing.T) {
	c := Case{Input: "Find flights to Oslo.", Output: "I could not find flights.", Trajectory: loopRun(2500)}
	c.Trajectory.Steps[1].Result = strings.Repeat("long result ", 5000)
	orig := c.Trajectory.clone()
	j := newJudge(taskReplies("no"))
	res := mustNew(t, TaskCompletion, j, Options{MaxInputChars: 2000}).Score(context.Background(), c)
	require.NoError(t, res.Err)
	assert.True(t, res.Truncated)
	assert.Equal(t, orig, c.Trajectory, "the caller's trajectory is not changed")
	prompt := j.requests()[1].Messages[1].Content
	assert.Contains(t, prompt, `{"kind":"omitted","omitted_steps":`)
	assert.Less(t, len(prompt), 20_000, "the prompt stays small")
	assert.Contains(t, prompt, strings.TrimSpace(TruncationMarker))
	assert.Contains(t, j.requests()[1].Messages[0].Content, "An \"omitted\" step stands for")
}

func TestTrajectoryRedactedAndNamesCapped(t *testing.T) {
	tr := &Trajectory{Steps: []Step{
		gen("mail bob@example.com", call("", strings.Repeat("n", 500), `{"to": "bob@example.com"}`)),
		toolStep("", "send", "", "sent to bob@example.com"),
		failedStep("", "send", "", "bounced: bob@example.com"),
	}}
	redact := func(s string) string { return strings.ReplaceAll(s, "bob@example.com", "[REDACTED:email]") }
	j := newJudge(taskReplies("yes"))
	res := mustNew(t, TaskCompletion, j, Options{Redact: redact}).Score(context.Background(), Case{Input: "mail bob", Output: "done", Trajectory: tr})
	require.NoError(t, res.Err)
	prompt := j.requests()[1].Messages[1].Content
	assert.NotContains(t, prompt, "bob@example.com")
	assert.Equal(t, 4, strings.Count(prompt, "[REDACTED:email]"))
	assert.NotContains(t, prompt, strings.Repeat("n", maxToolNameChars+1))
	assert.True(t, res.Truncated, "a capped tool name counts as a cut")
}

func TestTrajectoryScorersRejectInvalidTrajectory(t *testing.T) {
	c := agentCase()
	c.Trajectory = &Trajectory{Steps: []Step{{Kind: "thought", Output: "hmm"}}}
	for _, name := range TrajectoryNames() {
		res := mustNew(t, name, newJudge(nil), Options{}).Score(context.Background(), c)
		var e *Error
		require.True(t, errors.As(res.Err, &e), name)
		assert.Equal(t, ErrorInvalidCase, e.Type, name)
		assert.Contains(t, e.Error(), `unknown kind "thought"`)
	}
	// The other scorers never look at the trajectory.
	res := mustNew(t, Bias, newJudge(biasReplies("no")), Options{}).Score(context.Background(), c)
	assert.NoError(t, res.Err)
}
