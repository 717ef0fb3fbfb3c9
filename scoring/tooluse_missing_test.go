package scoring

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// orderTools are the tools of the order runs below.
var orderTools = []ToolDefinition{
	{Name: "get_order", Description: "Looks up an order by its number."},
	{Name: "cancel_order", Description: "Cancels an order."},
	{Name: "send_email"},
}

// orderRun is a request to cancel an order: with lookup, the run looks the
// order up; without, it only answers.
func orderRun(lookup bool, tools []ToolDefinition, extra ...Step) Case {
	steps := []Step{}
	if lookup {
		steps = append(steps, gen("", call("c1", "get_order", `{"id":"5512"}`)), toolStep("c1", "get_order", "", `{"status":"processing"}`))
	}
	steps = append(steps, extra...)
	steps = append(steps, gen("Your order 5512 has been cancelled."))
	return Case{
		Input:      "Cancel my order 5512.",
		Output:     "Your order 5512 has been cancelled.",
		Trajectory: &Trajectory{Steps: steps, Tools: tools},
	}
}

func toolUseReply(verdicts []toolVerdict, missing ...any) string {
	if verdicts == nil {
		verdicts = []toolVerdict{}
	}
	if missing == nil {
		missing = []any{}
	}
	return mustJSON(map[string]any{"verdicts": verdicts, "missing_tools": missing})
}

func TestToolUseMissingTools(t *testing.T) {
	okCall := []toolVerdict{{1, "yes", "yes", "yes", "fine"}}
	cancel := map[string]string{"tool": "cancel_order", "reason": "The user asked for a cancellation."}
	tests := []struct {
		name        string
		c           Case
		replies     []string
		score       float64
		label       Label
		missing     []string
		notCounted  bool
		judgeCalls  int
		wantInBlock string
	}{
		{"no call, a needed tool never called fails", orderRun(false, orderTools), []string{toolUseReply(nil, cancel)}, 0, LabelFail, []string{"cancel_order"}, false, 1, `"tool":"cancel_order","description":"Cancels an order."`},
		{"no call and none needed passes", orderRun(false, orderTools), []string{toolUseReply(nil)}, 1, LabelPass, nil, false, 1, `"tool":"send_email"`},
		{"a missing tool counts like a faulty call", orderRun(true, orderTools), []string{toolUseReply(okCall, cancel)}, 0.5, LabelPass, []string{"cancel_order"}, false, 1, ""},
		{"a missing tool named twice counts once", orderRun(true, orderTools), []string{toolUseReply(okCall, cancel, "cancel_order")}, 0.5, LabelPass, []string{"cancel_order"}, false, 1, ""},
		{"a name differing in case is matched", orderRun(true, orderTools), []string{toolUseReply(okCall, map[string]string{"tool": " Cancel_Order ", "reason": "r"})}, 0.5, LabelPass, []string{"cancel_order"}, false, 1, ""},
		{"an unknown tool is re-asked", orderRun(true, orderTools), []string{toolUseReply(okCall, map[string]string{"tool": "refund", "reason": "r"}), toolUseReply(okCall, cancel)}, 0.5, LabelPass, []string{"cancel_order"}, false, 2, ""},
		{"a called tool listed missing is re-asked", orderRun(true, orderTools), []string{toolUseReply(okCall, map[string]string{"tool": "get_order", "reason": "r"}), toolUseReply(okCall)}, 1, LabelPass, nil, false, 2, ""},
		{"no missing_tools list with tools known is re-asked", orderRun(true, orderTools), []string{mustJSON(map[string]any{"verdicts": okCall}), toolUseReply(okCall)}, 1, LabelPass, nil, false, 2, ""},
		{"missing tools after left-out steps do not count", orderRun(true, orderTools, Step{Kind: StepOmitted, Count: 4}), []string{toolUseReply(okCall, cancel)}, 1, LabelPass, []string{"cancel_order"}, true, 1, "return an empty missing_tools list"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := newJudge(map[string][]string{SchemaToolUseVerdicts: tc.replies})
			res := mustNew(t, ToolUse, j, Options{ReasonMode: ReasonSummary}).Score(context.Background(), tc.c)
			require.NoError(t, res.Err)
			assert.Equal(t, tc.label, res.Label, res.Reason)
			assert.InDelta(t, tc.score, res.Score, 1e-12)
			got := res.Steps.Analyze.(ToolCallVerdicts)
			var names []string
			for _, m := range got.Missing {
				names = append(names, m.Tool)
			}
			assert.Equal(t, tc.missing, names)
			assert.Equal(t, tc.notCounted, got.MissingNotCounted)
			reqs := j.requests()
			assert.Len(t, reqs, tc.judgeCalls)
			user := reqs[0].Messages[1].Content
			assert.Contains(t, user, "<<<TOOLS\n")
			if tc.wantInBlock != "" {
				assert.Contains(t, user, tc.wantInBlock)
			}
			for _, m := range tc.missing {
				assert.Contains(t, res.Reason, m)
			}
		})
	}
}

