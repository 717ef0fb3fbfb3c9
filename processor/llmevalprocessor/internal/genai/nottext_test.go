package genai

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestReadNotText: content that is no text (null, a number, a boolean, an
// empty string, a content field of another type, JSON that is no message)
// is not scorable, whatever reader finds it, with a reason naming the
// attribute and what it holds; nothing of such an output is taken as the
// answer. An input of such a type makes the call not scorable too. A
// type error is counted as malformed content, an empty value is not.
func TestReadNotText(t *testing.T) {
	const (
		semconvIn  = `[{"role":"user","parts":[{"type":"text","content":"Hi?"}]}]`
		semconvOut = `[{"role":"assistant","parts":[{"type":"text","content":"Hello."}]}]`
		brackets   = "[" // repeated 200,000 times
	)
	semconv := func(in, out any) map[string]any {
		return map[string]any{"gen_ai.operation.name": "chat", attrInputMessages: in, attrOutputMessages: out}
	}
	langfuse := func(out any) map[string]any {
		return map[string]any{attrLangfuseType: "generation", attrLangfuseInput: "Who should we hire?", attrLangfuseOutput: out}
	}
	oiRaw := func(out any, mime string) map[string]any {
		a := map[string]any{"openinference.span.kind": "LLM", "input.value": "Hi?", "output.value": out}
		if mime != "" {
			a["output.mime_type"] = mime
		}
		return a
	}
	oiIndexed := func(key string, v any) map[string]any {
		return map[string]any{"openinference.span.kind": "LLM", "llm.input_messages.0.message.role": "user",
			"llm.input_messages.0.message.content": "Hi?", "llm.output_messages.0.message.role": "assistant", key: v}
	}
	openllmetry := func(v any) map[string]any {
		return map[string]any{"llm.request.type": "chat", "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Hi?",
			"gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": v}
	}
	vercel := func(k string, v any) map[string]any {
		a := map[string]any{"ai.operationId": "ai.generateText.doGenerate",
			"ai.prompt.messages": `[{"role":"user","content":"Hi?"}]`, "ai.response.text": "Hello."}
		a[k] = v
		return a
	}
	mastra := func(out any) map[string]any {
		return map[string]any{attrMastraType: "model_step", "mastra.model_step.input": `[{"role":"user","content":"Hi?"}]`,
			"mastra.model_step.output": out}
	}
	genkit := func(out any) map[string]any {
		return map[string]any{attrGenkitType: "action", attrGenkitSubtype: "model",
			attrGenkitInput: `{"messages":[{"role":"user","content":[{"text":"Hi?"}]}]}`, attrGenkitOutput: out}
	}
	withEvent := func(attrs map[string]any, name string, evAttrs map[string]any) func(*testing.T) ptrace.Span {
		return func(t *testing.T) ptrace.Span {
			s := newSpan(t, "chat gpt-4o", attrs)
			addEvent(t, s, name, evAttrs)
			return s
		}
	}
	tests := []struct {
		name      string
		attrs     map[string]any               // the span's attributes, or
		span      func(*testing.T) ptrace.Span // a span built otherwise
		agent     bool                         // read with ReadAgent
		missing   string
		malformed string
	}{
		// GenAI semantic conventions, span attributes.
		{name: "semconv output an Int attribute", attrs: semconv(semconvIn, int64(12345)),
			missing: "gen_ai.output.messages is a number, not text", malformed: attrOutputMessages},
		{name: "semconv output a Double attribute", attrs: semconv(semconvIn, 0.5),
			missing: "gen_ai.output.messages is a number, not text", malformed: attrOutputMessages},
		{name: "semconv output a Bool attribute", attrs: semconv(semconvIn, true),
			missing: "gen_ai.output.messages is a boolean, not text", malformed: attrOutputMessages},
		{name: "semconv output JSON null", attrs: semconv(semconvIn, "null"),
			missing: "gen_ai.output.messages is null, not text", malformed: attrOutputMessages},
		{name: "semconv output a JSON number", attrs: semconv(semconvIn, "12345"),
			missing: "gen_ai.output.messages is a number, not text", malformed: attrOutputMessages},
		{name: "semconv output an empty string", attrs: semconv(semconvIn, ""),
			missing: "gen_ai.output.messages is empty"},
		{name: "semconv output an empty JSON string", attrs: semconv(semconvIn, `""`),
			missing: "gen_ai.output.messages is empty"},
		{name: "semconv output an empty list", attrs: semconv(semconvIn, `[]`),
			missing: "gen_ai.output.messages is empty"},
		{name: "semconv part content a number", attrs: semconv(semconvIn, `[{"role":"assistant","parts":[{"type":"text","content":12345}]}]`),
			missing: "gen_ai.output.messages: its content is a number, not text", malformed: attrOutputMessages},
		{name: "semconv message content a boolean", attrs: semconv(semconvIn, `[{"role":"assistant","content":false}]`),
			missing: "gen_ai.output.messages: its content is a boolean, not text", malformed: attrOutputMessages},
		{name: "semconv output JSON that is no message", attrs: semconv(semconvIn, `[1,2,3]`),
			missing: "gen_ai.output.messages holds JSON that is not a message", malformed: attrOutputMessages},
		{name: "semconv input an Int attribute", attrs: semconv(int64(7), semconvOut),
			missing: "gen_ai.input.messages is a number, not text", malformed: attrInputMessages},
		{name: "semconv input a user turn of a number", attrs: semconv(`[{"role":"system","content":"Be brief."},{"role":"user","content":7}]`, semconvOut),
			missing: "gen_ai.input.messages: its content is a number, not text", malformed: attrInputMessages},

		// Span events.
		{name: "operation details event output JSON true", span: withEvent(map[string]any{"gen_ai.operation.name": "chat"},
			eventOperationDetails, map[string]any{attrInputMessages: semconvIn, attrOutputMessages: "true"}),
			missing: "gen_ai.output.messages is a boolean, not text", malformed: attrOutputMessages},
		{name: "v1.27 completion event a JSON number", span: withEvent(map[string]any{"gen_ai.operation.name": "chat"},
			eventContentCompletion, map[string]any{"gen_ai.completion": "12345"}),
			missing: "gen_ai.completion is a number, not text", malformed: "gen_ai.completion"},
		{name: "choice event content an Int", span: withEvent(map[string]any{"gen_ai.operation.name": "chat"},
			eventChoice, map[string]any{"index": int64(0), "finish_reason": "stop", "message.content": int64(12345)}),
			missing: "gen_ai.choice content is a number, not text", malformed: "gen_ai.choice content"},

		// OpenInference, indexed and raw.
		{name: "openinference message content an Int", attrs: oiIndexed("llm.output_messages.0.message.content", int64(12345)),
			missing: "llm.output_messages.0.message.content is a number, not text", malformed: "llm.output_messages.N.message.content"},
		{name: "openinference message content empty", attrs: oiIndexed("llm.output_messages.0.message.content", ""),
			missing: "llm.output_messages.0.message.content is empty"},
		{name: "anthropic content block text a Bool", attrs: map[string]any{"openinference.span.kind": "LLM", "llm.system": "anthropic",
			"llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": "Hi?",
			"llm.output_messages.0.message.contents.0.message_content.type": "text",
			"llm.output_messages.0.message.contents.0.message_content.text": true},
			missing:   "llm.output_messages.0.message.contents.0.message_content.text is a boolean, not text",
			malformed: "llm.output_messages.N.message.contents.N.message_content.text"},
		{name: "openinference legacy choice text an Int", attrs: map[string]any{"openinference.span.kind": "LLM",
			"llm.prompts.0.prompt.text": "Hi?", "llm.choices.0.completion.text": int64(3)},
			missing: "llm.choices.0.completion.text is a number, not text", malformed: "llm.choices.N.completion.text"},
		{name: "openinference input content an Int", attrs: map[string]any{"openinference.span.kind": "LLM",
			"llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": int64(7),
			"llm.output_messages.0.message.role": "assistant", "llm.output_messages.0.message.content": "Hello."},
			missing: "llm.input_messages.0.message.content is a number, not text", malformed: "llm.input_messages.N.message.content"},
		{name: "output.value an Int attribute", attrs: oiRaw(int64(200), ""),
			missing: "output.value is a number, not text", malformed: "output.value"},
		{name: "output.value JSON null", attrs: oiRaw("null", "application/json"),
			missing: "output.value is null, not text", malformed: "output.value"},
		{name: "output.value an empty JSON string", attrs: oiRaw(`""`, "application/json"),
			missing: "output.value is empty"},
		{name: "output.value of 200,000 brackets", attrs: oiRaw(strings.Repeat(brackets, 200_000), "application/json"),
			missing: MissingMalformedPrefix + "output.value", malformed: "output.value"},
		{name: "output.value of 200,000 brackets without a mime type", attrs: oiRaw(strings.Repeat(brackets, 200_000), ""),
			missing: MissingMalformedPrefix + "output.value", malformed: "output.value"},
		{name: "output.value JSON that is no message", attrs: oiRaw(`{"score":0.4}`, "application/json"),
			missing: "output.value holds JSON that is not a message", malformed: "output.value"},
		{name: "anthropic response in output.value with text a number", attrs: oiRaw(
			`{"type":"message","role":"assistant","content":[{"type":"text","text":12345}]}`, "application/json"),
			missing: "output.value: its content is a number, not text", malformed: "output.value"},

		// OpenLLMetry.
		{name: "openllmetry completion content an Int", attrs: openllmetry(int64(12345)),
			missing: "gen_ai.completion.0.content is a number, not text", malformed: "gen_ai.completion.N.content"},
		{name: "openllmetry completion content a Bool", attrs: openllmetry(false),
			missing: "gen_ai.completion.0.content is a boolean, not text", malformed: "gen_ai.completion.N.content"},
		{name: "openllmetry completion content empty", attrs: openllmetry(""),
			missing: "gen_ai.completion.0.content is empty"},

		// Vercel AI SDK.
		{name: "vercel response text an Int", attrs: vercel("ai.response.text", int64(12345)),
			missing: "ai.response.text is a number, not text", malformed: "ai.response.text"},
		{name: "vercel response text empty and no tool call", attrs: vercel("ai.response.text", ""),
			missing: "ai.response.text is empty"},
		{name: "vercel prompt messages a JSON number", attrs: vercel("ai.prompt.messages", "12345"),
			missing: "ai.prompt.messages is a number, not text", malformed: "ai.prompt.messages"},

		// Mastra.
		{name: "mastra output text a number", attrs: mastra(`{"text":12345}`),
			missing: "mastra.model_step.output: its content is a number, not text", malformed: "mastra.model_step.output"},
		{name: "mastra output a Bool attribute", attrs: mastra(true),
			missing: "mastra.model_step.output is a boolean, not text", malformed: "mastra.model_step.output"},
		{name: "mastra output JSON null", attrs: mastra("null"),
			missing: "mastra.model_step.output is null, not text", malformed: "mastra.model_step.output"},

		// Langfuse: the cases of the black-box probe.
		{name: "langfuse output null", attrs: langfuse("null"),
			missing: "langfuse.observation.output is null, not text", malformed: attrLangfuseOutput},
		{name: "langfuse output 12345", attrs: langfuse("12345"),
			missing: "langfuse.observation.output is a number, not text", malformed: attrLangfuseOutput},
		{name: "langfuse output an empty string", attrs: langfuse(""),
			missing: "langfuse.observation.output is empty"},
		{name: `langfuse output ""`, attrs: langfuse(`""`),
			missing: "langfuse.observation.output is empty"},
		{name: "langfuse output true", attrs: langfuse("true"),
			missing: "langfuse.observation.output is a boolean, not text", malformed: attrLangfuseOutput},
		{name: "langfuse output content 12345", attrs: langfuse(`{"content": 12345}`),
			missing: "langfuse.observation.output: its content is a number, not text", malformed: attrLangfuseOutput},
		{name: "langfuse output an Int attribute", attrs: langfuse(int64(12345)),
			missing: "langfuse.observation.output is a number, not text", malformed: attrLangfuseOutput},
		{name: "langfuse input a Bool attribute", attrs: map[string]any{attrLangfuseType: "generation",
			attrLangfuseInput: true, attrLangfuseOutput: "Hello."},
			missing: "langfuse.observation.input is a boolean, not text", malformed: attrLangfuseInput},

		// Genkit.
		{name: "genkit output a JSON number", attrs: genkit("12345"),
			missing: "genkit:output is a number, not text", malformed: attrGenkitOutput},
		{name: "genkit part text a number", attrs: genkit(`{"message":{"role":"model","content":[{"text":12345}]}}`),
			missing: "genkit:output: its content is a number, not text", malformed: attrGenkitOutput},
		{name: "genkit output JSON that is no response", attrs: genkit(`{"usage":{"inputTokens":3}}`),
			missing: "genkit:output holds JSON that is not a message", malformed: attrGenkitOutput},

		// Agent spans.
		{name: "pydantic ai final_result an Int", agent: true, attrs: map[string]any{"gen_ai.operation.name": "invoke_agent",
			"final_result": int64(42)},
			missing: "final_result is a number, not text", malformed: "final_result"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var span ptrace.Span
			if tt.span != nil {
				span = tt.span(t)
			} else {
				span = newSpan(t, "chat gpt-4o", tt.attrs)
			}
			var g Generation
			if tt.agent {
				g = ReadAgent(span)
			} else {
				g = Read(span)
			}
			assert.Equal(t, tt.missing, g.Missing)
			assert.Equal(t, tt.malformed, g.Malformed)
			if !strings.Contains(tt.missing, "input") && !strings.Contains(tt.missing, "prompt") {
				assert.Empty(t, g.Output, "nothing is judged as the answer")
			}
		})
	}
}

