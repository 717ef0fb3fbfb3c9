package scoring

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// trajectoryRuleCase is one trajectory checked against one rule.
type trajectoryRuleCase struct {
	name       string
	rule       CheckRule
	trajectory *Trajectory
	pass       bool
	detail     string
}

func runTrajectoryRuleCases(t *testing.T, cases []trajectoryRuleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewChecks([]CheckRule{tc.rule}, Options{})
			require.NoError(t, err)
			res := s.Score(context.Background(), Case{Output: "final answer", Trajectory: tc.trajectory})
			v := res.Steps.Analyze.(CheckVerdicts).Verdicts
			require.Len(t, v, 1)
			assert.Equal(t, tc.pass, v[0].Passed, "detail: %s", v[0].Detail)
			assert.False(t, v[0].Skipped)
			assert.Equal(t, tc.detail, v[0].Detail)
			assert.Equal(t, map[bool]Label{true: LabelPass, false: LabelFail}[tc.pass], res.Label)
			assert.Zero(t, res.Usage.LLMCalls)
		})
	}
}

// noToolsRun is an agent that answered without tools.
func noToolsRun() *Trajectory {
	return &Trajectory{Steps: []Step{gen("Let me think."), gen("Hello! How can I help?")}}
}

// erroringRun has two failed executions of one tool and one of another.
func erroringRun() *Trajectory {
	return &Trajectory{Steps: []Step{
		gen("", call("a", "fetch", "https://x"), call("b", "fetch", "https://y"), call("c", "parse", "<html>")),
		failedStep("a", "fetch", "", "timeout"),
		failedStep("b", "fetch", "", "error"),
		{Kind: StepTool, Tool: "parse", CallID: "c", Result: "partial", Error: "malformed"},
		gen("Sorry, the pages did not load."),
	}}
}

func TestCheckToolErrors(t *testing.T) {
	runTrajectoryRuleCases(t, []trajectoryRuleCase{
		{"none", CheckRule{Type: RuleToolErrors}, weatherRun(), true, "0 tool executions ended in error, want at most 0"},
		{"default max is 0", CheckRule{Type: RuleToolErrors}, erroringRun(), false, "3 tool executions ended in error (fetch 2, parse 1), want at most 0"},
		{"within max", CheckRule{Type: RuleToolErrors, Max: ptr(3)}, erroringRun(), true, "3 tool executions ended in error (fetch 2, parse 1), want at most 3"},
		{"agent with no tools", CheckRule{Type: RuleToolErrors}, noToolsRun(), true, "0 tool executions ended in error, want at most 0"},
		{"error texts are never quoted", CheckRule{Type: RuleToolErrors}, &Trajectory{Steps: []Step{failedStep("", "db", "", "password=hunter2 rejected")}},
			false, "1 tool execution ended in error (db 1), want at most 0"},
		{"a failed model call is no tool error", CheckRule{Type: RuleToolErrors}, &Trajectory{Steps: []Step{{Kind: StepGeneration, Error: "429"}, gen("Sorry.")}},
			true, "0 tool executions ended in error, want at most 0"},
	})
}

func TestCheckMaxSteps(t *testing.T) {
	runTrajectoryRuleCases(t, []trajectoryRuleCase{
		{"within", CheckRule{Type: RuleMaxSteps, Max: ptr(3)}, weatherRun(), true, "3 steps, want at most 3"},
		{"over", CheckRule{Type: RuleMaxSteps, Max: ptr(2)}, weatherRun(), false, "3 steps, want at most 2"},
		{"omitted steps count", CheckRule{Type: RuleMaxSteps, Max: ptr(20)},
			&Trajectory{Steps: []Step{gen("a"), {Kind: StepOmitted, Count: 30}, gen("b")}}, false, "32 steps, want at most 20"},
	})
}

