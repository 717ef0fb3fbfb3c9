package genai

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func TestReadContext(t *testing.T) {
	tests := []struct {
		name  string
		attrs map[string]any
		role  ContextRole
		texts []string
	}{
		{
			name: "semconv retrieval with content extension (JSON string)",
			attrs: map[string]any{
				"gen_ai.operation.name":      "retrieval",
				"gen_ai.retrieval.documents": `[{"id":"d1","score":0.9,"content":"Paris is the capital of France."},{"id":"d2","score":0.5,"content":"Lyon is in France."}]`,
			},
			role:  RoleRetrieval,
			texts: []string{"Paris is the capital of France.", "Lyon is in France."},
		},
		{
			name:  "semconv tool result recorded as a JSON string (AI SDK 7)",
			attrs: map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.result": `"Order 1042 shipped."`},
			role:  RoleTool,
			texts: []string{"Order 1042 shipped."},
		},
		{
			name:  "Vercel tool result recorded as a JSON string",
			attrs: map[string]any{"ai.operationId": "ai.toolCall", "ai.toolCall.result": `"sunny, 24°C"`},
			role:  RoleTool,
			texts: []string{"sunny, 24°C"},
		},
		{
			name:  "a quote inside a result is kept",
			attrs: map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.result": `He said "yes"`},
			role:  RoleTool,
			texts: []string{`He said "yes"`},
		},
		{
			name: "semconv retrieval structured",
			attrs: map[string]any{
				"gen_ai.operation.name": "retrieval",
				"gen_ai.retrieval.documents": []any{
					map[string]any{"id": "d1", "content": "alpha"}, map[string]any{"id": "d2", "text": "beta"},
				},
			},
			role:  RoleRetrieval,
			texts: []string{"alpha", "beta"},
		},
		{
			name:  "semconv retrieval with ids only has no text",
			attrs: map[string]any{"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.documents": `[{"id":"d1","score":0.9}]`},
			role:  RoleRetrieval,
		},
		{
			name:  "execute_tool result object",
			attrs: map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.result": `{"temperature":"57F","sky":"rainy"}`},
			role:  RoleTool,
			texts: []string{`{"sky":"rainy","temperature":"57F"}`},
		},
		{
			name:  "execute_tool result text",
			attrs: map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.result": "rainy, 57F"},
			role:  RoleTool,
			texts: []string{"rainy, 57F"},
		},
		{
			name:  "search_memory records",
			attrs: map[string]any{"gen_ai.operation.name": "search_memory", "gen_ai.memory.records": `[{"content":"User prefers metric units.","id":"m1"}]`},
			role:  RoleMemory,
			texts: []string{"User prefers metric units."},
		},
		{
			name: "openinference RETRIEVER",
			attrs: map[string]any{
				"openinference.span.kind":                  "RETRIEVER",
				"input.value":                              "capital of France?",
				"retrieval.documents.1.document.content":   "second",
				"retrieval.documents.0.document.content":   "first",
				"retrieval.documents.0.document.score":     0.8,
				"retrieval.documents.2.document.content":   "first",
				"retrieval.documents.3.document.metadata":  `{"source":"x"}`,
				"retrieval.documents.10.document.content":  "eleventh",
				"retrieval.documents.bad.document.content": "ignored",
			},
			role:  RoleRetrieval,
			texts: []string{"first", "second", "eleventh"},
		},
		{
			name:  "openinference TOOL output.value",
			attrs: map[string]any{"openinference.span.kind": "TOOL", "tool.name": "weather", "output.value": "rainy, 57F"},
			role:  RoleTool,
			texts: []string{"rainy, 57F"},
		},
		{
			name:  "openinference TOOL output.value redacted",
			attrs: map[string]any{"openinference.span.kind": "TOOL", "output.value": "__REDACTED__"},
			role:  RoleTool,
		},
		{
			name:  "vercel ai.toolCall",
			attrs: map[string]any{"ai.operationId": "ai.toolCall", "ai.toolCall.name": "weather", "ai.toolCall.result": `{"type":"json","value":{"sky":"rainy"}}`},
			role:  RoleTool,
			texts: []string{`{"sky":"rainy"}`},
		},
		{
			name: "openllmetry retriever task output (LangChain documents)",
			attrs: map[string]any{
				"traceloop.span.kind":     "task",
				"traceloop.entity.output": `[{"page_content":"doc one","metadata":{}},{"page_content":"doc two","metadata":{}}]`,
			},
			role:  RoleTool,
			texts: []string{"doc one", "doc two"},
		},
		{
			name:  "openllmetry tool output truncated",
			attrs: map[string]any{"traceloop.span.kind": "tool", "traceloop.entity.output": `{"result": "the tool said so and the`},
			role:  RoleTool,
			texts: []string{`{"result": "the tool said so and the`},
		},
		{
			name: "langchain azure retriever results",
			attrs: map[string]any{
				"gen_ai.operation.name":    "execute_tool",
				"gen_ai.retriever.results": `[{"metadata":{"source":"kb"},"content":"Refunds take 5 days."}]`,
				"gen_ai.retriever.query":   "refund time",
			},
			role:  RoleTool,
			texts: []string{"Refunds take 5 days."},
		},
		{
			name:  "langchain azure retriever results without operation",
			attrs: map[string]any{"gen_ai.retriever.results": `[{"content":"Refunds take 5 days."}]`},
			role:  RoleRetrieval,
			texts: []string{"Refunds take 5 days."},
		},
		{
			name:  "no context attributes",
			attrs: map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "noop"},
			role:  RoleTool,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := ReadContext(newSpan(t, "x", tt.attrs))
			assert.Equal(t, tt.role, src.Role)
			assert.Equal(t, tt.texts, src.Texts)
		})
	}
}