// TestReadLogsNotText: the same for GenAI log events, in bodies and in the
// details record's attributes.
func TestReadLogsNotText(t *testing.T) {
	record := func(name string, body any, attrs map[string]any) func(plog.LogRecordSlice) {
		return func(s plog.LogRecordSlice) {
			rec := s.AppendEmpty()
			rec.SetEventName(name)
			if body != nil {
				require.NoError(t, rec.Body().FromRaw(body))
			}
			require.NoError(t, rec.Attributes().FromRaw(attrs))
		}
	}
	user := record("gen_ai.user.message", "Hi?", nil)
	tests := []struct {
		name      string
		records   []func(plog.LogRecordSlice)
		missing   string
		malformed string
	}{
		{name: "choice body an Int", records: []func(plog.LogRecordSlice){user, record("gen_ai.choice", int64(12345), nil)},
			missing: "gen_ai.choice body is a number, not text", malformed: "gen_ai.choice body"},
		{name: "choice message content a Bool", records: []func(plog.LogRecordSlice){user,
			record("gen_ai.choice", map[string]any{"index": int64(0), "message": map[string]any{"content": true}}, nil)},
			missing: "gen_ai.choice content is a boolean, not text", malformed: "gen_ai.choice content"},
		{name: "details record output JSON null", records: []func(plog.LogRecordSlice){
			record(eventOperationDetails, nil, map[string]any{attrInputMessages: `[{"role":"user","content":"Hi?"}]`, attrOutputMessages: "null"})},
			missing: "gen_ai.output.messages is null, not text", malformed: attrOutputMessages},
		{name: "details record output empty", records: []func(plog.LogRecordSlice){
			record(eventOperationDetails, nil, map[string]any{attrInputMessages: `[{"role":"user","content":"Hi?"}]`, attrOutputMessages: ""})},
			missing: "gen_ai.output.messages is empty"},
		{name: "user message body a Double", records: []func(plog.LogRecordSlice){record("gen_ai.user.message", 2.5, nil),
			record("gen_ai.choice", "Hello.", nil)},
			missing: "gen_ai.user.message body is a number, not text", malformed: "gen_ai.user.message body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := plog.NewLogRecordSlice()
			for _, add := range tt.records {
				add(s)
			}
			g := ReadLogs(s)
			assert.Equal(t, tt.missing, g.Missing)
			assert.Equal(t, tt.malformed, g.Malformed)
		})
	}
}

