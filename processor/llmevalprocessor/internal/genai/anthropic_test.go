package genai

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The conversation of test/clients/scenario.json, as the Anthropic apps send it.
const (
	clientSystem   = "You are the customer support assistant of Velo Nord, a bicycle shop. Answer in English. Keep the answer under 50 words. Cite the source of every fact in square brackets. Never promise a refund."
	clientQuestion = "Where is my order 1042?"
	clientResult   = "Order 1042 shipped on 2025-12-18 with DHL, tracking number JD0142, expected delivery 2025-12-22."
	clientAnswer   = "Your order 1042 shipped on 2025-12-18 with DHL and should arrive on 2025-12-22 [get_order_status]."
)

// TestAnthropicCaptures reads what the two Anthropic instrumentations sent
// for the tool loop of the Anthropic SDK (test/clients/apps/*-anthropic):
// the first call only asks for the tool; the second is scored on the
// question, the tool_result block as context and the system parameter as
// instructions.
func TestAnthropicCaptures(t *testing.T) {
	tests := []struct {
		app, span, convention string
		conversation          string
	}{
		{
			app: "traceloop-anthropic", span: "chat claude-sonnet-4-5", convention: ConventionGenAI,
			conversation: "user: " + clientQuestion + "\nassistant: [tool call get_order_status({\"orderId\":\"1042\"})]\nuser: " + clientResult,
		},
		{
			app: "openinference-anthropic", span: "Anthropic Messages", convention: ConventionOpenInference,
			// OpenInference records the tool_use block twice, as a content
			// block and in tool_calls: one call.
			conversation: "user: " + clientQuestion + "\nassistant: [tool call get_order_status({\"orderId\":\"1042\"})]\ntool: " + clientResult,
		},
	}
	for _, tt := range tests {
		t.Run(tt.app, func(t *testing.T) {
			spans := readClientSpans(t, tt.app)
			require.Len(t, spans[tt.span], 2, "two calls of the tool loop")
			var toolStep, answered Generation
			for _, s := range spans[tt.span] {
				require.Equal(t, KindGeneration, Classify(s.resource, s.span))
				if g := Read(s.span); g.Missing == "" {
					answered = g
				} else {
					toolStep = g
				}
			}
			assert.Equal(t, MissingToolCalls, toolStep.Missing, "the first call only asks for the tool")
			assert.Equal(t, []string{clientSystem}, toolStep.SystemInstructions, "the system parameter, on the tool step too")
			assert.Equal(t, Generation{
				Convention:         tt.convention,
				Input:              clientQuestion,
				Conversation:       tt.conversation,
				Output:             clientAnswer,
				SystemInstructions: []string{clientSystem},
				ToolResults:        []string{clientResult},
				Model:              "claude-sonnet-4-5",
				ResponseID:         answered.ResponseID,
			}, answered)
		})
	}
}

