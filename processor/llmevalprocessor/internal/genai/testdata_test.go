package genai

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// expected is what one span of a testdata file must give.
type expected struct {
	kind Kind
	gen  Generation // compared only for KindGeneration
}

func gen(conv, input, conversation, output string, o ...func(*Generation)) Generation {
	g := Generation{Convention: conv, Input: input, Conversation: conversation, Output: output}
	for _, f := range o {
		f(&g)
	}
	return g
}

func model(m, id string) func(*Generation) {
	return func(g *Generation) { g.Model, g.ResponseID = m, id }
}
func system(s ...string) func(*Generation) { return func(g *Generation) { g.SystemInstructions = s } }
func tools(s ...string) func(*Generation)  { return func(g *Generation) { g.ToolResults = s } }
func docs(s ...string) func(*Generation)   { return func(g *Generation) { g.Documents = s } }
func missing(r string) func(*Generation)   { return func(g *Generation) { g.Missing = r } }

// TestConventionFiles reads every span of the OTLP/JSON files the processor
// uses as golden-test inputs and checks what Classify and Read say.
func TestConventionFiles(t *testing.T) {
	other, aggregate, judge := expected{kind: KindOther}, expected{kind: KindAggregate}, expected{kind: KindJudge}
	contextSource := expected{kind: KindContext}
	g := func(x Generation) expected { return expected{kind: KindGeneration, gen: x} }
	files := map[string]map[string]expected{
		"genai_attributes_json.json": {
			"chat gpt-4o-mini": g(gen(ConventionGenAI, "Where is my order 1042?",
				"user: Where is my order 1042?\n"+`assistant: [tool call lookup_order({"order_id":"1042"})]`+"\ntool: Order 1042 shipped on 2025-12-18 via DHL, tracking DE123456.",
				"Order 1042 shipped on 18 December 2025 with DHL (tracking DE123456).",
				tools("Order 1042 shipped on 2025-12-18 via DHL, tracking DE123456."),
				system("You are the ACME support assistant. Answer only from the provided context and cite the order number."),
				model("gpt-4o-mini", "chatcmpl-AJSON1"))),
			"chat o4-mini": g(gen(ConventionGenAI, "Is 1042 eligible for a refund if it arrives late?",
				"system: Think step by step.\nuser: Is 1042 eligible for a refund if it arrives late?",
				"Yes, if it arrives more than 5 days late you can request a refund.",
				system("Think step by step."), model("o4-mini", "chatcmpl-AJSON2"))),
		},
		"genai_attributes_structured.json": {
			"chat claude-sonnet-4": g(gen(ConventionGenAI, "What does HTTP 429 mean?", "user: What does HTTP 429 mean?",
				"It means the client sent too many requests and is being rate limited.",
				system("Answer in one sentence."), model("claude-sonnet-4", "msg_01STRUCT"))),
			"chat gpt-4.1": g(gen(ConventionGenAI, "Plan 3 days in Tokyo.", "user: Plan 3 days in Tokyo.",
				"Day 1: Asakusa. Day 2: Shibuya. Day 3: Nikko. Check visa rules for your passport.",
				system("You are a travel agent. Always mention visa requirements."), model("gpt-4.1", "chatcmpl-MASTRA1"))),
		},
		"genai_span_events_v127.json": {
			"chat gpt-4": g(gen(ConventionGenAIEvents, "Good morning, how are you?",
				"system: You translate English to German.\nuser: Good morning, how are you?", "Guten Morgen, wie geht es Ihnen?",
				system("You translate English to German."), model("gpt-4", "chatcmpl-V127A"))),
		},
		"genai_message_events.json": {
			"chat gpt-4o": g(gen(ConventionGenAIEvents, "Weather in Rome?",
				"system: You are a weather assistant.\nuser: Weather in Rome?\n"+`assistant: [tool call get_weather({"city":"Rome"})]`+"\ntool: Rome: sunny, 24°C",
				"It is sunny in Rome, 24°C.", tools("Rome: sunny, 24°C"), system("You are a weather assistant."),
				model("gpt-4o", "chatcmpl-EVT1"))),
			"chat gpt-4o-mini": g(gen(ConventionGenAIEvents, "Opposite of hot?", "user: Opposite of hot?", "Cold.",
				system("Reply with a single word."), model("gpt-4o-mini", "chatcmpl-EVT2"))),
		},
		"openinference.json": {
			"RAG query": aggregate,
			"retrieve":  contextSource,
			"ChatCompletion": g(gen(ConventionOpenInference,
				"Context:\nItems can be returned within 30 days of delivery.\n\nQuestion: What is the refund window?",
				"system: Answer using only the context.\nuser: Context:\nItems can be returned within 30 days of delivery.\n\nQuestion: What is the refund window?",
				"You can return items within 30 days.", docs("Items can be returned within 30 days of delivery."),
				system("Answer using only the context."), model("gpt-4o-mini", ""))),
			"ChatCompletion raw": g(gen(ConventionOpenInference, "Summarise: the shop opens at 9.",
				"user: Summarise: the shop opens at 9.", "The shop opens at 9 am.", model("gpt-4o-mini", ""))),
		},
		"openllmetry.json": {
			"answer_question.workflow": aggregate,
			"openai.chat": g(gen(ConventionOpenLLMetry, "Best time to visit Lisbon?",
				"system: You are a concise travel guide.\nuser: Best time to visit Lisbon?",
				"Spring (March to May) and autumn (September to October) offer mild weather and fewer crowds.",
				system("You are a concise travel guide."), model("gpt-3.5-turbo", "chatcmpl-OLL1"))),
		},
		"vercel_ai.json": {
			"ai.streamText": aggregate,
			"ai.streamText.doStream": g(gen(ConventionVercel, "A quick vegan dinner idea?",
				"system: You are a chef.\nuser: A quick vegan dinner idea?", "Chickpea curry with spinach, ready in 20 minutes.",
				system("You are a chef."), model("gpt-4o", "chatcmpl-VRC1"))),
			"ai.generateObject.doGenerate": g(gen(ConventionVercel, "Call Ann Lee on +44 20 7946 0958.",
				"system: Extract the contact as JSON.\nuser: Call Ann Lee on +44 20 7946 0958.",
				`{"name": "Ann Lee", "phone": "+44 20 7946 0958"}`,
				system("Extract the contact as JSON."), model("gpt-4o-mini", "chatcmpl-VRC2"))),
		},
		"aggregates.json": {
			"invoke_agent currency-agent": aggregate,
			"chat gpt-4o": g(gen(ConventionGenAI, "Convert 100 USD to EUR.", "user: Convert 100 USD to EUR.",
				"100 USD is about 92 EUR.", system("You convert currencies."), model("gpt-4o", "chatcmpl-AGG1"))),
			"ai.generateText": aggregate,
			"ai.generateText.doGenerate": g(gen(ConventionVercel, "Write a haiku about autumn.", "user: Write a haiku about autumn.",
				"Red leaves drift and fall / the cold wind hums through bare trees / autumn says goodbye",
				model("gpt-4o-mini", "chatcmpl-AGG2"))),
		},
		"non_llm.json": {
			"GET /api/orders/{id}":              other,
			"SELECT orders":                     other,
			"embeddings text-embedding-3-small": other,
			"execute_tool lookup_order":         contextSource,
		},
		"judge.json": {
			"chat gpt-4o-mini":   judge,
			"evaluation bias":    judge,
			"hallucination eval": judge,
		},
		"multiple_choices.json": {
			"chat gpt-4o": g(gen(ConventionGenAI, "Suggest a name for a bakery.", "user: Suggest a name for a bakery.",
				"Rise & Shine Bakery", model("gpt-4o", "chatcmpl-MULTI1"))),
			"openai.chat": g(gen(ConventionOpenLLMetry, "One word for happy?", "user: One word for happy?", "Cheerful",
				model("gpt-3.5-turbo", "chatcmpl-MULTI2"))),
		},
		"tool_call_only.json": {
			"invoke_agent weather": aggregate,
			"chat gpt-4o step 1": g(gen(ConventionGenAI, "What's the weather in Paris?", "user: What's the weather in Paris?", "",
				missing(MissingToolCalls), model("gpt-4o", "chatcmpl-TOOL1"))),
			"execute_tool get_weather": contextSource,
			"chat gpt-4o step 2": g(gen(ConventionGenAI, "What's the weather in Paris?",
				"user: What's the weather in Paris?\n"+`assistant: [tool call get_weather({"location":"Paris"})]`+"\ntool: rainy, 14°C",
				"It is rainy in Paris, 14°C. Take an umbrella.", tools("rainy, 14°C"), model("gpt-4o", "chatcmpl-TOOL2"))),
		},
		"truncated_json.json": {
			"chat gpt-4o-mini": g(gen(ConventionGenAI, "Summarise the meeting notes.", "user: Summarise the meeting notes.",
				"The team will ship", model("gpt-4o-mini", "chatcmpl-TRUNC1"))),
			"openai.chat": g(gen(ConventionOpenLLMetry, "[{'type': 'text', 'text': 'Hello there'}]",
				"user: [{'type': 'text', 'text': 'Hello there'}]", "General Kenobi!", model("gpt-3.5-turbo", "chatcmpl-TRUNC2"))),
			"chat gpt-4": g(gen(ConventionGenAIEvents, "[{'role': 'user', 'content': 'What is 2+2?'}]",
				"user: [{'role': 'user', 'content': 'What is 2+2?'}]", "[{'role': 'assistant', 'content': '4'}]",
				model("gpt-4", "chatcmpl-TRUNC3"))),
		},
		"redacted.json": {
			"ChatCompletion": g(gen(ConventionOpenInference, redacted, "user: "+redacted, redacted,
				missing(MissingRedacted), model("gpt-4o", ""))),
			"chat gpt-4o": g(Generation{Model: "gpt-4o", ResponseID: "chatcmpl-NOCONTENT", Missing: MissingOutput}),
			"chat gpt-4o-mini": g(gen(ConventionGenAI, "What is my account balance?", "user: What is my account balance?", redacted,
				missing(MissingRedacted), model("gpt-4o-mini", "chatcmpl-REDACT3"))),
		},
	}
	found, _ := filepath.Glob("../../../../testdata/otlp/conventions/*.json")
	require.Len(t, found, len(files), "every testdata file has expectations")
	for file, spans := range files {
		t.Run(file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("../../../../testdata/otlp/conventions", file))
			require.NoError(t, err)
			td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
			require.NoError(t, err)
			seen := 0
			for _, rs := range td.ResourceSpans().All() {
				for _, ss := range rs.ScopeSpans().All() {
					for _, span := range ss.Spans().All() {
						want, ok := spans[span.Name()]
						require.True(t, ok, "span %q has no expectation", span.Name())
						seen++
						kind := Classify(rs.Resource(), span)
						require.Equal(t, want.kind, kind, "span %q classified %s", span.Name(), kind)
						if kind == KindGeneration {
							assert.Equal(t, want.gen, Read(span), "span %q", span.Name())
						}
					}
				}
			}
			assert.Equal(t, len(spans), seen, "spans in file")
		})
	}
}