func TestCheckRepeatedToolCalls(t *testing.T) {
	runTrajectoryRuleCases(t, []trajectoryRuleCase{
		{"a loop", CheckRule{Type: RuleRepeatedToolCalls}, loopRun(6), false, "search called 6 times with the same arguments, want at most 2"},
		{"a retry is allowed by default", CheckRule{Type: RuleRepeatedToolCalls}, loopRun(2), true, "search called 2 times with the same arguments, want at most 2"},
		{"max 1 forbids any repeat", CheckRule{Type: RuleRepeatedToolCalls, Max: ptr(1)}, loopRun(2), false, "search called 2 times with the same arguments, want at most 1"},
		{"no repeat", CheckRule{Type: RuleRepeatedToolCalls}, weatherRun(), true, "no call repeated among 1 tool call, want at most 2 of each"},
		{"JSON arguments compared by value", CheckRule{Type: RuleRepeatedToolCalls, Max: ptr(1)}, &Trajectory{Steps: []Step{
			gen("", call("", "search", `{"q": "oslo", "n": 5}`)),
			gen("", call("", "search", `{"n":5,"q":"oslo"}`)),
		}}, false, "search called 2 times with the same arguments, want at most 1"},
		{"arguments that are not JSON", CheckRule{Type: RuleRepeatedToolCalls, Max: ptr(1)}, &Trajectory{Steps: []Step{
			gen("", call("", "shell", "ls -la /tmp")),
			toolStep("", "shell", "", "..."),
			gen("", call("", "shell", "  ls -la /tmp ")),
			gen("", call("", "shell", "ls /tmp")),
		}}, false, "shell called 2 times with the same arguments, want at most 1"},
		{"different arguments are no loop", CheckRule{Type: RuleRepeatedToolCalls, Max: ptr(1)}, &Trajectory{Steps: []Step{
			gen("", call("", "search", `{"q":"a"}`), call("", "search", `{"q":"b"}`)),
		}}, true, "no call repeated among 2 tool calls, want at most 1 of each"},
		{"request and execution are one call", CheckRule{Type: RuleRepeatedToolCalls, Max: ptr(1)}, weatherRun(), true,
			"no call repeated among 1 tool call, want at most 1 of each"},
		{"agent with no tools", CheckRule{Type: RuleRepeatedToolCalls}, noToolsRun(), true, "no call repeated among 0 tool calls, want at most 2 of each"},
	})
}

func TestCheckRequiredAndForbiddenTools(t *testing.T) {
	runTrajectoryRuleCases(t, []trajectoryRuleCase{
		{"required called", CheckRule{Type: RuleRequiredTools, Tools: []string{"get_weather"}}, weatherRun(), true, "all 1 required tool called"},
		{"required missing", CheckRule{Type: RuleRequiredTools, Tools: []string{"get_weather", "get_forecast", "geo"}}, weatherRun(), false, "not called: get_forecast, geo"},
		{"names are exact", CheckRule{Type: RuleRequiredTools, Tools: []string{"Get_Weather"}}, weatherRun(), false, "not called: Get_Weather"},
		{"requested but not executed counts", CheckRule{Type: RuleRequiredTools, Tools: []string{"send_mail"}},
			&Trajectory{Steps: []Step{gen("", call("", "send_mail", "{}"))}}, true, "all 1 required tool called"},
		{"executed without a request counts", CheckRule{Type: RuleRequiredTools, Tools: []string{"calculator"}},
			&Trajectory{Steps: []Step{toolStep("", "calculator", "1+1", "2")}}, true, "all 1 required tool called"},
		{"agent with no tools", CheckRule{Type: RuleRequiredTools, Tools: []string{"search"}}, noToolsRun(), false, "not called: search"},
		{"forbidden not called", CheckRule{Type: RuleForbiddenTools, Tools: []string{"delete_account", "refund"}}, weatherRun(), true, "none of 2 forbidden tools called"},
		{"forbidden called", CheckRule{Type: RuleForbiddenTools, Tools: []string{"delete_account", "search"}}, loopRun(3), false, "called: search (3 times)"},
	})
}

