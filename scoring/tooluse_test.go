package scoring

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// toolVerdict is one scripted tool_use verdict.
type toolVerdict struct {
	Call      int    `json:"call"`
	RightTool string `json:"right_tool"`
	Arguments string `json:"arguments_supported"`
	Result    string `json:"result_used"`
	Reason    string `json:"reason"`
}

func toolReplies(vs ...toolVerdict) map[string][]string {
	return map[string][]string{
		SchemaToolUseVerdicts: {mustJSON(map[string]any{"verdicts": vs})},
		SchemaReason:          {`{"reason": "judge reason"}`},
	}
}

// threeCalls is a run with three tool calls: a lookup, its repeat and an
// unrelated booking.
func threeCalls() Case {
	return Case{
		Input:  "What's the weather in Lyon tomorrow?",
		Output: "Tomorrow Lyon will be sunny.",
		Trajectory: &Trajectory{Steps: []Step{
			gen("", call("c1", "get_weather", `{"city":"Lyon"}`)),
			toolStep("c1", "get_weather", "", "rain"),
			gen("", call("c2", "get_weather", `{"city":"Lyon"}`)),
			toolStep("c2", "get_weather", "", "rain"),
			gen("", call("c3", "book_taxi", "to the airport")),
			toolStep("c3", "book_taxi", "", "booked"),
			gen("Tomorrow Lyon will be sunny."),
		}},
	}
}

func TestToolUseScore(t *testing.T) {
	ok := func(n int) toolVerdict { return toolVerdict{n, "yes", "yes", "yes", "fine"} }
	tests := []struct {
		name     string
		verdicts []toolVerdict
		opts     Options
		score    float64
		label    Label
	}{
		{"all appropriate", []toolVerdict{ok(1), ok(2), ok(3)}, Options{}, 1, LabelPass},
		{"wrong tool", []toolVerdict{ok(1), {2, "no", "yes", "yes", "repeat"}, ok(3)}, Options{}, 0.67, LabelPass},
		{"unsupported arguments", []toolVerdict{ok(1), ok(2), {3, "yes", "no", "n/a", "invented"}}, Options{}, 0.67, LabelPass},
		{"both faults on one call count once", []toolVerdict{{1, "no", "no", "n/a", "x"}, ok(2), ok(3)}, Options{}, 0.67, LabelPass},
		{"unused results do not count", []toolVerdict{{1, "yes", "yes", "no", "ignored"}, {2, "yes", "yes", "no", "ignored"}, ok(3)}, Options{}, 1, LabelPass},
		{"two of three faulty", []toolVerdict{{1, "no", "yes", "yes", "a"}, {2, "yes", "no", "yes", "b"}, ok(3)}, Options{}, 0.33, LabelFail},
		{"strict", []toolVerdict{ok(1), ok(2), {3, "no", "yes", "yes", "c"}}, Options{StrictMode: true}, 0, LabelFail},
		{"scale", []toolVerdict{ok(1), ok(2), {3, "no", "yes", "yes", "c"}}, Options{Scale: 3, Threshold: ptr(2.0)}, 2, LabelPass},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := newJudge(toolReplies(tc.verdicts...))
			res := mustNew(t, ToolUse, j, tc.opts).Score(context.Background(), threeCalls())
			require.NoError(t, res.Err)
			assert.InDelta(t, tc.score, res.Score, 1e-12)
			assert.Equal(t, tc.label, res.Label)
			assert.Equal(t, []string{SchemaToolUseVerdicts, SchemaReason}, j.schemas())
			got := res.Steps.Analyze.(ToolCallVerdicts).Verdicts
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
	j := newJudge(toolReplies(toolVerdict{1, "yes", "yes", "yes", ""}, toolVerdict{2, "no", "yes", "no", ""}, toolVerdict{3, "no", "no", "n/a", ""}))
	res := mustNew(t, ToolUse, j, Options{}).Score(context.Background(), threeCalls())
	require.NoError(t, res.Err)
	user := j.requests()[0].Messages[1].Content
	assert.True(t, strings.HasPrefix(user, "Judge each of the 3 tool calls of this agent run, numbered 1 to 3 in the trajectory. Return exactly 3 verdicts, in call order."), user)
	assert.Contains(t, user, `{"step":5,"kind":"generation","tool_calls":[{"call":3,"tool":"book_taxi","arguments":"to the airport"}]}`)
	assert.Contains(t, user, "<<<OUTPUT\n\"Tomorrow Lyon will be sunny.\"\nOUTPUT>>>")
	sys := j.requests()[0].Messages[0].Content
	for _, want := range []string{"right_tool", "arguments_supported", "result_used", "plain text instead of JSON are not a fault", "what the agent knew at that point"} {
		assert.Contains(t, sys, want)
	}
	reasonSys := j.requests()[1].Messages[0].Content
	assert.Contains(t, reasonSys, "tool use score")
	assert.Contains(t, reasonSys, `"result_used" is reported but does not change the score`)
}

func TestToolUseNotScorable(t *testing.T) {
	tests := []struct {
		name   string
		c      Case
		reason string
	}{
		{"no trajectory", Case{Input: "q", Output: "a"}, "has no trajectory"},
		{"agent with no tools", Case{Input: "Say hi.", Output: "Hi!", Trajectory: &Trajectory{Steps: []Step{gen("Hi!")}}}, "made no tool calls"},
		{"only omitted steps", Case{Output: "a", Trajectory: &Trajectory{Steps: []Step{{Kind: StepOmitted, Count: 4}}}}, "has no trajectory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := newJudge(nil)
			res := mustNew(t, ToolUse, j, Options{}).Score(context.Background(), tc.c)
			assert.Equal(t, LabelNotScorable, res.Label)
			assert.Contains(t, res.Reason, tc.reason)
			assert.Empty(t, j.requests())
		})
	}
}

