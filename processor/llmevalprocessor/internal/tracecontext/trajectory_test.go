package tracecontext

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/scoring"
)

func call(id, name, args string) genai.ToolCall {
	return genai.ToolCall{ID: id, Name: name, Arguments: args}
}

// withResults is a generation whose input carries tool results.
func withResults(st genai.Step, results ...genai.ToolResult) genai.Step {
	st.ToolResults = results
	return st
}

func toolRun(id, name, result string) genai.Step {
	return genai.Step{Kind: genai.StepTool, CallID: id, Name: name, Result: result}
}

func TestBuildTrajectory(t *testing.T) {
	tests := []struct {
		name    string
		records []genai.Step
		want    []scoring.Step
	}{
		{
			name: "tool spans win over the results repeated in the next input",
			records: []genai.Step{
				gen("", call("c1", "search", `{"q":"x"}`)),
				toolRun("c1", "search", "found"),
				withResults(gen("answer"), genai.ToolResult{CallID: "c1", Name: "search", Result: "found"}),
			},
			want: []scoring.Step{
				{Kind: scoring.StepGeneration, ToolCalls: []scoring.ToolCall{{ID: "c1", Name: "search", Arguments: `{"q":"x"}`}}},
				{Kind: scoring.StepTool, CallID: "c1", Tool: "search", Result: "found"},
				{Kind: scoring.StepGeneration, Output: "answer"},
			},
		},
		{
			name: "without a tool span the input's result is the execution, once, named by its call",
			records: []genai.Step{
				gen("", call("c1", "search", `{}`)),
				withResults(gen("", call("c2", "fetch", `{}`)), genai.ToolResult{CallID: "c1", Result: "found"}),
				withResults(gen("answer"), genai.ToolResult{CallID: "c1", Result: "found"}, genai.ToolResult{CallID: "c2", Name: "fetch", Result: "page"}),
			},
			want: []scoring.Step{
				{Kind: scoring.StepGeneration, ToolCalls: []scoring.ToolCall{{ID: "c1", Name: "search", Arguments: `{}`}}},
				{Kind: scoring.StepTool, CallID: "c1", Tool: "search", Result: "found"},
				{Kind: scoring.StepGeneration, ToolCalls: []scoring.ToolCall{{ID: "c2", Name: "fetch", Arguments: `{}`}}},
				{Kind: scoring.StepTool, CallID: "c2", Tool: "fetch", Result: "page"},
				{Kind: scoring.StepGeneration, Output: "answer"},
			},
		},
		{
			name: "a tool span without a call id executes the earliest call of its tool",
			records: []genai.Step{
				gen("", call("c1", "search", `{}`), call("c2", "search", `{"page":2}`)),
				toolRun("", "search", "one"),
				withResults(gen("answer"), genai.ToolResult{CallID: "c1", Result: "one"}, genai.ToolResult{CallID: "c2", Result: "two"}),
			},
			want: []scoring.Step{
				{Kind: scoring.StepGeneration, ToolCalls: []scoring.ToolCall{{ID: "c1", Name: "search", Arguments: `{}`}, {ID: "c2", Name: "search", Arguments: `{"page":2}`}}},
				{Kind: scoring.StepTool, Tool: "search", Result: "one"},
				{Kind: scoring.StepTool, CallID: "c2", Tool: "search", Result: "two"},
				{Kind: scoring.StepGeneration, Output: "answer"},
			},
		},
		{
			name: "a tool span without a call id, named unlike its call, executes the call whose input result it returned",
			records: []genai.Step{
				gen("", call("c1", "search", `{"q":"x"}`), call("c2", "lookup", `{}`)),
				toolRun("", "search_docs", "found"),
				toolRun("", "lookup", "page"),
				withResults(gen("answer"), genai.ToolResult{CallID: "c1", Name: "search", Result: "found"}, genai.ToolResult{CallID: "c2", Result: "page"}),
			},
			want: []scoring.Step{
				{Kind: scoring.StepGeneration, ToolCalls: []scoring.ToolCall{{ID: "c1", Name: "search", Arguments: `{"q":"x"}`}, {ID: "c2", Name: "lookup", Arguments: `{}`}}},
				{Kind: scoring.StepTool, CallID: "c1", Tool: "search_docs", Result: "found"},
				{Kind: scoring.StepTool, Tool: "lookup", Result: "page"},
				{Kind: scoring.StepGeneration, Output: "answer"},
			},
		},
		{
			name: "a tool span named unlike any call and with another result is an execution of its own",
			records: []genai.Step{
				gen("", call("c1", "search", `{}`)),
				toolRun("", "audit_log", "written"),
				withResults(gen("answer"), genai.ToolResult{CallID: "c1", Name: "search", Result: "found"}),
			},
			want: []scoring.Step{
				{Kind: scoring.StepGeneration, ToolCalls: []scoring.ToolCall{{ID: "c1", Name: "search", Arguments: `{}`}}},
				{Kind: scoring.StepTool, Tool: "audit_log", Result: "written"},
				{Kind: scoring.StepTool, CallID: "c1", Tool: "search", Result: "found"},
				{Kind: scoring.StepGeneration, Output: "answer"},
			},
		},
		{
			name: "results without a call id count only in a run without tool spans",
			records: []genai.Step{
				gen("", call("", "search", `{}`)),
				withResults(gen("answer"), genai.ToolResult{Name: "search", Result: "found"}),
			},
			want: []scoring.Step{
				{Kind: scoring.StepGeneration, ToolCalls: []scoring.ToolCall{{Name: "search", Arguments: `{}`}}},
				{Kind: scoring.StepTool, Tool: "search", Result: "found"},
				{Kind: scoring.StepGeneration, Output: "answer"},
			},
		},
		{
			name: "a nested agent is one tool step; errors and arguments that are not JSON are kept",
			records: []genai.Step{
				gen("", call("", "billing", "refund order 1042")),
				{Kind: genai.StepAgent, Name: "billing", Arguments: "refund order 1042", Result: "refunded"},
				{Kind: genai.StepTool, Name: "notify", Arguments: "to=anna", Error: "smtp down"},
				gen("done"),
			},
			want: []scoring.Step{
				{Kind: scoring.StepGeneration, ToolCalls: []scoring.ToolCall{{Name: "billing", Arguments: "refund order 1042"}}},
				{Kind: scoring.StepTool, Tool: "billing", Arguments: "refund order 1042", Result: "refunded"},
				{Kind: scoring.StepTool, Tool: "notify", Arguments: "to=anna", Error: "smtp down"},
				{Kind: scoring.StepGeneration, Output: "done"},
			},
		},
		{
			name: "a failed model call is a generation step with its error",
			records: []genai.Step{
				gen("", call("c1", "search", `{}`)),
				toolRun("c1", "search", "found"),
				{Kind: genai.StepGeneration, Error: "429 Rate limit reached"},
				gen("answer"),
			},
			want: []scoring.Step{
				{Kind: scoring.StepGeneration, ToolCalls: []scoring.ToolCall{{ID: "c1", Name: "search", Arguments: `{}`}}},
				{Kind: scoring.StepTool, CallID: "c1", Tool: "search", Result: "found"},
				{Kind: scoring.StepGeneration, Error: "429 Rate limit reached"},
				{Kind: scoring.StepGeneration, Output: "answer"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cut := buildTrajectory(tt.records, 0)
			require.NotNil(t, got)
			assert.Equal(t, tt.want, got.Steps)
			assert.False(t, cut)
			assert.NoError(t, got.Validate())
		})
	}
}

func TestBuildTrajectoryNothing(t *testing.T) {
	got, cut := buildTrajectory(nil, 0)
	assert.Nil(t, got, "no steps, no trajectory: the scorers say why")
	assert.False(t, cut)
}

// TestBuildBoundsLongRuns: a run of 5,000 steps keeps its first and last
// 250 with one omitted step of 4,500 between; steps a full trace dropped
// are an omitted step at the end.
func TestBuildTrajectoryBoundsLongRuns(t *testing.T) {
	var records []genai.Step
	for i := range 2500 {
		id := fmt.Sprint("c", i)
		records = append(records, gen("", call(id, "poll", `{}`)), toolRun(id, "poll", fmt.Sprint("result ", i)))
	}
	got, cut := buildTrajectory(records, 0)
	require.True(t, cut)
	require.Len(t, got.Steps, MaxTrajectorySteps+1)
	assert.Equal(t, scoring.Step{Kind: scoring.StepOmitted, Count: 4500}, got.Steps[MaxTrajectorySteps/2])
	assert.Equal(t, "c0", got.Steps[0].ToolCalls[0].ID)
	assert.Equal(t, "result 2499", got.Steps[MaxTrajectorySteps].Result)
	assert.Equal(t, 5000, got.StepCount())
	require.NoError(t, got.Validate())

	got, cut = buildTrajectory(records[:4], 7)
	require.True(t, cut)
	assert.Equal(t, scoring.Step{Kind: scoring.StepOmitted, Count: 7}, got.Steps[4])
	assert.Equal(t, 11, got.StepCount())

	got, _ = buildTrajectory(nil, 3)
	require.NotNil(t, got)
	assert.Equal(t, []scoring.Step{{Kind: scoring.StepOmitted, Count: 3}}, got.Steps)
}

func TestRunPending(t *testing.T) {
	tests := []struct {
		name    string
		records []genai.Step
		dropped int
		want    bool
	}{
		{"no step yet", nil, 0, true},
		{"only a model call that answered", []genai.Step{gen("hi")}, 0, false},
		{"a tool call without an execution", []genai.Step{gen("", call("c1", "search", ""))}, 0, true},
		{"the call's tool span arrived, not the answer", []genai.Step{gen("", call("c1", "search", "")), toolRun("c1", "search", "x")}, 0, true},
		{"executed and answered", []genai.Step{gen("", call("c1", "search", "")), toolRun("c1", "search", "x"), gen("done")}, 0, false},
		{"executed per the next input", []genai.Step{gen("", call("c1", "search", "")), withResults(gen("done"), genai.ToolResult{CallID: "c1"})}, 0, false},
		{"a tool span without id answers a call by name", []genai.Step{gen("", call("c1", "search", "")), toolRun("", "search", "x"), gen("done")}, 0, false},
		{"two calls of one tool, one execution", []genai.Step{gen("", call("", "search", ""), call("", "search", "")), toolRun("", "search", "x"), gen("done")}, 0, true},
		{"only a nested agent so far", []genai.Step{{Kind: genai.StepAgent, Name: "billing"}}, 0, true},
		{"the agent-as-tool call answered", []genai.Step{gen("", call("c1", "billing", "")), {Kind: genai.StepAgent, Name: "billing"}, gen("done")}, 0, false},
		{"a full trace dropped the rest of the run", []genai.Step{gen("", call("c1", "search", ""))}, 1, false},
		{"a full trace kept none of it", nil, 3, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, runPending(tt.records, tt.dropped))
		})
	}
}
