package genai

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func TestReadEvents(t *testing.T) {
	tests := []struct {
		name  string
		build func(t *testing.T, span ptrace.Span)
		want  Generation
	}{
		{
			name: "v1.27 content events",
			build: func(t *testing.T, span ptrace.Span) {
				addEvent(t, span, "gen_ai.content.prompt", map[string]any{
					"gen_ai.prompt": `[{"role":"system","content":"Be terse."},{"role":"user","content":"Capital of France?"}]`,
				})
				addEvent(t, span, "gen_ai.content.completion", map[string]any{
					"gen_ai.completion": `[{"role":"assistant","content":"Paris."}]`,
				})
			},
			want: Generation{
				Convention: ConventionGenAIEvents, Input: "Capital of France?",
				Conversation:       "system: Be terse.\nuser: Capital of France?",
				Output:             "Paris.",
				SystemInstructions: []string{"Be terse."},
			},
		},
		{
			name: "per-message events and choices",
			build: func(t *testing.T, span ptrace.Span) {
				addEvent(t, span, "gen_ai.system.message", map[string]any{"content": "You are kind."})
				addEvent(t, span, "gen_ai.user.message", map[string]any{"content": "Weather?"})
				addEvent(t, span, "gen_ai.assistant.message", map[string]any{"tool_calls": []any{
					map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "weather", "arguments": `{"city":"Rome"}`}},
				}})
				addEvent(t, span, "gen_ai.tool.message", map[string]any{"id": "c1", "content": "sunny, 25C"})
				addEvent(t, span, "gen_ai.choice", map[string]any{"index": int64(1), "finish_reason": "stop", "message.content": "second choice"})
				addEvent(t, span, "gen_ai.choice", map[string]any{"index": int64(0), "finish_reason": "stop",
					"message": map[string]any{"role": "assistant", "content": "It is sunny in Rome."}})
			},
			want: Generation{
				Convention: ConventionGenAIEvents, Input: "Weather?",
				Conversation: "system: You are kind.\nuser: Weather?\n" +
					`assistant: [tool call weather({"city":"Rome"})]` + "\ntool: sunny, 25C",
				Output: "It is sunny in Rome.", ToolResults: []string{"sunny, 25C"},
				SystemInstructions: []string{"You are kind."},
			},
		},
		{
			name: "choice with tool calls only",
			build: func(t *testing.T, span ptrace.Span) {
				addEvent(t, span, "gen_ai.user.message", map[string]any{"content": "Weather?"})
				addEvent(t, span, "gen_ai.choice", map[string]any{"index": int64(0), "finish_reason": "tool_calls",
					"message":    map[string]any{"role": "assistant"},
					"tool_calls": `[{"id":"c","type":"function","function":{"name":"weather","arguments":"{}"}}]`})
			},
			want: Generation{Convention: ConventionGenAIEvents, Input: "Weather?", Conversation: "user: Weather?",
				Missing: MissingToolCalls},
		},
		{
			name: "operation details event with structured values",
			build: func(t *testing.T, span ptrace.Span) {
				addEvent(t, span, "gen_ai.client.inference.operation.details", map[string]any{
					"gen_ai.system_instructions": []any{map[string]any{"type": "text", "content": "Cite sources."}},
					"gen_ai.input.messages": []any{map[string]any{"role": "user", "parts": []any{
						map[string]any{"type": "text", "content": "Who wrote Hamlet?"}}}},
					"gen_ai.output.messages": []any{map[string]any{"role": "assistant", "finish_reason": "stop", "parts": []any{
						map[string]any{"type": "text", "content": "Shakespeare."}}}},
				})
			},
			want: Generation{Convention: ConventionGenAIEvents, Input: "Who wrote Hamlet?", Conversation: "user: Who wrote Hamlet?",
				Output: "Shakespeare.", SystemInstructions: []string{"Cite sources."}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			span := newSpan(t, "chat", map[string]any{"gen_ai.operation.name": "chat"})
			tt.build(t, span)
			assert.Equal(t, tt.want, read(span))
		})
	}
}

