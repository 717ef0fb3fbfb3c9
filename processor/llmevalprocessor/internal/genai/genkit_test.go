package genai

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// TestGenkitCapture reads what Genkit 1.42 sent for a generate call with one
// tool (test/clients/apps/genkit-openai): two model actions, the second
// answers; the tool action and the generate utilities around them are not
// generations.
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
	for _, name := range []string{"generate", "get_order_status"} {
		for _, s := range spans[name] {
			assert.NotEqual(t, KindGeneration, Classify(s.resource, s.span), name)
		}
	}
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
		{name: "output not JSON", input: input, output: `Hello.`,
			wantInput: "Hi?", wantSystem: []string{"Be brief."}, wantMissing: MissingOutput},
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
