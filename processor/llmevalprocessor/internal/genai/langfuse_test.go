package genai

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// TestLangfuseCapture reads what @langfuse/openai's observeOpenAI sent for
// the openai tool loop (test/clients/apps/langfuse-openai): two generation
// observations; the second answers, with the tool result as context and the
// system message as instructions.
func TestLangfuseCapture(t *testing.T) {
	spans := readClientSpans(t, "langfuse-openai")
	require.Len(t, spans["OpenAI.chat"], 2)
	var toolStep, answered Generation
	for _, s := range spans["OpenAI.chat"] {
		require.Equal(t, KindGeneration, Classify(s.resource, s.span))
		if g := Read(s.span); g.Missing == "" {
			answered = g
		} else {
			toolStep = g
		}
	}
	assert.Equal(t, MissingToolCalls, toolStep.Missing, "the first call only asks for the tool")
	assert.Equal(t, Generation{
		Convention: ConventionLangfuse,
		Input:      clientQuestion,
		Conversation: "system: " + clientSystem + "\nuser: " + clientQuestion +
			"\nassistant: [tool call get_order_status({\"orderId\":\"1042\"})]\ntool: " + clientResult,
		Output:             clientAnswer,
		SystemInstructions: []string{clientSystem},
		ToolResults:        []string{clientResult},
		Model:              "gpt-4o-mini",
	}, answered)
}

// TestLangfuseObservations covers the shapes of Langfuse observation
// attributes, with bad input: nothing panics, and a span that cannot be
// read says why.
func TestLangfuseObservations(t *testing.T) {
	tests := []struct {
		name                  string
		input, output         any
		wantInput, wantOutput string
		wantMissing           string
	}{
		{name: "plain strings", input: "Hi?", output: "Hello.", wantInput: "Hi?", wantOutput: "Hello."},
		{name: "messages and a reply message", input: `{"messages":[{"role":"user","content":"Hi?"}]}`,
			output: `{"role":"assistant","content":"Hello."}`, wantInput: "Hi?", wantOutput: "Hello."},
		{name: "a list of messages", input: `[{"role":"user","content":"Hi?"}]`, output: `{"content":"Hello."}`,
			wantInput: "Hi?", wantOutput: "Hello."},
		{name: "malformed input JSON: read as far as it goes, no question in it", input: `{"messages":[{"role":"user","content":`,
			output: "Hello.", wantOutput: "Hello."},
		{name: "malformed output JSON", input: "Hi?", output: `{"role":"assistant","content":`, wantInput: "Hi?",
			wantMissing: MissingOutput},
		{name: "input that opens as JSON but is none", input: `{"messages": [[[{{{]]`, output: "Hello.",
			wantOutput: "Hello.", wantMissing: MissingMalformedPrefix + attrLangfuseInput},
		{name: "output that opens as JSON but is none", input: "Hi?", output: `{"role": [[[{{{]]`,
			wantInput: "Hi?", wantMissing: MissingMalformedPrefix + attrLangfuseOutput},
		{name: "output of an unknown shape", input: "Hi?", output: `{"weird":true}`, wantInput: "Hi?",
			wantMissing: attrLangfuseOutput + " " + issueNoMessage},
		{name: "no output", input: "Hi?", wantInput: "Hi?", wantMissing: MissingOutput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			attrs := map[string]any{attrLangfuseType: "generation", attrLangfuseInput: tt.input}
			if tt.output != nil {
				attrs[attrLangfuseOutput] = tt.output
			}
			span := newSpan(t, "OpenAI.chat", attrs)
			require.Equal(t, KindGeneration, Classify(pcommon.NewResource(), span))
			g := Read(span)
			assert.Equal(t, tt.wantInput, g.Input)
			assert.Equal(t, tt.wantOutput, g.Output)
			assert.Equal(t, tt.wantMissing, g.Missing)
		})
	}
}