func TestReadContextIsBounded(t *testing.T) {
	attrs := map[string]any{"openinference.span.kind": "RETRIEVER"}
	for i := range 3000 {
		attrs["retrieval.documents."+strconv.Itoa(i)+".document.content"] = "doc " + strconv.Itoa(i)
	}
	attrs["gen_ai.tool.call.result"] = strings.Repeat("x", 2*maxFieldBytes)
	src := ReadContext(newSpan(t, "x", attrs))
	require.LessOrEqual(t, len(src.Texts), maxItems)
	for _, s := range src.Texts {
		require.LessOrEqual(t, len(s), maxFieldBytes)
	}
}

func TestIsAgent(t *testing.T) {
	parent := pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8}
	tests := []struct {
		name  string
		span  string
		attrs map[string]any
		root  bool
		want  bool
	}{
		{"invoke_agent nested", "invoke_agent a", map[string]any{"gen_ai.operation.name": "invoke_agent"}, false, true},
		{"create_agent", "x", map[string]any{"gen_ai.operation.name": "create_agent"}, true, false},
		{"invoke_workflow root", "x", map[string]any{"gen_ai.operation.name": "invoke_workflow"}, true, true},
		{"invoke_workflow nested", "x", map[string]any{"gen_ai.operation.name": "invoke_workflow"}, false, false},
		{"openinference AGENT", "x", map[string]any{"openinference.span.kind": "AGENT"}, false, true},
		{"openinference root CHAIN", "x", map[string]any{"openinference.span.kind": "CHAIN"}, true, true},
		{"openinference nested CHAIN", "x", map[string]any{"openinference.span.kind": "CHAIN"}, false, false},
		{"vercel generateText by operation id", "x", map[string]any{"ai.operationId": "ai.generateText"}, false, true},
		{"vercel streamText by span name", "ai.streamText", nil, false, true},
		{"vercel doGenerate", "x", map[string]any{"ai.operationId": "ai.generateText.doGenerate"}, false, false},
		{"mastra agent run", "x", map[string]any{"mastra.span.type": "AGENT_RUN"}, false, true},
		{"traceloop workflow root", "x.workflow", map[string]any{"traceloop.span.kind": "workflow"}, true, true},
		{"traceloop workflow nested", "x.workflow", map[string]any{"traceloop.span.kind": "workflow"}, false, false},
		{"langfuse agent", "x", map[string]any{"langfuse.observation.type": "agent"}, false, true},
		{"http root", "GET /", map[string]any{"http.request.method": "GET"}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			span := newSpan(t, tt.span, tt.attrs)
			if !tt.root {
				span.SetParentSpanID(parent)
			}
			assert.Equal(t, tt.want, IsAgent(span))
		})
	}
}