func TestReadOpenInference(t *testing.T) {
	tests := []struct {
		name  string
		attrs map[string]any
		want  Generation
	}{
		{
			name: "flattened messages, sparse and with contents",
			attrs: map[string]any{
				"openinference.span.kind":                                                 "LLM",
				"llm.model_name":                                                          "gpt-4o-mini",
				"llm.input_messages.0.message.role":                                       "system",
				"llm.input_messages.0.message.content":                                    "You are a math tutor.",
				"llm.input_messages.10.message.role":                                      "user",
				"llm.input_messages.10.message.content":                                   "And 2*3?",
				"llm.input_messages.2.message.role":                                       "user",
				"llm.input_messages.2.message.contents.0.message_content.type":            "text",
				"llm.input_messages.2.message.contents.0.message_content.text":            "What is 23*87?",
				"llm.input_messages.2.message.contents.1.message_content.type":            "image",
				"llm.input_messages.2.message.contents.1.message_content.image.image.url": "data:image/png;base64,AAAA",
				"llm.output_messages.0.message.role":                                      "assistant",
				"llm.output_messages.0.message.contents.0.message_content.type":           "reasoning",
				"llm.output_messages.0.message.contents.0.message_content.text":           "2*3 is six",
				"llm.output_messages.0.message.contents.1.message_content.type":           "text",
				"llm.output_messages.0.message.contents.1.message_content.text":           "6",
				"llm.output_messages.1.message.role":                                      "assistant",
				"llm.output_messages.1.message.content":                                   "six",
				"retrieval.documents.0.document.content":                                  "Multiplication table",
				"llm.prompt_template.variables":                                           `{"context":["doc A","doc B"],"question":"q"}`,
				"input.value":                                                             `{"messages":[]}`,
				"output.value":                                                            "ignored: messages win",
			},
			want: Generation{
				Convention: ConventionOpenInference, Input: "And 2*3?",
				Conversation:       "system: You are a math tutor.\nuser: What is 23*87?\nuser: And 2*3?",
				History:            []Turn{{Role: "user", Content: "What is 23*87?"}},
				Output:             "6",
				Documents:          []string{"Multiplication table", "doc A", "doc B"},
				SystemInstructions: []string{"You are a math tutor."},
				Model:              "gpt-4o-mini",
			},
		},
		{
			name: "tool calls only",
			attrs: map[string]any{
				"llm.input_messages.0.message.role":                                       "user",
				"llm.input_messages.0.message.content":                                    "What is 23*87?",
				"llm.output_messages.0.message.role":                                      "assistant",
				"llm.output_messages.0.message.tool_calls.0.tool_call.function.name":      "multiply",
				"llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": `{"a":23,"b":87}`,
			},
			want: Generation{Convention: ConventionOpenInference, Input: "What is 23*87?", Conversation: "user: What is 23*87?",
				Missing: MissingToolCalls},
		},
		{
			name: "redacted input",
			attrs: map[string]any{
				"llm.input_messages.0.message.role":     "user",
				"llm.input_messages.0.message.content":  "__REDACTED__",
				"llm.output_messages.0.message.role":    "assistant",
				"llm.output_messages.0.message.content": "answer",
			},
			want: Generation{Convention: ConventionOpenInference, Input: "__REDACTED__", Conversation: "user: __REDACTED__",
				Output: "answer", Missing: MissingRedacted},
		},
		{
			name: "raw json input and plain output",
			attrs: map[string]any{
				"input.value":      `{"model":"gpt-4o","messages":[{"role":"user","content":"Hi there"}]}`,
				"input.mime_type":  "application/json",
				"output.value":     "Hello!",
				"output.mime_type": "text/plain",
			},
			want: Generation{Convention: ConventionOpenInference, Input: "Hi there", Conversation: "user: Hi there", Output: "Hello!"},
		},
		{
			name: "raw openai response json",
			attrs: map[string]any{
				"input.value":      "plain question",
				"output.value":     `{"id":"chatcmpl-9","choices":[{"index":0,"message":{"role":"assistant","content":"plain answer"},"finish_reason":"stop"}]}`,
				"output.mime_type": "application/json",
			},
			want: Generation{Convention: ConventionOpenInference, Input: "plain question", Conversation: "user: plain question",
				Output: "plain answer"},
		},
		{
			name: "raw json of a chain names its text",
			attrs: map[string]any{
				"input.value":  `{"query":"q"}`,
				"output.value": `{"answer":"a"}`,
			},
			want: Generation{Convention: ConventionOpenInference, Input: "q", Conversation: "user: q", Output: "a"},
		},
		{
			name: "raw json of no known shape is no message, not judged as text",
			attrs: map[string]any{
				"input.value":  "q",
				"output.value": `{"score":0.4,"ids":[1,2]}`,
			},
			want: Generation{Convention: ConventionOpenInference, Input: "q", Conversation: "user: q",
				Missing: "output.value holds JSON that is not a message", Malformed: "output.value"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, read(newSpan(t, "ChatCompletion", tt.attrs)))
		})
	}
}

