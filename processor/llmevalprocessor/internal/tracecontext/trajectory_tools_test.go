package tracecontext

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/scoring"
)

// withTools is a generation offered the given tools.
func withTools(st genai.Step, tools ...genai.ToolDef) genai.Step {
	st.Tools = tools
	return st
}

// TestBuildTools checks that a trajectory carries the tools its model
// calls were offered, each name once in first-seen order, and those of
// the agent span added after; a nested agent's tools are not the run's.
func TestBuildTrajectoryTools(t *testing.T) {
	lookup := genai.ToolDef{Name: "lookup", Description: "Finds an order."}
	cancel := genai.ToolDef{Name: "cancel"}
	records := []genai.Step{
		withTools(gen("", call("c1", "lookup", "{}")), lookup, cancel),
		toolRun("c1", "lookup", "found"),
		withTools(gen("done"), cancel, lookup, genai.ToolDef{Name: "email"}),
		{Kind: genai.StepAgent, Name: "billing", Result: "ok"},
	}
	tr, _ := buildTrajectory(records, 0)
	assert.Equal(t, []scoring.ToolDefinition{{Name: "lookup", Description: "Finds an order."}, {Name: "cancel"}, {Name: "email"}}, tr.Tools)

	AddTools(tr, []genai.ToolDef{{Name: "email", Description: "other"}, {Name: "refund"}, {}})
	assert.Equal(t, []string{"lookup", "cancel", "email", "refund"}, toolNames(tr))

	var many []genai.ToolDef
	for i := range MaxTrajectoryTools + 10 {
		many = append(many, genai.ToolDef{Name: fmt.Sprint("t", i)})
	}
	AddTools(tr, many)
	assert.Len(t, tr.Tools, MaxTrajectoryTools)

	AddTools(nil, many) // no trajectory: nothing to add to
	none, _ := buildTrajectory([]genai.Step{gen("hi")}, 0)
	assert.Nil(t, none.Tools, "no tools recorded: unknown, not empty")
}

func toolNames(tr *scoring.Trajectory) []string {
	var out []string
	for _, d := range tr.Tools {
		out = append(out, d.Name)
	}
	return out
}
