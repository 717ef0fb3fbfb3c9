package tooluse

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
)

func TestToolUseScore(t *testing.T) {
	ok := func(n int) testkit.ToolVerdict { return testkit.TV(n, "yes", "yes", "yes", "fine") }
	tests := []struct {
		name     string
		verdicts []testkit.ToolVerdict
		opts     scoring.Options
		score    float64
		label    scoring.Label
	}{
		{"all appropriate", []testkit.ToolVerdict{ok(1), ok(2), ok(3)}, scoring.Options{}, 1, scoring.LabelPass},
		{"wrong tool", []testkit.ToolVerdict{ok(1), testkit.TV(2, "no", "yes", "yes", "repeat"), ok(3)}, scoring.Options{}, 0.67, scoring.LabelPass},
		{"unsupported arguments", []testkit.ToolVerdict{ok(1), ok(2), testkit.TV(3, "yes", "no", "n/a", "invented")}, scoring.Options{}, 0.67, scoring.LabelPass},
		{"both faults on one call count once", []testkit.ToolVerdict{testkit.TV(1, "no", "no", "n/a", "x"), ok(2), ok(3)}, scoring.Options{}, 0.67, scoring.LabelPass},
		{"unused results do not count", []testkit.ToolVerdict{testkit.TV(1, "yes", "yes", "no", "ignored"), testkit.TV(2, "yes", "yes", "no", "ignored"), ok(3)}, scoring.Options{}, 1, scoring.LabelPass},
		{"two of three faulty", []testkit.ToolVerdict{testkit.TV(1, "no", "yes", "yes", "a"), testkit.TV(2, "yes", "no", "yes", "b"), ok(3)}, scoring.Options{}, 0.33, scoring.LabelFail},
		{"strict", []testkit.ToolVerdict{ok(1), ok(2), testkit.TV(3, "no", "yes", "yes", "c")}, scoring.Options{StrictMode: true}, 0, scoring.LabelFail},
		{"scale", []testkit.ToolVerdict{ok(1), ok(2), testkit.TV(3, "no", "yes", "yes", "c")}, scoring.Options{Scale: 3, Threshold: testkit.Ptr(2.0)}, 2, scoring.LabelPass},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := testkit.NewJudge(testkit.ToolReplies(tc.verdicts...))
			res := testkit.Scorer(t, New, j, tc.opts).Score(context.Background(), testkit.ThreeCalls())
			require.NoError(t, res.Err)
			assert.InDelta(t, tc.score, res.Score, 1e-12)
			assert.Equal(t, tc.label, res.Label)
			assert.Equal(t, []string{SchemaVerdicts, scoring.SchemaReason}, j.Schemas())
			got := res.Steps.Analyze.(Verdicts).Verdicts
			require.Len(t, got, 3)
			assert.Equal(t, []string{"get_weather", "get_weather", "book_taxi"}, []string{got[0].Tool, got[1].Tool, got[2].Tool})
			for i, v := range got {
				assert.Equal(t, i+1, v.Call)
				assert.Equal(t, v.RightTool == "yes" && v.ArgumentsSupported == "yes", v.Appropriate)
			}
		})
	}
}

func TestToolUsePrompt(t *testing.T) {
	j := testkit.NewJudge(testkit.ToolReplies(testkit.TV(1, "yes", "yes", "yes", ""), testkit.TV(2, "no", "yes", "no", ""), testkit.TV(3, "no", "no", "n/a", "")))
	res := testkit.Scorer(t, New, j, scoring.Options{}).Score(context.Background(), testkit.ThreeCalls())
	require.NoError(t, res.Err)
	user := j.Requests()[0].Messages[1].Content
	// The run comes first and the task, which names the number of calls,
	// last: what differs between calls ends the prompt.
	assert.True(t, strings.HasPrefix(user, "<<<INPUT\n"), user)
	assert.True(t, strings.HasSuffix(user, "OUTPUT>>>\n\nJudge each of the 3 tool calls of this agent run, numbered 1 to 3 in the trajectory. Return exactly 3 verdicts, in call order. The tools the agent had are not known: return an empty missing_tools list."), user)
	assert.Contains(t, user, `{"step":5,"kind":"generation","tool_calls":[{"call":3,"tool":"book_taxi","arguments":"to the airport"}]}`)
	assert.Contains(t, user, "<<<OUTPUT\n\"Tomorrow Lyon will be sunny.\"\nOUTPUT>>>")
	sys := j.Requests()[0].Messages[0].Content
	for _, want := range []string{"right_tool", "arguments_supported", "result_used", "plain text instead of JSON are not a fault", "what the agent knew at that point"} {
		assert.Contains(t, sys, want)
	}
	reasonSys := j.Requests()[1].Messages[0].Content
	assert.Contains(t, reasonSys, "tool use score")
	assert.Contains(t, reasonSys, `"result_used" is reported but does not change the score`)
}

