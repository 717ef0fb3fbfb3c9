package scoring

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Helpers that build hand-made trajectories.

func gen(output string, calls ...ToolCall) Step {
	return Step{Kind: StepGeneration, Output: output, ToolCalls: calls}
}

func call(id, name, args string) ToolCall { return ToolCall{ID: id, Name: name, Arguments: args} }

func toolStep(id, name, args, result string) Step {
	return Step{Kind: StepTool, Tool: name, CallID: id, Arguments: args, Result: result}
}

func failedStep(id, name, args, errText string) Step {
	return Step{Kind: StepTool, Tool: name, CallID: id, Arguments: args, Error: errText}
}

// weatherRun is a small, well-behaved agent run: one lookup, then the answer.
func weatherRun() *Trajectory {
	return &Trajectory{Steps: []Step{
		gen("", call("c1", "get_weather", `{"city": "Lyon"}`)),
		toolStep("c1", "get_weather", "", "rain, 14°C"),
		gen("Tomorrow Lyon will be rainy, 14°C."),
	}}
}

// loopRun calls the same search n times with the same arguments.
func loopRun(n int) *Trajectory {
	t := &Trajectory{}
	for i := range n {
		id := fmt.Sprintf("c%d", i)
		t.Steps = append(t.Steps, gen("", call(id, "search", `{"q": "flights to Oslo"}`)), toolStep(id, "search", "", "no results"))
	}
	t.Steps = append(t.Steps, gen("I could not find flights."))
	return t
}

