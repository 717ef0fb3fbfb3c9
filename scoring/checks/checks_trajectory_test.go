package checks

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
)

// trajectoryRuleCase is one trajectory checked against one rule.
type trajectoryRuleCase struct {
	name       string
	rule       Rule
	trajectory *scoring.Trajectory
	pass       bool
	detail     string
}

func runTrajectoryRuleCases(t *testing.T, cases []trajectoryRuleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New([]Rule{tc.rule}, scoring.Options{})
			require.NoError(t, err)
			res := s.Score(context.Background(), scoring.Case{Output: "final answer", Trajectory: tc.trajectory})
			v := res.Steps.Analyze.(Verdicts).Verdicts
			require.Len(t, v, 1)
			assert.Equal(t, tc.pass, v[0].Passed, "detail: %s", v[0].Detail)
			assert.False(t, v[0].Skipped)
			assert.Equal(t, tc.detail, v[0].Detail)
			assert.Equal(t, map[bool]scoring.Label{true: scoring.LabelPass, false: scoring.LabelFail}[tc.pass], res.Label)
			assert.Zero(t, res.Usage.LLMCalls)
		})
	}
}

// noToolsRun is an agent that answered without tools.
func noToolsRun() *scoring.Trajectory {
	return &scoring.Trajectory{Steps: []scoring.Step{testkit.Gen("Let me think."), testkit.Gen("Hello! How can I help?")}}
}

// erroringRun has two failed executions of one tool and one of another.
func erroringRun() *scoring.Trajectory {
	return &scoring.Trajectory{Steps: []scoring.Step{
		testkit.Gen("", testkit.Call("a", "fetch", "https://x"), testkit.Call("b", "fetch", "https://y"), testkit.Call("c", "parse", "<html>")),
		testkit.FailedStep("a", "fetch", "", "timeout"),
		testkit.FailedStep("b", "fetch", "", "error"),
		{Kind: scoring.StepTool, Tool: "parse", CallID: "c", Result: "partial", Error: "malformed"},
		testkit.Gen("Sorry, the pages did not load."),
	}}
}

func TestCheckToolErrors(t *testing.T) {
	runTrajectoryRuleCases(t, []trajectoryRuleCase{
		{"none", Rule{Type: RuleToolErrors}, testkit.WeatherRun(), true, "0 tool executions ended in error, want at most 0"},
		{"default max is 0", Rule{Type: RuleToolErrors}, erroringRun(), false, "3 tool executions ended in error (fetch 2, parse 1), want at most 0"},
		{"within max", Rule{Type: RuleToolErrors, Max: testkit.Ptr(3)}, erroringRun(), true, "3 tool executions ended in error (fetch 2, parse 1), want at most 3"},
		{"agent with no tools", Rule{Type: RuleToolErrors}, noToolsRun(), true, "0 tool executions ended in error, want at most 0"},
		{"error texts are never quoted", Rule{Type: RuleToolErrors}, &scoring.Trajectory{Steps: []scoring.Step{testkit.FailedStep("", "db", "", "password=hunter2 rejected")}},
			false, "1 tool execution ended in error (db 1), want at most 0"},
		{"a failed model call is no tool error", Rule{Type: RuleToolErrors}, &scoring.Trajectory{Steps: []scoring.Step{{Kind: scoring.StepGeneration, Error: "429"}, testkit.Gen("Sorry.")}},
			true, "0 tool executions ended in error, want at most 0"},
	})
}

func TestCheckMaxSteps(t *testing.T) {
	runTrajectoryRuleCases(t, []trajectoryRuleCase{
		{"within", Rule{Type: RuleMaxSteps, Max: testkit.Ptr(3)}, testkit.WeatherRun(), true, "3 steps, want at most 3"},
		{"over", Rule{Type: RuleMaxSteps, Max: testkit.Ptr(2)}, testkit.WeatherRun(), false, "3 steps, want at most 2"},
		{"omitted steps count", Rule{Type: RuleMaxSteps, Max: testkit.Ptr(20)},
			&scoring.Trajectory{Steps: []scoring.Step{testkit.Gen("a"), {Kind: scoring.StepOmitted, Count: 30}, testkit.Gen("b")}}, false, "32 steps, want at most 20"},
	})
}