func TestReadAgent(t *testing.T) {
	tests := []struct {
		name    string
		attrs   map[string]any
		input   string
		output  string
		missing string
	}{
		{
			name: "semconv invoke_agent messages",
			attrs: map[string]any{
				"gen_ai.operation.name":  "invoke_agent",
				"gen_ai.input.messages":  `[{"role":"user","parts":[{"type":"text","content":"How long do refunds take?"}]}]`,
				"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"About 5 days."}],"finish_reason":"stop"}]`,
			},
			input: "How long do refunds take?", output: "About 5 days.",
		},
		{
			name: "openinference CHAIN with one-field JSON values",
			attrs: map[string]any{
				"openinference.span.kind": "CHAIN",
				"input.value":             `{"question": "How long do refunds take?"}`,
				"input.mime_type":         "application/json",
				"output.value":            `{"answer": "About 5 days."}`,
				"output.mime_type":        "application/json",
			},
			input: "How long do refunds take?", output: "About 5 days.",
		},
		{
			name: "openinference CHAIN plain text",
			attrs: map[string]any{
				"openinference.span.kind": "CHAIN", "input.value": "How long?", "output.value": "5 days.",
			},
			input: "How long?", output: "5 days.",
		},
		{
			name: "vercel generateText",
			attrs: map[string]any{
				"ai.operationId": "ai.generateText", "ai.prompt": `{"system":"be brief","prompt":"How long?"}`, "ai.response.text": "5 days.",
			},
			input: "How long?", output: "5 days.",
		},
		{
			name: "pydantic ai agent run",
			attrs: map[string]any{
				"gen_ai.operation.name":    "invoke_agent",
				"pydantic_ai.all_messages": `[{"role":"user","parts":[{"type":"text","content":"How long?"}]},{"role":"assistant","parts":[{"type":"text","content":"5 days."}]}]`,
				"final_result":             "5 days.",
			},
			input: "How long?", output: "5 days.",
		},
		{
			name: "traceloop workflow",
			attrs: map[string]any{
				"traceloop.span.kind":     "workflow",
				"traceloop.entity.input":  `{"args":[],"kwargs":{"question":"How long?"}}`,
				"traceloop.entity.output": `"5 days."`,
			},
			input: "How long?", output: "5 days.", // JSON.stringify of a string, unquoted
		},
		{
			name: "traceloop agent with positional input",
			attrs: map[string]any{
				"traceloop.span.kind":     "agent",
				"traceloop.entity.input":  `{"args":["How long?"],"kwargs":{}}`,
				"traceloop.entity.output": `"5 days."`,
			},
			input: "How long?", output: "5 days.",
		},
		{
			name:    "no content",
			attrs:   map[string]any{"gen_ai.operation.name": "invoke_agent"},
			missing: MissingOutput,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := ReadAgent(newSpan(t, "x", tt.attrs))
			assert.Equal(t, tt.input, g.Input)
			assert.Equal(t, tt.output, g.Output)
			assert.Equal(t, tt.missing, g.Missing)
		})
	}
}

// FuzzReadContext checks ReadContext never panics and keeps its bounds,
// whatever shape the context attributes take.
func FuzzReadContext(f *testing.F) {
	f.Add(`[{"id":"d","content":"x"}]`, `{"a":1}`, "0.document.content", "doc", `[{"page_content":"p"}]`)
	f.Add(`[{"id":`, "plain", "x", "", `{"type":"json","value":[1,2]}`)
	f.Add(`[[[[`, `"\ud800"`, "99999999999.document.content", "\xff", `{"args":[`)
	f.Add("", "", "", "", "")
	f.Fuzz(func(t *testing.T, docs, result, key, value, output string) {
		for _, kind := range []string{"RETRIEVER", "TOOL"} {
			span := fuzzSpan(map[string]string{
				"openinference.span.kind":        kind,
				"gen_ai.retrieval.documents":     docs,
				"gen_ai.memory.records":          docs,
				"gen_ai.tool.call.result":        result,
				"gen_ai.retriever.results":       docs,
				"ai.toolCall.result":             result,
				"traceloop.entity.output":        output,
				"output.value":                   output,
				prefixOIDocs + key:               value,
				"llm.prompt_template.variables":  result,
				prefixOIDocs + "0.document.text": docs,
			})
			checkSource(t, ReadContext(span))
		}
		// Structured values of the same text.
		span := ptrace.NewSpan()
		span.Attributes().PutEmptySlice("gen_ai.retrieval.documents").AppendEmpty().SetStr(docs)
		span.Attributes().PutEmptyMap("gen_ai.tool.call.result").PutStr(key, result)
		checkSource(t, ReadContext(span))
		g := ReadAgent(fuzzSpan(map[string]string{
			"input.value": docs, "output.value": output, "final_result": result, "traceloop.entity.input": value,
		}))
		checkGeneration(t, g)
	})
}

func checkSource(t *testing.T, src ContextSource) {
	t.Helper()
	if len(src.Texts) > maxItems {
		t.Fatalf("%d texts exceed the bound", len(src.Texts))
	}
	for _, s := range src.Texts {
		if !utf8.ValidString(s) || len(s) > maxFieldBytes || strings.TrimSpace(s) == "" {
			t.Fatalf("bad context text %q", s)
		}
	}
}