func TestToolUseParsing(t *testing.T) {
	calls, _ := trajectoryCalls(threeCalls().Trajectory)
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
			got, err := parseToolCallVerdicts(tc.reply, calls, nil)
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
	j := newJudge(nil).
		add(SchemaToolUseVerdicts, reply(`{"verdicts": [{"call": 1, "right_tool": "maybe", "arguments_supported": "yes"}]}`, "stop")).
		add(SchemaToolUseVerdicts, reply(mustJSON(map[string]any{"verdicts": []toolVerdict{
			{1, "yes", "yes", "no", "The answer says sunny though the tool said rain."},
			{2, "no", "yes", "no", "It repeats call 1."},
			{3, "no", "no", "n/a", "Nobody asked for a taxi."},
		}}), "stop"))
	res := mustNew(t, ToolUse, j, Options{ReasonMode: ReasonSummary}).Score(context.Background(), threeCalls())
	require.NoError(t, res.Err)
	assert.Equal(t, 2, res.Usage.LLMCalls)
	assert.Equal(t, 0.33, res.Score)
	assert.Equal(t, "The score is 0.33 because 1 of 3 tool calls were appropriate; not appropriate: call 2 get_weather (It repeats call 1); "+
		"call 3 book_taxi (Nobody asked for a taxi); the results of calls 1, 2 were not used.", res.Reason)

	j = newJudge(toolReplies(toolVerdict{1, "yes", "yes", "yes", ""}, toolVerdict{2, "yes", "yes", "yes", ""}, toolVerdict{3, "yes", "yes", "no", ""}))
	res = mustNew(t, ToolUse, j, Options{ReasonMode: ReasonSummary}).Score(context.Background(), threeCalls())
	assert.Equal(t, "The score is 1 because all 3 tool calls were appropriate; the result of call 3 was not used.", res.Reason)
}

func TestToolUseJudgeFailureTyped(t *testing.T) {
	j := newJudge(nil).add(SchemaToolUseVerdicts, scriptedReply{err: &Error{Type: ErrorJudgeRateLimited, Status: 429, Err: errors.New("slow down")}})
	res := mustNew(t, ToolUse, j, Options{}).Score(context.Background(), threeCalls())
	var e *Error
	require.True(t, errors.As(res.Err, &e))
	assert.Equal(t, ErrorJudgeRateLimited, e.Type)
	assert.Equal(t, StepAnalyze, e.Step)
	assert.Equal(t, LabelError, res.Label)
}

// TestToolUseNonJSONArgumentsAndOrphans covers arguments that are not JSON
// and tool steps whose request was never recorded: both reach the judge as
// calls of their own.
func TestToolUseNonJSONArgumentsAndOrphans(t *testing.T) {
	c := Case{Input: "Add 2 and 2, then look up Oslo.", Output: "4; Oslo is in Norway.", Trajectory: &Trajectory{Steps: []Step{
		toolStep("", "calculator", "2 + 2", "4"),
		gen("", call("", "wiki", "Oslo {unclosed")),
		toolStep("", "wiki", "", "Oslo is the capital of Norway."),
	}}}
	j := newJudge(toolReplies(toolVerdict{1, "yes", "yes", "yes", ""}, toolVerdict{2, "yes", "yes", "yes", ""}))
	res := mustNew(t, ToolUse, j, Options{OmitReason: true}).Score(context.Background(), c)
	require.NoError(t, res.Err)
	user := j.requests()[0].Messages[1].Content
	assert.Contains(t, user, `{"step":1,"kind":"tool","call":1,"tool":"calculator","arguments":"2 + 2","result":"4"}`)
	assert.Contains(t, user, `"arguments":"Oslo {unclosed"`)
	assert.Contains(t, user, "Judge each of the 2 tool calls")
}