func TestCheckRepeatedToolCalls(t *testing.T) {
	runTrajectoryRuleCases(t, []trajectoryRuleCase{
		{"a loop", Rule{Type: RuleRepeatedToolCalls}, testkit.LoopRun(6), false, "search called 6 times with the same arguments, want at most 2"},
		{"a retry is allowed by default", Rule{Type: RuleRepeatedToolCalls}, testkit.LoopRun(2), true, "search called 2 times with the same arguments, want at most 2"},
		{"max 1 forbids any repeat", Rule{Type: RuleRepeatedToolCalls, Max: testkit.Ptr(1)}, testkit.LoopRun(2), false, "search called 2 times with the same arguments, want at most 1"},
		{"no repeat", Rule{Type: RuleRepeatedToolCalls}, testkit.WeatherRun(), true, "no call repeated among 1 tool call, want at most 2 of each"},
		{"JSON arguments compared by value", Rule{Type: RuleRepeatedToolCalls, Max: testkit.Ptr(1)}, &scoring.Trajectory{Steps: []scoring.Step{
			testkit.Gen("", testkit.Call("", "search", `{"q": "oslo", "n": 5}`)),
			testkit.Gen("", testkit.Call("", "search", `{"n":5,"q":"oslo"}`)),
		}}, false, "search called 2 times with the same arguments, want at most 1"},
		{"arguments that are not JSON", Rule{Type: RuleRepeatedToolCalls, Max: testkit.Ptr(1)}, &scoring.Trajectory{Steps: []scoring.Step{
			testkit.Gen("", testkit.Call("", "shell", "ls -la /tmp")),
			testkit.ToolStep("", "shell", "", "..."),
			testkit.Gen("", testkit.Call("", "shell", "  ls -la /tmp ")),
			testkit.Gen("", testkit.Call("", "shell", "ls /tmp")),
		}}, false, "shell called 2 times with the same arguments, want at most 1"},
		{"different arguments are no loop", Rule{Type: RuleRepeatedToolCalls, Max: testkit.Ptr(1)}, &scoring.Trajectory{Steps: []scoring.Step{
			testkit.Gen("", testkit.Call("", "search", `{"q":"a"}`), testkit.Call("", "search", `{"q":"b"}`)),
		}}, true, "no call repeated among 2 tool calls, want at most 1 of each"},
		{"request and execution are one call", Rule{Type: RuleRepeatedToolCalls, Max: testkit.Ptr(1)}, testkit.WeatherRun(), true,
			"no call repeated among 1 tool call, want at most 1 of each"},
		{"agent with no tools", Rule{Type: RuleRepeatedToolCalls}, noToolsRun(), true, "no call repeated among 0 tool calls, want at most 2 of each"},
	})
}

func TestCheckRequiredAndForbiddenTools(t *testing.T) {
	runTrajectoryRuleCases(t, []trajectoryRuleCase{
		{"required called", Rule{Type: RuleRequiredTools, Tools: []string{"get_weather"}}, testkit.WeatherRun(), true, "all 1 required tool called"},
		{"required missing", Rule{Type: RuleRequiredTools, Tools: []string{"get_weather", "get_forecast", "geo"}}, testkit.WeatherRun(), false, "not called: get_forecast, geo"},
		{"names are exact", Rule{Type: RuleRequiredTools, Tools: []string{"Get_Weather"}}, testkit.WeatherRun(), false, "not called: Get_Weather"},
		{"requested but not executed counts", Rule{Type: RuleRequiredTools, Tools: []string{"send_mail"}},
			&scoring.Trajectory{Steps: []scoring.Step{testkit.Gen("", testkit.Call("", "send_mail", "{}"))}}, true, "all 1 required tool called"},
		{"executed without a request counts", Rule{Type: RuleRequiredTools, Tools: []string{"calculator"}},
			&scoring.Trajectory{Steps: []scoring.Step{testkit.ToolStep("", "calculator", "1+1", "2")}}, true, "all 1 required tool called"},
		{"agent with no tools", Rule{Type: RuleRequiredTools, Tools: []string{"search"}}, noToolsRun(), false, "not called: search"},
		{"forbidden not called", Rule{Type: RuleForbiddenTools, Tools: []string{"delete_account", "refund"}}, testkit.WeatherRun(), true, "none of 2 forbidden tools called"},
		{"forbidden called", Rule{Type: RuleForbiddenTools, Tools: []string{"delete_account", "search"}}, testkit.LoopRun(3), false, "called: search (3 times)"},
	})
}

