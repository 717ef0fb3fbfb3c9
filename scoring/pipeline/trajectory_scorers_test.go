package pipeline_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
	"github.com/llm-eval/llm_eval/scoring/scorers"
	"github.com/llm-eval/llm_eval/scoring/taskcompletion"
	"github.com/llm-eval/llm_eval/scoring/tooluse"
)

func TestTaskCompletionSummaryReason(t *testing.T) {
	j := testkit.NewJudge(testkit.TaskReplies("yes", "yes"))
	res := mustNew(t, scoring.TaskCompletion, j, scoring.Options{ReasonMode: scoring.ReasonSummary}).Score(context.Background(), testkit.AgentCase())
	require.NoError(t, res.Err)
	assert.Equal(t, "The score is 1 because the run accomplished all 2 judged requirements of the task.", res.Reason)
	assert.Equal(t, 2, res.Usage.LLMCalls)

	j = testkit.NewJudge(testkit.TaskReplies("yes", "no"))
	res = mustNew(t, scoring.TaskCompletion, j, scoring.Options{OmitReason: true}).Score(context.Background(), testkit.AgentCase())
	require.NoError(t, res.Err)
	assert.Empty(t, res.Reason, "include_reason: false")
	assert.Equal(t, []string{taskcompletion.SchemaTask, taskcompletion.SchemaVerdicts}, j.Schemas())
	assert.InDelta(t, 0.25, res.Score, 1e-12) // a missed requirement halves the share met

	j = testkit.NewJudge(testkit.ToolReplies(testkit.TV(1, "yes", "yes", "yes", ""), testkit.TV(2, "yes", "yes", "yes", ""), testkit.TV(3, "yes", "yes", "yes", "")))
	res = mustNew(t, scoring.ToolUse, j, scoring.Options{OmitReason: true, Verbose: true}).Score(context.Background(), testkit.ThreeCalls())
	require.NoError(t, res.Err)
	assert.Empty(t, res.Reason)
	assert.Equal(t, []string{tooluse.SchemaVerdicts}, j.Schemas())
	assert.Contains(t, res.Steps.AnalyzePrompt, "<<<TRAJECTORY", "verbose keeps the prompt")
	assert.Equal(t, scoring.Usage{LLMCalls: 1, PromptTokens: 10, CompletionTokens: 5, Latency: res.Usage.Latency}, res.Usage)
}

func TestTrajectoryIsBoundedBeforeTheJudge(t *testing.T) {
	c := scoring.Case{Input: "Find flights to Oslo.", Output: "I could not find flights.", Trajectory: testkit.LoopRun(2500)}
	c.Trajectory.Steps[1].Result = strings.Repeat("long result ", 5000)
	orig := testkit.MustJSON(c.Trajectory)
	j := testkit.NewJudge(testkit.TaskReplies("no"))
	res := mustNew(t, scoring.TaskCompletion, j, scoring.Options{MaxInputChars: 2000}).Score(context.Background(), c)
	require.NoError(t, res.Err)
	assert.True(t, res.Truncated)
	assert.Equal(t, orig, testkit.MustJSON(c.Trajectory), "the caller's trajectory is not changed")
	prompt := j.Requests()[1].Messages[1].Content
	assert.Contains(t, prompt, `{"kind":"omitted","omitted_steps":`)
	assert.Less(t, len(prompt), 20_000, "the prompt stays small")
	assert.Contains(t, prompt, strings.TrimSpace(scoring.TruncationMarker))
	assert.Contains(t, j.Requests()[1].Messages[0].Content, "An \"omitted\" step stands for")
}

