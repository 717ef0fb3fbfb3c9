package pipeline

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
)

func TestTrajectoryCallsPairing(t *testing.T) {
	tests := []struct {
		name  string
		steps []scoring.Step
		want  []Call
	}{
		{"by id", []scoring.Step{
			testkit.Gen("", testkit.Call("a", "search", `{"q":1}`), testkit.Call("b", "search", `{"q":2}`)),
			testkit.ToolStep("b", "search", "", "two"),
			testkit.ToolStep("a", "search", "", "one"),
		}, []Call{
			{Number: 1, Tool: "search", Arguments: `{"q":1}`, Requested: true, Executed: true, Result: "one"},
			{Number: 2, Tool: "search", Arguments: `{"q":2}`, Requested: true, Executed: true, Result: "two"},
		}},
		{"by name in order when no ids", []scoring.Step{
			testkit.Gen("", testkit.Call("", "fetch", "u1"), testkit.Call("", "fetch", "u2")),
			testkit.ToolStep("", "fetch", "", "r1"),
			testkit.FailedStep("", "fetch", "", "timeout"),
		}, []Call{
			{Number: 1, Tool: "fetch", Arguments: "u1", Requested: true, Executed: true, Result: "r1"},
			{Number: 2, Tool: "fetch", Arguments: "u2", Requested: true, Executed: true, Error: "timeout"},
		}},
		{"an id-less execution does not take a call another step executes by id", []scoring.Step{
			testkit.Gen("", testkit.Call("x", "fetch", "u1"), testkit.Call("", "fetch", "u2")),
			testkit.ToolStep("", "fetch", "", "r2"),
			testkit.ToolStep("x", "fetch", "", "r1"),
		}, []Call{
			{Number: 1, Tool: "fetch", Arguments: "u1", Requested: true, Executed: true, Result: "r1"},
			{Number: 2, Tool: "fetch", Arguments: "u2", Requested: true, Executed: true, Result: "r2"},
		}},
		{"execution without a request (OpenInference TOOL spans only)", []scoring.Step{
			testkit.ToolStep("", "calculator", "2+2", "4"),
			testkit.Gen("It is 4."),
		}, []Call{
			{Number: 1, Tool: "calculator", Arguments: "2+2", Executed: true, Result: "4"},
		}},
		{"request whose execution was not recorded", []scoring.Step{
			testkit.Gen("", testkit.Call("z", "send_mail", `{"to":"a@b"}`)),
			testkit.Gen("Sent."),
		}, []Call{
			{Number: 1, Tool: "send_mail", Arguments: `{"to":"a@b"}`, Requested: true},
		}},
		{"execution of another tool is not paired by name", []scoring.Step{
			testkit.Gen("", testkit.Call("", "search", "q")),
			testkit.ToolStep("", "browse", "url", "page"),
		}, []Call{
			{Number: 1, Tool: "search", Arguments: "q", Requested: true},
			{Number: 2, Tool: "browse", Arguments: "url", Executed: true, Result: "page"},
		}},
		{"arguments from the execution when the request has none", []scoring.Step{
			testkit.Gen("", testkit.Call("k", "lookup", "")),
			testkit.ToolStep("k", "lookup", `{"id":7}`, "found"),
		}, []Call{
			{Number: 1, Tool: "lookup", Arguments: `{"id":7}`, Requested: true, Executed: true, Result: "found"},
		}},
		{"duplicate ids pair in order", []scoring.Step{
			testkit.Gen("", testkit.Call("d", "t", "1"), testkit.Call("d", "t", "2")),
			testkit.ToolStep("d", "t", "", "r1"),
			testkit.ToolStep("d", "t", "", "r2"),
		}, []Call{
			{Number: 1, Tool: "t", Arguments: "1", Requested: true, Executed: true, Result: "r1"},
			{Number: 2, Tool: "t", Arguments: "2", Requested: true, Executed: true, Result: "r2"},
		}},
		{"an execution never pairs with a later request", []scoring.Step{
			testkit.ToolStep("", "t", "early", "r0"),
			testkit.Gen("", testkit.Call("", "t", "late")),
		}, []Call{
			{Number: 1, Tool: "t", Arguments: "early", Executed: true, Result: "r0"},
			{Number: 2, Tool: "t", Arguments: "late", Requested: true},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := callsOf(&scoring.Trajectory{Steps: tc.steps})
			for i := range got {
				got[i].requestArgs = ""
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestHasSteps(t *testing.T) {
	assert.False(t, HasSteps(&scoring.Trajectory{Steps: []scoring.Step{{Kind: scoring.StepOmitted, Count: 3}}}))
	assert.False(t, HasSteps(&scoring.Trajectory{}))
	assert.True(t, HasSteps(testkit.WeatherRun()))
}

func TestBoundTrajectory(t *testing.T) {
	t.Run("short runs are kept", func(t *testing.T) {
		tr := testkit.WeatherRun()
		_, cut := boundTrajectory(tr, 50)
		assert.False(t, cut)
		assert.Equal(t, testkit.WeatherRun(), tr)
	})
	t.Run("5,000 steps keep the first and last and count the rest", func(t *testing.T) {
		tr := testkit.LoopRun(2500) // 5,001 steps, 2,500 calls
		total := tr.StepCount()
		_, cut := boundTrajectory(tr, 50)
		require.True(t, cut)
		assert.Equal(t, total, tr.StepCount(), "the omitted step counts what it replaced")
		cost := 0
		gaps := 0
		for _, s := range tr.Steps {
			if s.Kind == scoring.StepOmitted {
				gaps++
				continue
			}
			cost += max(1, len(s.ToolCalls))
		}
		assert.Equal(t, 1, gaps)
		assert.LessOrEqual(t, cost+1, 50)
		assert.Equal(t, "I could not find flights.", tr.Steps[len(tr.Steps)-1].Output, "the final step is kept")
		assert.Equal(t, "search", tr.Steps[0].ToolCalls[0].Name, "the first step is kept")
	})
	t.Run("a step with many calls keeps half the budget of them", func(t *testing.T) {
		var calls []scoring.ToolCall
		for i := range 30 {
			calls = append(calls, testkit.Call(fmt.Sprint(i), "t", fmt.Sprint(i)))
		}
		tr := &scoring.Trajectory{Steps: []scoring.Step{testkit.Gen("", calls...), testkit.Gen("done")}}
		b, cut := boundTrajectory(tr, 10)
		require.True(t, cut)
		assert.Len(t, tr.Steps[0].ToolCalls, 5)
		assert.Equal(t, 25, b.dropped[0])
	})
	t.Run("existing omitted steps merge into the cut", func(t *testing.T) {
		tr := &scoring.Trajectory{}
		for i := range 20 {
			tr.Steps = append(tr.Steps, testkit.Gen(fmt.Sprint(i)))
			if i == 10 {
				tr.Steps = append(tr.Steps, scoring.Step{Kind: scoring.StepOmitted, Count: 100})
			}
		}
		_, cut := boundTrajectory(tr, 6)
		require.True(t, cut)
		assert.Equal(t, 120, tr.StepCount())
		assert.Len(t, tr.Steps, 6)
	})
}

func TestFitTexts(t *testing.T) {
	long := strings.Repeat("x", 1000)
	a, b, c := "short", long, strings.Repeat("é", 600)
	texts := []*string{&a, &b, &c}
	require.True(t, fitTexts(texts, 700))
	assert.Equal(t, "short", a, "short texts are kept whole")
	capped := strings.TrimSuffix(b, scoring.TruncationMarker)
	assert.NotEqual(t, b, capped)
	assert.Equal(t, utf8.RuneCountInString(capped), utf8.RuneCountInString(strings.TrimSuffix(c, scoring.TruncationMarker)),
		"the long texts are cut to one cap")
	assert.LessOrEqual(t, 5+2*utf8.RuneCountInString(capped), 700)

	x, y := "abc", "def"
	assert.False(t, fitTexts([]*string{&x, &y}, 6))
	assert.False(t, fitTexts([]*string{&b}, 0), "0 means no cap")

	// A floor keeps every text readable when the budget is tiny.
	many := make([]string, 100)
	ptrs := make([]*string, len(many))
	for i := range many {
		many[i] = long
		ptrs[i] = &many[i]
	}
	require.True(t, fitTexts(ptrs, 500))
	assert.Equal(t, minTrajectoryTextChars, utf8.RuneCountInString(strings.TrimSuffix(many[0], scoring.TruncationMarker)))
}

func TestTrajectoryLines(t *testing.T) {
	tr := &scoring.Trajectory{Steps: []scoring.Step{
		testkit.Gen("Let me look.", testkit.Call("c1", "get_weather", `{"city":"Lyon"}`), testkit.Call("", "calendar", "next friday")),
		testkit.ToolStep("c1", "get_weather", `{"city":"Lyon"}`, "rain"),
		testkit.FailedStep("", "calendar", "", "permission denied"),
		{Kind: scoring.StepOmitted, Count: 7},
		testkit.ToolStep("", "", "", ""),
		{Kind: scoring.StepGeneration, Error: "429 Rate limit reached"},
		testkit.Gen("Rain on Friday."),
	}}
	var got []string
	for _, l := range TrajectoryLines(tr) {
		got = append(got, testkit.MustJSON(l))
	}
	assert.Equal(t, []string{
		`{"step":1,"kind":"generation","text":"Let me look.","tool_calls":[{"call":1,"tool":"get_weather","arguments":"{\"city\":\"Lyon\"}"},{"call":2,"tool":"calendar","arguments":"next friday"}]}`,
		`{"step":2,"kind":"tool","call":1,"tool":"get_weather","result":"rain"}`,
		`{"step":3,"kind":"tool","call":2,"tool":"calendar","error":"permission denied"}`,
		`{"kind":"omitted","omitted_steps":7}`,
		`{"step":11,"kind":"tool","call":3,"tool":"(unnamed tool)","result":""}`,
		`{"step":12,"kind":"generation","error":"429 Rate limit reached"}`,
		`{"step":13,"kind":"generation","text":"Rain on Friday."}`,
	}, got)
}