func TestReadOpenLLMetry(t *testing.T) {
	tests := []struct {
		name  string
		attrs map[string]any
		want  Generation
	}{
		{
			name: "indexed prompt and completions",
			attrs: map[string]any{
				"llm.request.type":                  "chat",
				"gen_ai.system":                     "openai",
				"gen_ai.request.model":              "gpt-3.5-turbo",
				"gen_ai.response.id":                "chatcmpl-7",
				"gen_ai.prompt.name":                "not an index",
				"gen_ai.prompt.0.role":              "system",
				"gen_ai.prompt.0.content":           "You are a poet.",
				"gen_ai.prompt.1.role":              "user",
				"gen_ai.prompt.1.content":           `[{"type":"text","text":"A haiku about rain"},{"type":"image_url","image_url":{"url":"data:..."}}]`,
				"gen_ai.completion.1.role":          "assistant",
				"gen_ai.completion.1.content":       "second",
				"gen_ai.completion.0.role":          "assistant",
				"gen_ai.completion.0.content":       "Soft rain on the roof",
				"gen_ai.completion.0.finish_reason": "stop",
			},
			want: Generation{
				Convention: ConventionOpenLLMetry, Input: "A haiku about rain",
				Conversation:       "system: You are a poet.\nuser: A haiku about rain",
				Output:             "Soft rain on the roof",
				SystemInstructions: []string{"You are a poet."},
				Model:              "gpt-3.5-turbo", ResponseID: "chatcmpl-7",
			},
		},
		{
			name: "tool calls only with tool results in the history",
			attrs: map[string]any{
				"gen_ai.prompt.0.role":                       "user",
				"gen_ai.prompt.0.content":                    "Weather in Paris?",
				"gen_ai.prompt.1.role":                       "tool",
				"gen_ai.prompt.1.content":                    "rainy",
				"gen_ai.prompt.1.tool_call_id":               "c1",
				"gen_ai.completion.0.role":                   "assistant",
				"gen_ai.completion.0.finish_reason":          "tool_calls",
				"gen_ai.completion.0.tool_calls.0.name":      "get_weather",
				"gen_ai.completion.0.tool_calls.0.arguments": `{"location":"Paris"}`,
			},
			want: Generation{Convention: ConventionOpenLLMetry, Input: "Weather in Paris?",
				Conversation: "user: Weather in Paris?\ntool: rainy", ToolResults: []string{"rainy"},
				Missing: MissingToolCalls},
		},
		{
			name: "content filter",
			attrs: map[string]any{
				"gen_ai.prompt.0.role":              "user",
				"gen_ai.prompt.0.content":           "bad",
				"gen_ai.completion.0.role":          "assistant",
				"gen_ai.completion.0.content":       "FILTERED",
				"gen_ai.completion.0.finish_reason": "content_filter",
			},
			want: Generation{Convention: ConventionOpenLLMetry, Input: "bad", Conversation: "user: bad",
				Output: "FILTERED", Missing: MissingFiltered},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, read(newSpan(t, "openai.chat", tt.attrs)))
		})
	}
}