func TestTrajectoryRedactedAndNamesCapped(t *testing.T) {
	tr := &scoring.Trajectory{Steps: []scoring.Step{
		testkit.Gen("mail bob@example.com", testkit.Call("", strings.Repeat("n", 500), `{"to": "bob@example.com"}`)),
		testkit.ToolStep("", "send", "", "sent to bob@example.com"),
		testkit.FailedStep("", "send", "", "bounced: bob@example.com"),
	}}
	redact := func(s string) string { return strings.ReplaceAll(s, "bob@example.com", "[REDACTED:email]") }
	j := testkit.NewJudge(testkit.TaskReplies("yes"))
	res := mustNew(t, scoring.TaskCompletion, j, scoring.Options{Redact: redact}).Score(context.Background(), scoring.Case{Input: "mail bob", Output: "done", Trajectory: tr})
	require.NoError(t, res.Err)
	prompt := j.Requests()[1].Messages[1].Content
	assert.NotContains(t, prompt, "bob@example.com")
	assert.Equal(t, 4, strings.Count(prompt, "[REDACTED:email]"))
	assert.NotContains(t, prompt, strings.Repeat("n", pipeline.MaxToolNameChars+1))
	assert.True(t, res.Truncated, "a capped tool name counts as a cut")
}

func TestTrajectoryScorersRejectInvalidTrajectory(t *testing.T) {
	c := testkit.AgentCase()
	c.Trajectory = &scoring.Trajectory{Steps: []scoring.Step{{Kind: "thought", Output: "hmm"}}}
	for _, name := range scorers.TrajectoryNames() {
		res := mustNew(t, name, testkit.NewJudge(nil), scoring.Options{}).Score(context.Background(), c)
		var e *scoring.Error
		require.True(t, errors.As(res.Err, &e), name)
		assert.Equal(t, scoring.ErrorInvalidCase, e.Type, name)
		assert.Contains(t, e.Error(), `unknown kind "thought"`)
	}
	// The other scorers never look at the trajectory.
	res := mustNew(t, scoring.Bias, testkit.NewJudge(testkit.BiasReplies("no")), scoring.Options{}).Score(context.Background(), c)
	assert.NoError(t, res.Err)
}

// TestToolsPrepared checks the tool list as the judge gets it: one per
// name, redacted, descriptions capped, at most pipeline.MaxTrajectoryTools, and
// seen by tool_use only.
func TestToolsPrepared(t *testing.T) {
	tools := []scoring.ToolDefinition{{Name: "a"}, {Name: "a", Description: "secret first description"}, {Name: "b", Description: strings.Repeat("x", pipeline.MaxToolDescriptionChars+5)}}
	for i := range pipeline.MaxTrajectoryTools {
		tools = append(tools, scoring.ToolDefinition{Name: "t" + strings.Repeat("1", i+1)})
	}
	redact := func(s string) string { return strings.ReplaceAll(s, "secret", "[REDACTED]") }
	c := scoring.Case{Input: "q", Output: "a", Trajectory: &scoring.Trajectory{Steps: []scoring.Step{testkit.Gen("a")}, Tools: tools}}

	s := mustNew(t, scoring.ToolUse, testkit.NewJudge(nil), scoring.Options{Redact: redact})
	out, _, truncated, err := pipeline.Prepare(s, c)
	require.NoError(t, err)
	assert.True(t, truncated)
	got := out.Trajectory.Tools
	require.Len(t, got, pipeline.MaxTrajectoryTools)
	assert.Equal(t, scoring.ToolDefinition{Name: "a", Description: "[REDACTED] first description"}, got[0])
	assert.Equal(t, strings.Repeat("x", pipeline.MaxToolDescriptionChars)+scoring.TruncationMarker, got[1].Description)
	assert.Len(t, tools, pipeline.MaxTrajectoryTools+3, "the caller's list is untouched")

	tc := mustNew(t, scoring.TaskCompletion, testkit.NewJudge(nil), scoring.Options{Redact: redact})
	out, _, truncated, err = pipeline.Prepare(tc, c)
	require.NoError(t, err)
	assert.False(t, truncated, "task_completion does not send the tools, so cutting them is no truncation of its")
	assert.Nil(t, out.Trajectory.Tools)
}