// TestTrajectoryRulesWithoutTrajectory: a trajectory rule on a case without
// one is skipped, not failed; output rules still count; a case on which
// every rule is skipped is not scorable.
func TestTrajectoryRulesWithoutTrajectory(t *testing.T) {
	rules := []CheckRule{{Type: RuleToolErrors}, {Type: RuleWords, Max: ptr(3)}, {Type: RuleRequiredTools, Tools: []string{"search"}}}
	s, err := NewChecks(rules, Options{})
	require.NoError(t, err)

	for _, tr := range []*Trajectory{nil, {}, {Steps: []Step{{Kind: StepOmitted, Count: 2}}}} {
		res := s.Score(context.Background(), Case{Output: "a short answer", Trajectory: tr})
		assert.Equal(t, LabelPass, res.Label)
		assert.Equal(t, 1.0, res.Score)
		v := res.Steps.Analyze.(CheckVerdicts).Verdicts
		assert.True(t, v[0].Skipped)
		assert.False(t, v[1].Skipped)
		assert.True(t, v[2].Skipped)
		assert.Equal(t, "skipped: the case has no trajectory", v[0].Detail)
		assert.Equal(t, "1 of 1 checks passed; skipped (no trajectory): #0 tool_errors, #2 required_tools.", res.Reason)
	}

	res := s.Score(context.Background(), Case{Output: "far too many words here", Trajectory: loopRun(1)})
	assert.Equal(t, 0.67, res.Score)
	assert.Equal(t, LabelFail, res.Label)
	assert.Equal(t, "2 of 3 checks passed; failed: #1 words (5 words, want at most 3).", res.Reason)

	only, err := NewChecks([]CheckRule{{Type: RuleToolErrors}, {Type: RuleMaxSteps, Max: ptr(10)}}, Options{})
	require.NoError(t, err)
	res = only.Score(context.Background(), Case{Output: "hello"})
	assert.Equal(t, LabelNotScorable, res.Label)
	assert.Zero(t, res.Score)
	assert.Equal(t, "The case has no trajectory (agent steps), and every rule reads one: #0 tool_errors, #1 max_steps.", res.Reason)
	assert.Len(t, res.Steps.Analyze.(CheckVerdicts).Verdicts, 2)
}

// TestTrajectoryRulesOnLongRun runs every trajectory rule over a 5,000-step
// loop: the rules see the whole run (no bound applies to them), and the
// detail stays one short line.
func TestTrajectoryRulesOnLongRun(t *testing.T) {
	tr := loopRun(2500)
	for i := 1; i < len(tr.Steps); i += 4 {
		tr.Steps[i].Error = "rate limited"
	}
	s, err := NewChecks([]CheckRule{
		{Type: RuleToolErrors, Max: ptr(10)},
		{Type: RuleMaxSteps, Max: ptr(100)},
		{Type: RuleRepeatedToolCalls},
		{Type: RuleRequiredTools, Tools: []string{"search"}},
		{Type: RuleForbiddenTools, Tools: []string{"book"}},
	}, Options{})
	require.NoError(t, err)
	res := s.Score(context.Background(), Case{Output: "none", Trajectory: tr})
	v := res.Steps.Analyze.(CheckVerdicts).Verdicts
	assert.Equal(t, "1250 tool executions ended in error (search 1250), want at most 10", v[0].Detail)
	assert.Equal(t, "5001 steps, want at most 100", v[1].Detail)
	assert.Equal(t, "search called 2500 times with the same arguments, want at most 2", v[2].Detail)
	assert.True(t, v[3].Passed)
	assert.True(t, v[4].Passed)
	assert.InDelta(t, 0.4, res.Score, 1e-12)
	assert.Less(t, len(res.Reason), 400)
}

func TestTrajectoryRuleDetailsCapNames(t *testing.T) {
	var steps []Step
	for i := range 8 {
		steps = append(steps, failedStep("", fmt.Sprintf("tool%d", i), "", "x"))
	}
	steps = append(steps, failedStep("", strings.Repeat("n", 1000), "", "x"))
	s, err := NewChecks([]CheckRule{{Type: RuleToolErrors}}, Options{})
	require.NoError(t, err)
	res := s.Score(context.Background(), Case{Trajectory: &Trajectory{Steps: steps}})
	d := res.Steps.Analyze.(CheckVerdicts).Verdicts[0].Detail
	assert.Equal(t, "9 tool executions ended in error (tool0 1, tool1 1, tool2 1, tool3 1, tool4 1 and 4 more), want at most 0", d)

	s, err = NewChecks([]CheckRule{{Type: RuleRepeatedToolCalls, Max: ptr(1)}}, Options{})
	require.NoError(t, err)
	long := strings.Repeat("n", 1000)
	res = s.Score(context.Background(), Case{Trajectory: &Trajectory{Steps: []Step{gen("", call("", long, "a"), call("", long, "a"))}}})
	d = res.Steps.Analyze.(CheckVerdicts).Verdicts[0].Detail
	assert.Less(t, len(d), 300)
}

