package genai

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// TestGenkitCapture reads what Genkit 1.42 sent for a generate call with one
// tool (test/clients/apps/genkit-openai): two model actions, the second
// answers; the tool action is a tool step whose result is context, and the
// root generate loop is the agent run.
func TestGenkitCapture(t *testing.T) {
	spans := readClientSpans(t, "genkit-openai")
	models := spans["appmodel/gpt-4o-mini"]
	require.Len(t, models, 2)
	var toolStep, answered Generation
	for _, s := range models {
		require.Equal(t, KindGeneration, Classify(s.resource, s.span))
		if g := Read(s.span); g.Missing == "" {
			answered = g
		} else {
			toolStep = g
		}
	}
	assert.Equal(t, MissingToolCalls, toolStep.Missing, "the first call only asks for the tool")
	assert.Equal(t, Generation{
		Convention: ConventionGenkit,
		Input:      clientQuestion,
		Conversation: "system: " + clientSystem + "\nuser: " + clientQuestion +
			"\nassistant: [tool call get_order_status({\"orderId\":\"1042\"})]\ntool: " + clientResult,
		Output:             clientAnswer,
		SystemInstructions: []string{clientSystem},
		ToolResults:        []string{clientResult},
	}, answered)

	// The run: the root generate loop is the agent, the tool action a tool
	// step with its result as context.
	require.Len(t, spans["get_order_status"], 1)
	tool := spans["get_order_status"][0]
	require.Equal(t, KindContext, Classify(tool.resource, tool.span))
	assert.Equal(t, ContextSource{Role: RoleTool, Texts: []string{clientResult}}, ReadContext(tool.span))
	st, ok := ReadStep(KindContext, tool.span)
	require.True(t, ok)
	assert.Equal(t, Step{Kind: StepTool, Name: "get_order_status", Arguments: `{"orderId":"1042"}`, Result: clientResult}, st)

	var roots int
	for _, s := range spans["generate"] {
		require.Equal(t, KindAggregate, Classify(s.resource, s.span))
		if !s.span.ParentSpanID().IsEmpty() {
			assert.False(t, IsAgent(s.span), "the inner generate loop is no agent")
			continue
		}
		roots++
		require.True(t, IsAgent(s.span))
		g := ReadAgent(s.span)
		assert.Equal(t, clientQuestion, g.Input)
		assert.Equal(t, clientAnswer, g.Output)
	}
	assert.Equal(t, 1, roots)
}

// TestGenkitModelActions covers Genkit's message shapes and bad input:
// nothing panics, and a span that cannot be read says why.
func TestGenkitModelActions(t *testing.T) {
	const input = `{"messages":[{"role":"system","content":[{"text":"Be brief."}]},{"role":"user","content":[{"text":"Hi?"}]}]}`
	tests := []struct {
		name          string
		input, output string
		wantInput     string
		wantOutput    string
		wantSystem    []string
		wantMissing   string
	}{
		{name: "text answer", input: input, output: `{"finishReason":"stop","message":{"role":"model","content":[{"text":"Hello."}]}}`,
			wantInput: "Hi?", wantOutput: "Hello.", wantSystem: []string{"Be brief."}},
		{name: "candidates of older releases", input: input, output: `{"candidates":[{"index":0,"finishReason":"stop","message":{"role":"model","content":[{"text":"Hello."}]}}]}`,
			wantInput: "Hi?", wantOutput: "Hello.", wantSystem: []string{"Be brief."}},
		{name: "tool request only", input: input, output: `{"message":{"role":"model","content":[{"toolRequest":{"name":"f","ref":"1","input":{}}}]}}`,
			wantInput: "Hi?", wantSystem: []string{"Be brief."}, wantMissing: MissingToolCalls},
		{name: "reasoning and text", input: input, output: `{"message":{"role":"model","content":[{"reasoning":"hmm"},{"text":"Hello."}]}}`,
			wantInput: "Hi?", wantOutput: "Hello.", wantSystem: []string{"Be brief."}},
		{name: "unknown part only", input: input, output: `{"message":{"role":"model","content":[{"custom":{"x":1}}]}}`,
			wantInput: "Hi?", wantSystem: []string{"Be brief."}, wantMissing: MissingOutput},
		{name: "malformed output JSON", input: input, output: `{"message":{"role":"model","content":[{"te`,
			wantInput: "Hi?", wantSystem: []string{"Be brief."}, wantMissing: MissingOutput},
		{name: "output that opens as JSON but is none", input: input, output: `{"message": [[[{{{]]`,
			wantInput: "Hi?", wantSystem: []string{"Be brief."}, wantMissing: MissingMalformedPrefix + attrGenkitOutput},
		{name: "input that opens as JSON but is none", input: `{"messages": [[[{{{]]`, output: `{"message":{"role":"model","content":[{"text":"Hello."}]}}`,
			wantOutput: "Hello.", wantMissing: MissingMalformedPrefix + attrGenkitInput},
		{name: "output not JSON", input: input, output: `Hello.`,
			wantInput: "Hi?", wantSystem: []string{"Be brief."}, wantMissing: attrGenkitOutput + " " + issueNotJSON},
		{name: "malformed input JSON", input: `{"messages":[{"role":`, output: `{"message":{"role":"model","content":[{"text":"Hello."}]}}`,
			wantOutput: "Hello."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			span := newSpan(t, "appmodel/gpt-4o-mini", map[string]any{
				attrGenkitType: "action", attrGenkitSubtype: "model",
				attrGenkitInput: tt.input, attrGenkitOutput: tt.output,
			})
			require.Equal(t, KindGeneration, Classify(pcommon.NewResource(), span))
			g := Read(span)
			assert.Equal(t, tt.wantInput, g.Input)
			assert.Equal(t, tt.wantOutput, g.Output)
			assert.Equal(t, tt.wantSystem, g.SystemInstructions)
			assert.Equal(t, tt.wantMissing, g.Missing)
		})
	}
}