// TestTrajectoryRulesWithoutTrajectory: a trajectory rule on a case without
// one is skipped, not failed; output rules still count; a case on which
// every rule is skipped is not scorable.
func TestTrajectoryRulesWithoutTrajectory(t *testing.T) {
	rules := []Rule{{Type: RuleToolErrors}, {Type: RuleWords, Max: testkit.Ptr(3)}, {Type: RuleRequiredTools, Tools: []string{"search"}}}
	s, err := New(rules, scoring.Options{})
	require.NoError(t, err)

	for _, tr := range []*scoring.Trajectory{nil, {}, {Steps: []scoring.Step{{Kind: scoring.StepOmitted, Count: 2}}}} {
		res := s.Score(context.Background(), scoring.Case{Output: "a short answer", Trajectory: tr})
		assert.Equal(t, scoring.LabelPass, res.Label)
		assert.Equal(t, 1.0, res.Score)
		v := res.Steps.Analyze.(Verdicts).Verdicts
		assert.True(t, v[0].Skipped)
		assert.False(t, v[1].Skipped)
		assert.True(t, v[2].Skipped)
		assert.Equal(t, "skipped: the case has no trajectory", v[0].Detail)
		assert.Equal(t, "1 of 1 checks passed; skipped (no trajectory): #0 tool_errors, #2 required_tools.", res.Reason)
	}

	res := s.Score(context.Background(), scoring.Case{Output: "far too many words here", Trajectory: testkit.LoopRun(1)})
	assert.Equal(t, 0.67, res.Score)
	assert.Equal(t, scoring.LabelFail, res.Label)
	assert.Equal(t, "2 of 3 checks passed; failed: #1 words (5 words, want at most 3).", res.Reason)

	only, err := New([]Rule{{Type: RuleToolErrors}, {Type: RuleMaxSteps, Max: testkit.Ptr(10)}}, scoring.Options{})
	require.NoError(t, err)
	res = only.Score(context.Background(), scoring.Case{Output: "hello"})
	assert.Equal(t, scoring.LabelNotScorable, res.Label)
	assert.Zero(t, res.Score)
	assert.Equal(t, "The case has no trajectory (agent steps), and every rule reads one: #0 tool_errors, #1 max_steps.", res.Reason)
	assert.Len(t, res.Steps.Analyze.(Verdicts).Verdicts, 2)
}

// TestTrajectoryRulesOnLongRun runs every trajectory rule over a 5,000-step
// loop: the rules see the whole run (no bound applies to them), and the
// detail stays one short line.
func TestTrajectoryRulesOnLongRun(t *testing.T) {
	tr := testkit.LoopRun(2500)
	for i := 1; i < len(tr.Steps); i += 4 {
		tr.Steps[i].Error = "rate limited"
	}
	s, err := New([]Rule{
		{Type: RuleToolErrors, Max: testkit.Ptr(10)},
		{Type: RuleMaxSteps, Max: testkit.Ptr(100)},
		{Type: RuleRepeatedToolCalls},
		{Type: RuleRequiredTools, Tools: []string{"search"}},
		{Type: RuleForbiddenTools, Tools: []string{"book"}},
	}, scoring.Options{})
	require.NoError(t, err)
	res := s.Score(context.Background(), scoring.Case{Output: "none", Trajectory: tr})
	v := res.Steps.Analyze.(Verdicts).Verdicts
	assert.Equal(t, "1250 tool executions ended in error (search 1250), want at most 10", v[0].Detail)
	assert.Equal(t, "5001 steps, want at most 100", v[1].Detail)
	assert.Equal(t, "search called 2500 times with the same arguments, want at most 2", v[2].Detail)
	assert.True(t, v[3].Passed)
	assert.True(t, v[4].Passed)
	assert.InDelta(t, 0.4, res.Score, 1e-12)
	assert.Less(t, len(res.Reason), 400)
}

func TestTrajectoryRuleDetailsCapNames(t *testing.T) {
	var steps []scoring.Step
	for i := range 8 {
		steps = append(steps, testkit.FailedStep("", fmt.Sprintf("tool%d", i), "", "x"))
	}
	steps = append(steps, testkit.FailedStep("", strings.Repeat("n", 1000), "", "x"))
	s, err := New([]Rule{{Type: RuleToolErrors}}, scoring.Options{})
	require.NoError(t, err)
	res := s.Score(context.Background(), scoring.Case{Trajectory: &scoring.Trajectory{Steps: steps}})
	d := res.Steps.Analyze.(Verdicts).Verdicts[0].Detail
	assert.Equal(t, "9 tool executions ended in error (tool0 1, tool1 1, tool2 1, tool3 1, tool4 1 and 4 more), want at most 0", d)

	s, err = New([]Rule{{Type: RuleRepeatedToolCalls, Max: testkit.Ptr(1)}}, scoring.Options{})
	require.NoError(t, err)
	long := strings.Repeat("n", 1000)
	res = s.Score(context.Background(), scoring.Case{Trajectory: &scoring.Trajectory{Steps: []scoring.Step{testkit.Gen("", testkit.Call("", long, "a"), testkit.Call("", long, "a"))}}})
	d = res.Steps.Analyze.(Verdicts).Verdicts[0].Detail
	assert.Less(t, len(d), 300)
}

