package genai

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

const orderStatusDesc = "Looks up the shipping status of an order by its number."

// TestReadToolDefinitionsFromClients reads the tools of the real captures:
// the semconv list of the AI SDK (flat, inputSchema), OpenLLMetry's
// (nested under "function"), OpenInference's llm.tools and Mastra's agent
// span (names only).
func TestReadToolDefinitionsFromClients(t *testing.T) {
	withDesc := []ToolDef{{Name: "get_order_status", Description: orderStatusDesc}}
	tests := []struct {
		app, span string
		want      []ToolDef
	}{
		{"aisdk-agent", "chat gpt-4o-mini", withDesc},
		{"traceloop-openai", "chat gpt-4o-mini", withDesc},
		{"openinference-openai", "OpenAI Chat Completions", withDesc},
		{"mastra-agent", "invoke_agent support-agent", []ToolDef{{Name: "get_order_status"}}},
	}
	for _, tt := range tests {
		t.Run(tt.app, func(t *testing.T) {
			spans := readClientSpans(t, tt.app)[tt.span]
			require.NotEmpty(t, spans)
			for _, s := range spans {
				assert.Equal(t, tt.want, ReadToolDefinitions(s.span))
			}
		})
	}
}

func TestReadToolDefinitions(t *testing.T) {
	many := make([]string, 100)
	for i := range many {
		many[i] = `"t` + strings.Repeat("x", i) + `"`
	}
	tests := []struct {
		name  string
		attrs map[string]any
		want  []ToolDef
	}{
		{"semconv list", map[string]any{"gen_ai.tool.definitions": `[{"type":"function","name":"search","description":"Finds pages."},{"type":"function","name":"fetch"}]`},
			[]ToolDef{{"search", "Finds pages."}, {"fetch", ""}}},
		{"AI SDK prompt tools", map[string]any{"ai.prompt.tools": []any{`{"type":"function","name":"weather","description":"Gets the weather.","parameters":{}}`}},
			[]ToolDef{{"weather", "Gets the weather."}}},
		{"OpenInference, in index order", map[string]any{
			"llm.tools.1.tool.json_schema": `{"type":"function","function":{"name":"b"}}`,
			"llm.tools.0.tool.json_schema": `{"type":"function","function":{"name":"a","description":"first"}}`,
		}, []ToolDef{{"a", "first"}, {"b", ""}}},
		{"names only", map[string]any{"gen_ai.tool.definitions": []any{"lookup", " ", "lookup", "send"}}, []ToolDef{{"lookup", ""}, {"send", ""}}},
		{"one per name across attributes", map[string]any{
			"gen_ai.tool.definitions": `[{"name":"a","description":"from semconv"}]`,
			"ai.prompt.tools":         []any{`{"name":"a","description":"from the AI SDK"}`, `{"name":"b"}`},
		}, []ToolDef{{"a", "from semconv"}, {"b", ""}}},
		{"garbage", map[string]any{"gen_ai.tool.definitions": `{"tools": 3}`, "ai.prompt.tools": "not json {", "llm.tools.x.tool.json_schema": "{}"}, nil},
		{"bounded", map[string]any{"gen_ai.tool.definitions": "[" + strings.Join(many, ",") + "]"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			span := ptrace.NewSpan()
			require.NoError(t, span.Attributes().FromRaw(tt.attrs))
			got := ReadToolDefinitions(span)
			if tt.name == "bounded" {
				require.Len(t, got, maxToolDefs)
				for _, d := range got {
					assert.LessOrEqual(t, len(d.Name), maxToolNameBytes)
				}
				return
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