// TestReadTextThatLooksLikeOtherTypes: text stays text where its
// convention says text: an indexed content or a text/plain output.value
// of digits, a JSON string literal of text, a Vercel answer beside an
// empty text when tools were called.
func TestReadTextThatLooksLikeOtherTypes(t *testing.T) {
	tests := []struct {
		name    string
		attrs   map[string]any
		output  string
		missing string
	}{
		{name: "openinference content of digits", attrs: map[string]any{"openinference.span.kind": "LLM",
			"llm.input_messages.0.message.content": "2+2?", "llm.output_messages.0.message.content": "4"}, output: "4"},
		{name: "text/plain output.value of digits", attrs: map[string]any{"openinference.span.kind": "LLM",
			"input.value": "2+2?", "output.value": "4", "output.mime_type": "text/plain"}, output: "4"},
		{name: "langfuse JSON string literal", attrs: map[string]any{attrLangfuseType: "generation",
			attrLangfuseInput: "Hi?", attrLangfuseOutput: `"Hello."`}, output: "Hello."},
		{name: "vercel empty text with a tool call", attrs: map[string]any{"ai.operationId": "ai.generateText.doGenerate",
			"ai.prompt.messages": `[{"role":"user","content":"Weather?"}]`, "ai.response.text": "",
			"ai.response.toolCalls": `[{"toolCallId":"c1","toolName":"weather","args":"{}"}]`}, missing: MissingToolCalls},
		{name: "message with null content and tool calls", attrs: map[string]any{attrLangfuseType: "generation",
			attrLangfuseInput: "Weather?", attrLangfuseOutput: `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","function":{"name":"weather","arguments":"{}"}}]}`},
			missing: MissingToolCalls},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := Read(newSpan(t, "chat gpt-4o", tt.attrs))
			assert.Equal(t, tt.output, g.Output)
			assert.Equal(t, tt.missing, g.Missing)
		})
	}
}