func TestToolUseNotScorable(t *testing.T) {
	tests := []struct {
		name   string
		c      scoring.Case
		reason string
	}{
		{"no trajectory", scoring.Case{Input: "q", Output: "a"}, "has no trajectory"},
		{"agent with no tools", scoring.Case{Input: "Say hi.", Output: "Hi!", Trajectory: &scoring.Trajectory{Steps: []scoring.Step{testkit.Gen("Hi!")}}}, "made no tool calls"},
		{"only omitted steps", scoring.Case{Output: "a", Trajectory: &scoring.Trajectory{Steps: []scoring.Step{{Kind: scoring.StepOmitted, Count: 4}}}}, "has no trajectory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := testkit.NewJudge(nil)
			res := testkit.Scorer(t, New, j, scoring.Options{}).Score(context.Background(), tc.c)
			assert.Equal(t, scoring.LabelNotScorable, res.Label)
			assert.Contains(t, res.Reason, tc.reason)
			assert.Empty(t, j.Requests())
		})
	}
}

func TestToolUseParsing(t *testing.T) {
	calls := pipeline.Calls(testkit.ThreeCalls().Trajectory)
	tests := []struct {
		name      string
		reply     string
		wantErr   string
		order     []string // right_tool per call, in call order
		reordered bool
	}{
		{name: "in order", reply: `{"verdicts": [
			{"call": 1, "right_tool": "yes", "arguments_supported": "yes", "result_used": "yes", "reason": "a"},
			{"call": 2, "right_tool": "no", "arguments_supported": "yes", "result_used": "no", "reason": "b"},
			{"call": 3, "right_tool": "no", "arguments_supported": "no", "result_used": "n/a", "reason": "c"}]}`,
			order: []string{"yes", "no", "no"}},
		{name: "reordered by call number", reply: `{"verdicts": [
			{"call": 3, "right_tool": "no", "arguments_supported": "no", "result_used": "n/a"},
			{"call": "1", "right_tool": "Yes.", "arguments_supported": "YES", "result_used": "yes"},
			{"call": 2, "right_tool": "no", "arguments_supported": "yes", "result_used": "no"}]}`,
			order: []string{"yes", "no", "no"}, reordered: true},
		{name: "no numbers: taken in order, result_used defaults to n/a", reply: `[
			{"right_tool": "yes", "arguments_supported": "yes"},
			{"right_tool": "yes", "arguments_supported": "yes"},
			{"right_tool": "no", "arguments_supported": "yes"}]`,
			order: []string{"yes", "yes", "no"}},
		{name: "wrong count", reply: `{"verdicts": [{"call": 1, "right_tool": "yes", "arguments_supported": "yes", "result_used": "yes"}]}`,
			wantErr: "expected exactly 3 items"},
		{name: "missing right_tool", reply: `{"verdicts": [{"arguments_supported": "yes"}, {"right_tool": "yes", "arguments_supported": "yes"}, {"right_tool": "yes", "arguments_supported": "yes"}]}`,
			wantErr: `item 1 of "verdicts" has no "right_tool"`},
		{name: "n/a is not a tool choice", reply: `{"verdicts": [{"right_tool": "n/a", "arguments_supported": "yes"}, {"right_tool": "yes", "arguments_supported": "yes"}, {"right_tool": "yes", "arguments_supported": "yes"}]}`,
			wantErr: `has right_tool "n/a"; it must be "yes" or "no"`},
		{name: "bad result_used", reply: `{"verdicts": [{"right_tool": "yes", "arguments_supported": "yes", "result_used": "partly"}, {"right_tool": "yes", "arguments_supported": "yes"}, {"right_tool": "yes", "arguments_supported": "yes"}]}`,
			wantErr: `has result_used "partly"`},
		{name: "one verdict about another call", reply: `{"verdicts": [
			{"call": 2, "right_tool": "yes", "arguments_supported": "yes"},
			{"right_tool": "yes", "arguments_supported": "yes"},
			{"right_tool": "yes", "arguments_supported": "yes"}]}`,
			wantErr: "verdict 1 is about tool call 2"},
		{name: "a call judged twice", reply: `{"verdicts": [
			{"call": 2, "right_tool": "yes", "arguments_supported": "yes"},
			{"call": 2, "right_tool": "yes", "arguments_supported": "yes"},
			{"call": 1, "right_tool": "yes", "arguments_supported": "yes"}]}`,
			wantErr: "tool call 2 is judged twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseVerdicts(tc.reply, calls, nil)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			var order []string
			for _, v := range got.Verdicts {
				order = append(order, v.RightTool)
			}
			assert.Equal(t, tc.order, order)
			assert.Equal(t, tc.reordered, got.Reordered)
		})
	}
}