// TestAnthropicOpenInference covers the Anthropic shapes of OpenInference
// attributes, including bad input: each span is read, never a panic, and
// what cannot be read leaves a clear reason.
func TestAnthropicOpenInference(t *testing.T) {
	base := func(extra map[string]any) map[string]any {
		attrs := map[string]any{
			"openinference.span.kind":                                       "LLM",
			"llm.system":                                                    "anthropic",
			"llm.input_messages.0.message.role":                             "user",
			"llm.input_messages.0.message.content":                          "Where is my order?",
			"llm.output_messages.0.message.role":                            "assistant",
			"llm.output_messages.0.message.contents.0.message_content.type": "text",
			"llm.output_messages.0.message.contents.0.message_content.text": "It shipped.",
		}
		for k, v := range extra {
			attrs[k] = v
		}
		return attrs
	}
	tests := []struct {
		name                string
		attrs               map[string]any
		wantInput, wantOut  string
		wantSystem, wantCtx []string
		wantMissing         string
	}{
		{
			name:      "system parameter as a string",
			attrs:     base(map[string]any{"llm.invocation_parameters": `{"max_tokens":512,"system":"Be brief."}`}),
			wantInput: "Where is my order?", wantOut: "It shipped.", wantSystem: []string{"Be brief."},
		},
		{
			name:      "system parameter as text blocks",
			attrs:     base(map[string]any{"llm.invocation_parameters": `{"system":[{"type":"text","text":"Be brief."},{"type":"text","text":"Cite sources."}]}`}),
			wantInput: "Where is my order?", wantOut: "It shipped.", wantSystem: []string{"Be brief.", "Cite sources."},
		},
		{
			name:      "malformed invocation parameters: no instructions, the rest is read",
			attrs:     base(map[string]any{"llm.invocation_parameters": `{system: Be brief.}`}),
			wantInput: "Where is my order?", wantOut: "It shipped.",
		},
		{
			name:      "invocation parameters not an object",
			attrs:     base(map[string]any{"llm.invocation_parameters": `["system"]`}),
			wantInput: "Where is my order?", wantOut: "It shipped.",
		},
		{
			name: "tool_result block as a user message naming its tool_use",
			attrs: base(map[string]any{
				"llm.input_messages.1.message.role":         "user",
				"llm.input_messages.1.message.tool_call_id": "toolu_1",
				"llm.input_messages.1.message.content":      "Shipped on Monday.",
			}),
			wantInput: "Where is my order?", wantOut: "It shipped.", wantCtx: []string{"Shipped on Monday."},
		},
		{
			name: "output block of an unknown type only",
			attrs: base(map[string]any{
				"llm.output_messages.0.message.contents.0.message_content.type": "server_tool_use",
				"llm.output_messages.0.message.contents.0.message_content.text": "",
			}),
			wantInput: "Where is my order?", wantMissing: MissingOutput,
		},
		{
			name: "unknown block type next to text: the text is the answer",
			attrs: base(map[string]any{
				"llm.output_messages.0.message.contents.1.message_content.type": "container_upload",
				"llm.output_messages.0.message.contents.1.message_content.text": "not an answer",
			}),
			wantInput: "Where is my order?", wantOut: "It shipped.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			span := newSpan(t, "Anthropic Messages", tt.attrs)
			g := Read(span)
			assert.Equal(t, tt.wantInput, g.Input)
			assert.Equal(t, tt.wantOut, g.Output)
			assert.Equal(t, tt.wantSystem, g.SystemInstructions)
			assert.Equal(t, tt.wantCtx, g.ToolResults)
			assert.Equal(t, tt.wantMissing, g.Missing)
		})
	}
}

// TestAnthropicSemconvBlocks: Anthropic content blocks in the GenAI
// attributes, with a block type no reader knows, are read, never a panic.
func TestAnthropicSemconvBlocks(t *testing.T) {
	tests := []struct {
		name, output, wantOut, wantMissing string
	}{
		{"tool_use block", `[{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"get_order_status","input":{"orderId":"1"}}]}]`, "", MissingToolCalls},
		{"unknown block only", `[{"role":"assistant","content":[{"type":"mystery_block","data":"x"}]}]`, "", MissingOutput},
		{"unknown block and text", `[{"role":"assistant","content":[{"type":"mystery_block"},{"type":"text","text":"Done."}]}]`, "Done.", ""},
		{"malformed JSON", `[{"role":"assistant","content":[{"type":`, "", MissingOutput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			span := newSpan(t, "chat claude", map[string]any{
				"gen_ai.operation.name":  "chat",
				"gen_ai.input.messages":  `[{"role":"user","content":[{"type":"text","text":"Hi"},{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"Shipped."}]}]}]`,
				"gen_ai.output.messages": tt.output,
			})
			g := Read(span)
			assert.Equal(t, tt.wantOut, g.Output)
			assert.Equal(t, tt.wantMissing, g.Missing)
			assert.Equal(t, []string{"Shipped."}, g.ToolResults)
		})
	}
}