func TestReadVercel(t *testing.T) {
	tests := []struct {
		name  string
		attrs map[string]any
		want  Generation
	}{
		{
			name: "doGenerate",
			attrs: map[string]any{
				"ai.operationId": "ai.generateText.doGenerate",
				"ai.model.id":    "gpt-4o",
				"ai.response.id": "resp-1",
				"ai.prompt.messages": `[{"role":"system","content":"Reply in French."},
					{"role":"user","content":[{"type":"text","text":"Describe it"},{"type":"file","mediaType":"image/png","data":"AAAA"}]},
					{"role":"assistant","content":[{"type":"tool-call","toolCallId":"t1","toolName":"lookup","args":{"q":"x"}}]},
					{"role":"tool","content":[{"type":"tool-result","toolCallId":"t1","toolName":"lookup","result":{"found":"a red car"}}]}]`,
				"ai.response.text":         "Une voiture rouge.",
				"ai.response.finishReason": "stop",
			},
			want: Generation{
				Convention: ConventionVercel, Input: "Describe it",
				Conversation: "system: Reply in French.\nuser: Describe it\n" +
					`assistant: [tool call lookup({"q":"x"})]` + "\n" + `tool: {"found":"a red car"}`,
				Output: "Une voiture rouge.", ToolResults: []string{`{"found":"a red car"}`},
				SystemInstructions: []string{"Reply in French."},
				Model:              "gpt-4o", ResponseID: "resp-1",
			},
		},
		{
			name: "outer span prompt and object output",
			attrs: map[string]any{
				"ai.prompt":          `{"system":"Extract JSON.","prompt":"Name: Ann, age 3"}`,
				"ai.response.object": `{"name":"Ann","age":3}`,
			},
			want: Generation{Convention: ConventionVercel, Input: "Name: Ann, age 3", Conversation: "user: Name: Ann, age 3",
				Output: `{"name":"Ann","age":3}`, SystemInstructions: []string{"Extract JSON."}},
		},
		{
			name: "tool calls only",
			attrs: map[string]any{
				"ai.prompt.messages":       `[{"role":"user","content":"weather?"}]`,
				"ai.response.text":         "",
				"ai.response.toolCalls":    `[{"toolCallType":"function","toolCallId":"t","toolName":"weather","args":"{}"}]`,
				"ai.response.finishReason": "tool-calls",
			},
			want: Generation{Convention: ConventionVercel, Input: "weather?", Conversation: "user: weather?",
				Missing: MissingToolCalls},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, read(newSpan(t, "ai.generateText.doGenerate", tt.attrs)))
		})
	}
}

func TestReadPrecedence(t *testing.T) {
	span := newSpan(t, "chat", map[string]any{
		"gen_ai.input.messages":                 `[{"role":"user","parts":[{"type":"text","content":"from semconv"}]}]`,
		"llm.input_messages.0.message.role":     "user",
		"llm.input_messages.0.message.content":  "from openinference",
		"llm.output_messages.0.message.content": "answer from openinference",
		"gen_ai.completion.0.content":           "answer from openllmetry",
		"ai.response.text":                      "answer from vercel",
		"output.value":                          "raw answer",
	})
	addEvent(t, span, "gen_ai.content.completion", map[string]any{"gen_ai.completion": `[{"role":"assistant","content":"answer from events"}]`})
	got := read(span)
	assert.Equal(t, "from semconv", got.Input)
	assert.Equal(t, "answer from events", got.Output)
	assert.Equal(t, ConventionGenAIEvents, got.Convention)
}

func TestReadSpanContext(t *testing.T) {
	got := read(newSpan(t, "chat", map[string]any{
		"gen_ai.retrieval.documents": `[{"id":"d1","score":0.9,"content":"Paris is the capital of France."},{"id":"d2","score":0.5}]`,
		"gen_ai.tool.call.result":    map[string]any{"temp": int64(21)},
		"gen_ai.output.messages":     `[{"role":"assistant","parts":[{"type":"text","content":"ok"}]}]`,
	}))
	assert.Equal(t, []string{"Paris is the capital of France.", `{"temp":21}`}, got.Documents)
}