// TestReadLangGraphState: LangGraph's root span records the graph's state
// in output.value, every message serialised by LangChain ({"lc": 1,
// "id": [..., "AIMessage"], "kwargs": {...}}): the agent's answer is its
// last AI message, the request its human message; the state is not
// judged as JSON, nor is it "JSON that is not a message".
func TestReadLangGraphState(t *testing.T) {
	spans := readClientSpans(t, "langgraph-agent")
	require.Len(t, spans["LangGraph"], 1)
	g := ReadAgent(spans["LangGraph"][0].span)
	assert.Empty(t, g.Missing)
	assert.Equal(t, "How long is the warranty on the frame of the Orbit e-bike?", g.Input)
	assert.Equal(t, "The frame of the Orbit e-bike has a 10-year warranty [Warranty policy].", g.Output)

	state := `{"messages":[` +
		`{"lc":1,"type":"constructor","id":["langchain_core","messages","HumanMessage"],"kwargs":{"content":"Hi?"}},` +
		`{"lc":1,"type":"constructor","id":["langchain_core","messages","AIMessage"],"kwargs":{"content":"","tool_calls":[{"name":"f","args":{},"id":"c1","type":"tool_call"}]}}]}`
	g = Read(newSpan(t, "LangGraph", map[string]any{"openinference.span.kind": "CHAIN", "input.value": "Hi?",
		"output.value": state, "output.mime_type": "application/json"}))
	assert.Equal(t, MissingToolCalls, g.Missing, "the last AI message only calls a tool")
}