func TestTrajectoryRulesRejectBadConfig(t *testing.T) {
	tests := []struct {
		rule CheckRule
		want string
	}{
		{CheckRule{Type: RuleMaxSteps}, "rules::0::max: missing; set the most steps a run may take"},
		{CheckRule{Type: RuleToolErrors, Max: ptr(-1)}, "rules::0::max: must not be negative, got -1"},
		{CheckRule{Type: RuleToolErrors, Min: ptr(1)}, "rules::0::min: not used by rule type tool_errors"},
		{CheckRule{Type: RuleRepeatedToolCalls, Value: "x"}, "rules::0::value: not used by rule type repeated_tool_calls"},
		{CheckRule{Type: RuleRequiredTools}, "rules::0::tools: missing; list the tool names"},
		{CheckRule{Type: RuleForbiddenTools, Tools: []string{"a", " "}}, "rules::0::tools::1: empty tool name"},
		{CheckRule{Type: RuleForbiddenTools, Tools: []string{"a"}, Max: ptr(1)}, "rules::0::max: not used by rule type forbidden_tools"},
		{CheckRule{Type: RuleWords, Max: ptr(3), Tools: []string{"a"}}, "rules::0::tools: not used by rule type words"},
	}
	for _, tc := range tests {
		_, err := NewChecks([]CheckRule{tc.rule}, Options{})
		assert.EqualError(t, err, tc.want)
	}
	for _, typ := range RuleTypes() {
		want := typ == RuleToolErrors || typ == RuleMaxSteps || typ == RuleRepeatedToolCalls || typ == RuleRequiredTools || typ == RuleForbiddenTools
		assert.Equal(t, want, TrajectoryRule(typ), typ)
	}
}

func TestNamedChecks(t *testing.T) {
	s, err := NewNamedChecks("tool_errors", []CheckRule{{Type: RuleToolErrors}}, Options{})
	require.NoError(t, err)
	assert.Equal(t, "tool_errors", s.Name())
	res := s.Score(context.Background(), Case{Trajectory: erroringRun()})
	assert.Equal(t, "tool_errors", res.Scorer)
	assert.Equal(t, LabelFail, res.Label)

	s, err = NewNamedChecks(Checks, []CheckRule{{Type: RuleNoPII}}, Options{})
	require.NoError(t, err)
	assert.Equal(t, Checks, s.Name())

	for name, want := range map[string]string{
		"Tool-Errors":   `name: "Tool-Errors" must be lowercase letters`,
		TaskCompletion:  `name: "task_completion" is a built-in scorer name`,
		Criteria:        `name: "criteria" is a built-in scorer name`,
		"":              `name: "" must be lowercase letters`,
		"fine_but_none": "rules: the checks scorer needs at least one rule",
	} {
		var rules []CheckRule
		if name != "fine_but_none" {
			rules = []CheckRule{{Type: RuleNoPII}}
		}
		_, err := NewNamedChecks(name, rules, Options{})
		assert.ErrorContains(t, err, want, name)
	}
}

// BenchmarkTrajectoryChecks measures the five trajectory rules over a
// 5,000-step run, the most a trajectory rule is expected to see.
func BenchmarkTrajectoryChecks(b *testing.B) {
	s, err := NewChecks([]CheckRule{
		{Type: RuleToolErrors}, {Type: RuleMaxSteps, Max: ptr(100)}, {Type: RuleRepeatedToolCalls},
		{Type: RuleRequiredTools, Tools: []string{"search"}}, {Type: RuleForbiddenTools, Tools: []string{"book"}},
	}, Options{})
	require.NoError(b, err)
	c := Case{Output: "none", Trajectory: loopRun(2500)}
	b.ReportAllocs()
	for b.Loop() {
		s.Score(context.Background(), c)
	}
}
