package scoring_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
)

func TestTrajectoryValidateAndCount(t *testing.T) {
	assert.NoError(t, (*scoring.Trajectory)(nil).Validate())
	assert.NoError(t, testkit.WeatherRun().Validate())
	bad := &scoring.Trajectory{Steps: []scoring.Step{testkit.Gen("x"), {Kind: "thought"}}}
	assert.ErrorContains(t, bad.Validate(), `trajectory step 1: unknown kind "thought"`)
	bad = &scoring.Trajectory{Steps: []scoring.Step{{Kind: scoring.StepOmitted}}}
	assert.ErrorContains(t, bad.Validate(), "an omitted step needs a positive count")

	assert.Equal(t, 0, (*scoring.Trajectory)(nil).StepCount())
	assert.Equal(t, 3, testkit.WeatherRun().StepCount())
	withGap := &scoring.Trajectory{Steps: []scoring.Step{testkit.Gen("a"), {Kind: scoring.StepOmitted, Count: 40}, testkit.Gen("b")}}
	assert.Equal(t, 42, withGap.StepCount())
}

func TestTrajectoryJSON(t *testing.T) {
	in := `{"steps":[{"kind":"generation","tool_calls":[{"id":"c1","name":"search","arguments":"not json at all"}]},` +
		`{"kind":"tool","tool":"search","call_id":"c1","result":"3 hits","error":""},{"kind":"omitted","count":2}]}`
	var tr scoring.Trajectory
	require.NoError(t, json.Unmarshal([]byte(in), &tr))
	assert.Equal(t, scoring.Trajectory{Steps: []scoring.Step{
		testkit.Gen("", testkit.Call("c1", "search", "not json at all")),
		testkit.ToolStep("c1", "search", "", "3 hits"),
		{Kind: scoring.StepOmitted, Count: 2},
	}}, tr)
	assert.Equal(t, 4, tr.StepCount())
}

func TestTrajectoryValidateTools(t *testing.T) {
	err := (&scoring.Trajectory{Tools: []scoring.ToolDefinition{{Name: "ok"}, {Name: " "}}}).Validate()
	assert.ErrorContains(t, err, "trajectory tool 1: a tool needs a name")
	assert.NoError(t, (&scoring.Trajectory{Tools: []scoring.ToolDefinition{{Name: "ok"}}}).Validate())
}
