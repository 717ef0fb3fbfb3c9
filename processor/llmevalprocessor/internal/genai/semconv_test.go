package genai

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestReadSemconv(t *testing.T) {
	tests := []struct {
		name  string
		attrs map[string]any
		want  Generation
	}{
		{
			name: "json strings",
			attrs: map[string]any{
				"gen_ai.operation.name":      "chat",
				"gen_ai.request.model":       "gpt-4o",
				"gen_ai.response.model":      "gpt-4o-2024-08-06",
				"gen_ai.response.id":         "chatcmpl-1",
				"gen_ai.system_instructions": `[{"type":"text","content":"Answer only from the context."}]`,
				"gen_ai.input.messages": `[{"role":"system","parts":[{"type":"text","content":"Be brief."}]},
					{"role":"user","parts":[{"type":"text","content":"Weather in Paris?"}]},
					{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"get_weather","arguments":{"location":"Paris"}}]},
					{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"rainy, 57°F"}]},
					{"role":"user","parts":[{"type":"text","content":"And tomorrow?"},{"type":"uri","modality":"image","uri":"https://x/y.png"}]}]`,
				"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"reasoning","content":"think"},{"type":"text","content":"Sunny tomorrow."}],"finish_reason":"stop"}]`,
			},
			want: Generation{
				Convention: ConventionGenAI,
				Input:      "And tomorrow?",
				Conversation: "system: Be brief.\nuser: Weather in Paris?\n" +
					`assistant: [tool call get_weather({"location":"Paris"})]` + "\ntool: rainy, 57°F\nuser: And tomorrow?",
				History: []Turn{
					{Role: "user", Content: "Weather in Paris?"},
					{Role: "assistant", Content: `[tool call get_weather({"location":"Paris"})]`},
				},
				Output:             "Sunny tomorrow.",
				ToolResults:        []string{"rainy, 57°F"},
				SystemInstructions: []string{"Answer only from the context.", "Be brief."},
				Model:              "gpt-4o",
				ResponseID:         "chatcmpl-1",
			},
		},
		{
			name: "structured values",
			attrs: map[string]any{
				"gen_ai.operation.name":      "chat",
				"gen_ai.response.model":      "claude-3",
				"gen_ai.system_instructions": "You are a tutor.",
				"gen_ai.input.messages": []any{
					map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "content": "2+2?"}}},
				},
				"gen_ai.output.messages": []any{
					map[string]any{"role": "assistant", "finish_reason": "stop", "parts": []any{
						map[string]any{"type": "blob", "modality": "image", "content": "aGVsbG8="},
						map[string]any{"type": "text", "content": "4"},
					}},
				},
			},
			want: Generation{
				Convention:         ConventionGenAI,
				Input:              "2+2?",
				Conversation:       "user: 2+2?",
				Output:             "4",
				SystemInstructions: []string{"You are a tutor."},
				Model:              "claude-3",
			},
		},
		{
			name: "multiple choices take the first",
			attrs: map[string]any{
				"gen_ai.operation.name": "chat",
				"gen_ai.input.messages": `[{"role":"user","parts":[{"type":"text","content":"hi"}]}]`,
				"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"first"}],"finish_reason":"stop"},
					{"role":"assistant","parts":[{"type":"text","content":"second"}],"finish_reason":"stop"}]`,
			},
			want: Generation{Convention: ConventionGenAI, Input: "hi", Conversation: "user: hi", Output: "first"},
		},
		{
			name: "tool call only",
			attrs: map[string]any{
				"gen_ai.operation.name":  "chat",
				"gen_ai.input.messages":  `[{"role":"user","parts":[{"type":"text","content":"weather?"}]}]`,
				"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"tool_call","id":"c","name":"get_weather","arguments":{}}],"finish_reason":"tool_call"}]`,
			},
			want: Generation{Convention: ConventionGenAI, Input: "weather?", Conversation: "user: weather?", Missing: MissingToolCalls},
		},
		{
			name: "redacted output",
			attrs: map[string]any{
				"gen_ai.input.messages":  `[{"role":"user","parts":[{"type":"text","content":"q"}]}]`,
				"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"__REDACTED__"}],"finish_reason":"stop"}]`,
			},
			want: Generation{Convention: ConventionGenAI, Input: "q", Conversation: "user: q", Output: "__REDACTED__", Missing: MissingRedacted},
		},
		{
			name:  "no content captured",
			attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"},
			want:  Generation{Model: "m", Missing: MissingOutput},
		},
		{
			name: "truncated output keeps the text read so far",
			attrs: map[string]any{
				"gen_ai.input.messages":  `[{"role":"user","parts":[{"type":"text","content":"tell me"}]},{"role":"user","parts":[{"type":"te`,
				"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"Once upon a ti`,
			},
			want: Generation{Convention: ConventionGenAI, Input: "tell me", Conversation: "user: tell me", Output: "Once upon a ti"},
		},
		{
			name: "python repr falls back to raw text",
			attrs: map[string]any{
				"gen_ai.input.messages":  `[{'role': 'user', 'content': 'hi'}]`,
				"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"hello"}]}]`,
			},
			want: Generation{Convention: ConventionGenAI, Input: `[{'role': 'user', 'content': 'hi'}]`,
				Conversation: `user: [{'role': 'user', 'content': 'hi'}]`, Output: "hello"},
		},
		{
			name: "output that is not its JSON is not judged as text",
			attrs: map[string]any{
				"gen_ai.input.messages":  `[{"role":"user","parts":[{"type":"text","content":"Who should we hire?"}]}]`,
				"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text" "content":"]]]}}}`,
			},
			want: Generation{Convention: ConventionGenAI, Input: "Who should we hire?", Conversation: "user: Who should we hire?",
				Missing: "malformed gen_ai.output.messages", Malformed: "gen_ai.output.messages"},
		},
		{
			name: "input that is not its JSON is not judged either",
			attrs: map[string]any{
				"gen_ai.input.messages":  `{[}]`,
				"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"hello"}]}]`,
			},
			want: Generation{Convention: ConventionGenAI, Output: "hello",
				Missing: "malformed gen_ai.input.messages", Malformed: "gen_ai.input.messages"},
		},
		{
			name: "output JSON cut short is still read",
			attrs: map[string]any{
				"gen_ai.input.messages":  `[{"role":"user","parts":[{"type":"text","content":"hi"}]}]`,
				"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"hello the`,
			},
			want: Generation{Convention: ConventionGenAI, Input: "hi", Conversation: "user: hi", Output: "hello the"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := read(newSpan(t, "chat", tt.attrs))
			assert.Equal(t, tt.want, got)
		})
	}
}