func TestTrajectoryRulesRejectBadConfig(t *testing.T) {
	tests := []struct {
		rule Rule
		want string
	}{
		{Rule{Type: RuleMaxSteps}, "rules::0::max: missing; set the most steps a run may take"},
		{Rule{Type: RuleToolErrors, Max: testkit.Ptr(-1)}, "rules::0::max: must not be negative, got -1"},
		{Rule{Type: RuleToolErrors, Min: testkit.Ptr(1)}, "rules::0::min: not used by rule type tool_errors"},
		{Rule{Type: RuleRepeatedToolCalls, Value: "x"}, "rules::0::value: not used by rule type repeated_tool_calls"},
		{Rule{Type: RuleRequiredTools}, "rules::0::tools: missing; list the tool names"},
		{Rule{Type: RuleForbiddenTools, Tools: []string{"a", " "}}, "rules::0::tools::1: empty tool name"},
		{Rule{Type: RuleForbiddenTools, Tools: []string{"a"}, Max: testkit.Ptr(1)}, "rules::0::max: not used by rule type forbidden_tools"},
		{Rule{Type: RuleWords, Max: testkit.Ptr(3), Tools: []string{"a"}}, "rules::0::tools: not used by rule type words"},
	}
	for _, tc := range tests {
		_, err := New([]Rule{tc.rule}, scoring.Options{})
		assert.EqualError(t, err, tc.want)
	}
	for _, typ := range RuleTypes() {
		want := typ == RuleToolErrors || typ == RuleMaxSteps || typ == RuleRepeatedToolCalls || typ == RuleRequiredTools || typ == RuleForbiddenTools
		assert.Equal(t, want, TrajectoryRule(typ), typ)
	}
}

func TestNamedChecks(t *testing.T) {
	s, err := NewNamed("tool_errors", []Rule{{Type: RuleToolErrors}}, scoring.Options{})
	require.NoError(t, err)
	assert.Equal(t, "tool_errors", s.Name())
	res := s.Score(context.Background(), scoring.Case{Trajectory: erroringRun()})
	assert.Equal(t, "tool_errors", res.Scorer)
	assert.Equal(t, scoring.LabelFail, res.Label)

	s, err = NewNamed(scoring.Checks, []Rule{{Type: RuleNoPII}}, scoring.Options{})
	require.NoError(t, err)
	assert.Equal(t, scoring.Checks, s.Name())

	for name, want := range map[string]string{
		"Tool-Errors":    `name: "Tool-Errors" must be lowercase letters`,
		scoring.Criteria: `name: "criteria" is a built-in scorer name`,
		"":               `name: "" must be lowercase letters`,
		"fine_but_none":  "rules: the checks scorer needs at least one rule",
	} {
		var rules []Rule
		if name != "fine_but_none" {
			rules = []Rule{{Type: RuleNoPII}}
		}
		_, err := NewNamed(name, rules, scoring.Options{})
		assert.ErrorContains(t, err, want, name)
	}
}

// BenchmarkTrajectoryChecks measures the five trajectory rules over a
// 5,000-step run, the most a trajectory rule is expected to see.
func BenchmarkTrajectoryChecks(b *testing.B) {
	s, err := New([]Rule{
		{Type: RuleToolErrors}, {Type: RuleMaxSteps, Max: testkit.Ptr(100)}, {Type: RuleRepeatedToolCalls},
		{Type: RuleRequiredTools, Tools: []string{"search"}}, {Type: RuleForbiddenTools, Tools: []string{"book"}},
	}, scoring.Options{})
	require.NoError(b, err)
	c := scoring.Case{Output: "none", Trajectory: testkit.LoopRun(2500)}
	b.ReportAllocs()
	for b.Loop() {
		s.Score(context.Background(), c)
	}
}

func TestCanonicalArguments(t *testing.T) {
	same := [][2]string{
		{`{"b": 1, "a": [1, 2]}`, `{"a":[1,2],"b":1}`},
		{"  plain text  ", "plain text"},
		{`{"n": 1.50}`, `{"n":1.50}`},
		{`{"q": "<b>"}`, `{"q":"<b>"}`},
	}
	for _, p := range same {
		assert.Equal(t, canonicalArguments(p[0]), canonicalArguments(p[1]), "%q vs %q", p[0], p[1])
	}
	differ := [][2]string{
		{`{"a": 1}`, `{"a": 2}`},
		{`{"a": 1}`, `{"a": "1"}`},
		{`{"a": 1`, `{"a": 1}`}, // cut off: kept as text
		{`not json {`, `not json`},
	}
	for _, p := range differ {
		assert.NotEqual(t, canonicalArguments(p[0]), canonicalArguments(p[1]), "%q vs %q", p[0], p[1])
	}
}