// TestToolUseWithoutCalls checks which runs without tool calls are judged:
// those whose tools are known.
func TestToolUseWithoutCalls(t *testing.T) {
	tests := []struct {
		name  string
		c     Case
		label Label
	}{
		{"tools known", orderRun(false, orderTools), LabelFail},
		{"tools unknown", orderRun(false, nil), LabelNotScorable},
		{"tools known but steps left out", orderRun(false, orderTools, Step{Kind: StepOmitted, Count: 2}), LabelNotScorable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := newJudge(map[string][]string{SchemaToolUseVerdicts: {toolUseReply(nil, "cancel_order")}})
			res := mustNew(t, ToolUse, j, Options{ReasonMode: ReasonSummary}).Score(context.Background(), tc.c)
			require.NoError(t, res.Err)
			assert.Equal(t, tc.label, res.Label)
			if tc.label == LabelNotScorable {
				assert.Empty(t, j.requests())
			}
		})
	}
}

// TestToolUseToolsUnknown checks that with no tool list the judge may name
// no missing tool: the request says so, and a reply naming one is re-asked.
func TestToolUseToolsUnknown(t *testing.T) {
	okCall := []toolVerdict{{1, "yes", "yes", "yes", "fine"}}
	j := newJudge(map[string][]string{SchemaToolUseVerdicts: {toolUseReply(okCall, "cancel_order"), mustJSON(map[string]any{"verdicts": okCall})}})
	res := mustNew(t, ToolUse, j, Options{ReasonMode: ReasonSummary}).Score(context.Background(), orderRun(true, nil))
	require.NoError(t, res.Err)
	assert.Equal(t, 1.0, res.Score)
	reqs := j.requests()
	require.Len(t, reqs, 2)
	assert.NotContains(t, reqs[0].Messages[1].Content, "<<<TOOLS")
	assert.Contains(t, reqs[0].Messages[1].Content, "The tools the agent had are not known")
	assert.Contains(t, reqs[1].Messages[3].Content, "must be empty")
}

// TestToolsPrepared checks the tool list as the judge gets it: one per
// name, redacted, descriptions capped, at most maxTrajectoryTools, and
// seen by tool_use only.
func TestToolsPrepared(t *testing.T) {
	tools := []ToolDefinition{{Name: "a"}, {Name: "a", Description: "secret first description"}, {Name: "b", Description: strings.Repeat("x", maxToolDescriptionChars+5)}}
	for i := range maxTrajectoryTools {
		tools = append(tools, ToolDefinition{Name: "t" + strings.Repeat("1", i+1)})
	}
	redact := func(s string) string { return strings.ReplaceAll(s, "secret", "[REDACTED]") }
	c := Case{Input: "q", Output: "a", Trajectory: &Trajectory{Steps: []Step{gen("a")}, Tools: tools}}

	s := mustNew(t, ToolUse, newJudge(nil), Options{Redact: redact})
	out, _, truncated, err := s.prepare(c)
	require.NoError(t, err)
	assert.True(t, truncated)
	got := out.Trajectory.Tools
	require.Len(t, got, maxTrajectoryTools)
	assert.Equal(t, ToolDefinition{Name: "a", Description: "[REDACTED] first description"}, got[0])
	assert.Equal(t, strings.Repeat("x", maxToolDescriptionChars)+TruncationMarker, got[1].Description)
	assert.Len(t, tools, maxTrajectoryTools+3, "the caller's list is untouched")

	tc := mustNew(t, TaskCompletion, newJudge(nil), Options{Redact: redact})
	out, _, truncated, err = tc.prepare(c)
	require.NoError(t, err)
	assert.False(t, truncated, "task_completion does not send the tools, so cutting them is no truncation of its")
	assert.Nil(t, out.Trajectory.Tools)
}

func TestTrajectoryValidateTools(t *testing.T) {
	err := (&Trajectory{Tools: []ToolDefinition{{Name: "ok"}, {Name: " "}}}).Validate()
	assert.ErrorContains(t, err, "trajectory tool 1: a tool needs a name")
	assert.NoError(t, (&Trajectory{Tools: []ToolDefinition{{Name: "ok"}}}).Validate())
}