func TestTrajectoryCallsPairing(t *testing.T) {
	tests := []struct {
		name  string
		steps []Step
		want  []trajectoryCall
	}{
		{"by id", []Step{
			gen("", call("a", "search", `{"q":1}`), call("b", "search", `{"q":2}`)),
			toolStep("b", "search", "", "two"),
			toolStep("a", "search", "", "one"),
		}, []trajectoryCall{
			{Number: 1, Tool: "search", Arguments: `{"q":1}`, Requested: true, Executed: true, Result: "one"},
			{Number: 2, Tool: "search", Arguments: `{"q":2}`, Requested: true, Executed: true, Result: "two"},
		}},
		{"by name in order when no ids", []Step{
			gen("", call("", "fetch", "u1"), call("", "fetch", "u2")),
			toolStep("", "fetch", "", "r1"),
			failedStep("", "fetch", "", "timeout"),
		}, []trajectoryCall{
			{Number: 1, Tool: "fetch", Arguments: "u1", Requested: true, Executed: true, Result: "r1"},
			{Number: 2, Tool: "fetch", Arguments: "u2", Requested: true, Executed: true, Error: "timeout"},
		}},
		{"an id-less execution does not take a call another step executes by id", []Step{
			gen("", call("x", "fetch", "u1"), call("", "fetch", "u2")),
			toolStep("", "fetch", "", "r2"),
			toolStep("x", "fetch", "", "r1"),
		}, []trajectoryCall{
			{Number: 1, Tool: "fetch", Arguments: "u1", Requested: true, Executed: true, Result: "r1"},
			{Number: 2, Tool: "fetch", Arguments: "u2", Requested: true, Executed: true, Result: "r2"},
		}},
		{"execution without a request (OpenInference TOOL spans only)", []Step{
			toolStep("", "calculator", "2+2", "4"),
			gen("It is 4."),
		}, []trajectoryCall{
			{Number: 1, Tool: "calculator", Arguments: "2+2", Executed: true, Result: "4"},
		}},
		{"request whose execution was not recorded", []Step{
			gen("", call("z", "send_mail", `{"to":"a@b"}`)),
			gen("Sent."),
		}, []trajectoryCall{
			{Number: 1, Tool: "send_mail", Arguments: `{"to":"a@b"}`, Requested: true},
		}},
		{"execution of another tool is not paired by name", []Step{
			gen("", call("", "search", "q")),
			toolStep("", "browse", "url", "page"),
		}, []trajectoryCall{
			{Number: 1, Tool: "search", Arguments: "q", Requested: true},
			{Number: 2, Tool: "browse", Arguments: "url", Executed: true, Result: "page"},
		}},
		{"arguments from the execution when the request has none", []Step{
			gen("", call("k", "lookup", "")),
			toolStep("k", "lookup", `{"id":7}`, "found"),
		}, []trajectoryCall{
			{Number: 1, Tool: "lookup", Arguments: `{"id":7}`, Requested: true, Executed: true, Result: "found"},
		}},
		{"duplicate ids pair in order", []Step{
			gen("", call("d", "t", "1"), call("d", "t", "2")),
			toolStep("d", "t", "", "r1"),
			toolStep("d", "t", "", "r2"),
		}, []trajectoryCall{
			{Number: 1, Tool: "t", Arguments: "1", Requested: true, Executed: true, Result: "r1"},
			{Number: 2, Tool: "t", Arguments: "2", Requested: true, Executed: true, Result: "r2"},
		}},
		{"an execution never pairs with a later request", []Step{
			toolStep("", "t", "early", "r0"),
			gen("", call("", "t", "late")),
		}, []trajectoryCall{
			{Number: 1, Tool: "t", Arguments: "early", Executed: true, Result: "r0"},
			{Number: 2, Tool: "t", Arguments: "late", Requested: true},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := trajectoryCalls(&Trajectory{Steps: tc.steps})
			for i := range got {
				got[i].requestArgs = ""
			}
			assert.Equal(t, tc.want, got)
		})
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

func TestTrajectoryValidateAndCount(t *testing.T) {
	assert.NoError(t, (*Trajectory)(nil).Validate())
	assert.NoError(t, weatherRun().Validate())
	bad := &Trajectory{Steps: []Step{gen("x"), {Kind: "thought"}}}
	assert.ErrorContains(t, bad.Validate(), `trajectory step 1: unknown kind "thought"`)
	bad = &Trajectory{Steps: []Step{{Kind: StepOmitted}}}
	assert.ErrorContains(t, bad.Validate(), "an omitted step needs a positive count")

	assert.Equal(t, 0, (*Trajectory)(nil).StepCount())
	assert.Equal(t, 3, weatherRun().StepCount())
	withGap := &Trajectory{Steps: []Step{gen("a"), {Kind: StepOmitted, Count: 40}, gen("b")}}
	assert.Equal(t, 42, withGap.StepCount())
	assert.True(t, (&Trajectory{Steps: []Step{{Kind: StepOmitted, Count: 3}}}).empty())
	assert.True(t, (&Trajectory{}).empty())
	assert.False(t, weatherRun().empty())
}

func TestBoundTrajectory(t *testing.T) {
	t.Run("short runs are kept", func(t *testing.T) {
		tr := weatherRun()
		assert.False(t, boundTrajectory(tr, 50))
		assert.Equal(t, weatherRun(), tr)
	})
	t.Run("5,000 steps keep the first and last and count the rest", func(t *testing.T) {
		tr := loopRun(2500) // 5,001 steps, 2,500 calls
		total := tr.StepCount()
		require.True(t, boundTrajectory(tr, 50))
		assert.Equal(t, total, tr.StepCount(), "the omitted step counts what it replaced")
		cost := 0
		gaps := 0
		for _, s := range tr.Steps {
			if s.Kind == StepOmitted {
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
		var calls []ToolCall
		for i := range 30 {
			calls = append(calls, call(fmt.Sprint(i), "t", fmt.Sprint(i)))
		}
		tr := &Trajectory{Steps: []Step{gen("", calls...), gen("done")}}
		require.True(t, boundTrajectory(tr, 10))
		assert.Len(t, tr.Steps[0].ToolCalls, 5)
		assert.Equal(t, 25, tr.Steps[0].droppedCalls)
	})
	t.Run("existing omitted steps merge into the cut", func(t *testing.T) {
		tr := &Trajectory{}
		for i := range 20 {
			tr.Steps = append(tr.Steps, gen(fmt.Sprint(i)))
			if i == 10 {
				tr.Steps = append(tr.Steps, Step{Kind: StepOmitted, Count: 100})
			}
		}
		require.True(t, boundTrajectory(tr, 6))
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
	capped := strings.TrimSuffix(b, TruncationMarker)
	assert.NotEqual(t, b, capped)
	assert.Equal(t, utf8.RuneCountInString(capped), utf8.RuneCountInString(strings.TrimSuffix(c, TruncationMarker)),
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
	assert.Equal(t, minTrajectoryTextChars, utf8.RuneCountInString(strings.TrimSuffix(many[0], TruncationMarker)))
}

func TestTrajectoryLines(t *testing.T) {
	tr := &Trajectory{Steps: []Step{
		gen("Let me look.", call("c1", "get_weather", `{"city":"Lyon"}`), call("", "calendar", "next friday")),
		toolStep("c1", "get_weather", `{"city":"Lyon"}`, "rain"),
		failedStep("", "calendar", "", "permission denied"),
		{Kind: StepOmitted, Count: 7},
		toolStep("", "", "", ""),
		{Kind: StepGeneration, Error: "429 Rate limit reached"},
		gen("Rain on Friday."),
	}}
	var got []string
	for _, l := range trajectoryLines(tr) {
		got = append(got, mustJSON(l))
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

func TestTrajectoryJSON(t *testing.T) {
	in := `{"steps":[{"kind":"generation","tool_calls":[{"id":"c1","name":"search","arguments":"not json at all"}]},` +
		`{"kind":"tool","tool":"search","call_id":"c1","result":"3 hits","error":""},{"kind":"omitted","count":2}]}`
	var tr Trajectory
	require.NoError(t, json.Unmarshal([]byte(in), &tr))
	assert.Equal(t, Trajectory{Steps: []Step{
		gen("", call("c1", "search", "not json at all")),
		toolStep("c1", "search", "", "3 hits"),
		{Kind: StepOmitted, Count: 2},
	}}, tr)
	assert.Equal(t, 4, tr.StepCount())
}