func TestToolUseReaskAndSummary(t *testing.T) {
	j := testkit.NewJudge(nil).
		Add(SchemaVerdicts, testkit.ReplyOf(`{"verdicts": [{"call": 1, "right_tool": "maybe", "arguments_supported": "yes"}]}`, "stop")).
		Add(SchemaVerdicts, testkit.ReplyOf(testkit.MustJSON(map[string]any{"verdicts": []testkit.ToolVerdict{
			testkit.TV(1, "yes", "yes", "no", "The answer says sunny though the tool said rain."),
			testkit.TV(2, "no", "yes", "no", "It repeats call 1."),
			testkit.TV(3, "no", "no", "n/a", "Nobody asked for a taxi."),
		}}), "stop"))
	res := testkit.Scorer(t, New, j, scoring.Options{ReasonMode: scoring.ReasonSummary}).Score(context.Background(), testkit.ThreeCalls())
	require.NoError(t, res.Err)
	assert.Equal(t, 2, res.Usage.LLMCalls)
	assert.Equal(t, 0.33, res.Score)
	assert.Equal(t, "The score is 0.33 because 1 of 3 tool calls were appropriate; not appropriate: call 2 get_weather (It repeats call 1); "+
		"call 3 book_taxi (Nobody asked for a taxi); the results of calls 1, 2 were not used.", res.Reason)

	j = testkit.NewJudge(testkit.ToolReplies(testkit.TV(1, "yes", "yes", "yes", ""), testkit.TV(2, "yes", "yes", "yes", ""), testkit.TV(3, "yes", "yes", "no", "")))
	res = testkit.Scorer(t, New, j, scoring.Options{ReasonMode: scoring.ReasonSummary}).Score(context.Background(), testkit.ThreeCalls())
	assert.Equal(t, "The score is 1 because all 3 tool calls were appropriate; the result of call 3 was not used.", res.Reason)
}

func TestToolUseJudgeFailureTyped(t *testing.T) {
	j := testkit.NewJudge(nil).Add(SchemaVerdicts, testkit.Reply{Err: &scoring.Error{Type: scoring.ErrorJudgeRateLimited, Status: 429, Err: errors.New("slow down")}})
	res := testkit.Scorer(t, New, j, scoring.Options{}).Score(context.Background(), testkit.ThreeCalls())
	var e *scoring.Error
	require.True(t, errors.As(res.Err, &e))
	assert.Equal(t, scoring.ErrorJudgeRateLimited, e.Type)
	assert.Equal(t, scoring.StepAnalyze, e.Step)
	assert.Equal(t, scoring.LabelError, res.Label)
}

// TestToolUseNonJSONArgumentsAndOrphans covers arguments that are not JSON
// and tool steps whose request was never recorded: both reach the judge as
// calls of their own.
func TestToolUseNonJSONArgumentsAndOrphans(t *testing.T) {
	c := scoring.Case{Input: "Add 2 and 2, then look up Oslo.", Output: "4; Oslo is in Norway.", Trajectory: &scoring.Trajectory{Steps: []scoring.Step{
		testkit.ToolStep("", "calculator", "2 + 2", "4"),
		testkit.Gen("", testkit.Call("", "wiki", "Oslo {unclosed")),
		testkit.ToolStep("", "wiki", "", "Oslo is the capital of Norway."),
	}}}
	j := testkit.NewJudge(testkit.ToolReplies(testkit.TV(1, "yes", "yes", "yes", ""), testkit.TV(2, "yes", "yes", "yes", "")))
	res := testkit.Scorer(t, New, j, scoring.Options{OmitReason: true}).Score(context.Background(), c)
	require.NoError(t, res.Err)
	user := j.Requests()[0].Messages[1].Content
	assert.Contains(t, user, `{"step":1,"kind":"tool","call":1,"tool":"calculator","arguments":"2 + 2","result":"4"}`)
	assert.Contains(t, user, `"arguments":"Oslo {unclosed"`)
	assert.Contains(t, user, "Judge each of the 2 tool calls")
}

// TestToolUseExampleAgreesWithRules checks the worked example scores as
// its rules say (a repeat is the wrong tool, an unused result of an
// appropriate call does not make it inappropriate).
func TestToolUseExampleAgreesWithRules(t *testing.T) {
	system, err := verdictsPrompt.System(pipeline.PromptData{Scorer: scoring.ToolUse})
	require.NoError(t, err)
	calls := []pipeline.Call{{Number: 1}, {Number: 2}, {Number: 3}}
	got, err := parseVerdicts(testkit.ExampleReply(t, system), calls, nil)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, false}, []bool{got.Verdicts[0].Appropriate, got.Verdicts[1].Appropriate, got.Verdicts[2].Appropriate})
	assert.Equal(t, "no", got.Verdicts[0].ResultUsed)
}
