package genai

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name     string
		spanName string
		attrs    map[string]any
		resource map[string]any
		want     Kind
	}{
		{"chat", "chat gpt-4", map[string]any{"gen_ai.operation.name": "chat"}, nil, KindGeneration},
		{"text_completion", "x", map[string]any{"gen_ai.operation.name": "text_completion"}, nil, KindGeneration},
		{"generate_content", "x", map[string]any{"gen_ai.operation.name": "generate_content"}, nil, KindGeneration},
		{"legacy completion", "x", map[string]any{"gen_ai.operation.name": "completion"}, nil, KindGeneration},
		{"legacy generate", "x", map[string]any{"gen_ai.operation.name": "generate"}, nil, KindGeneration},
		{"embeddings", "x", map[string]any{"gen_ai.operation.name": "embeddings"}, nil, KindOther},
		{"execute_tool", "x", map[string]any{"gen_ai.operation.name": "execute_tool"}, nil, KindContext},
		{"invoke_agent", "invoke_agent a", map[string]any{"gen_ai.operation.name": "invoke_agent"}, nil, KindAggregate},
		{"create_agent", "x", map[string]any{"gen_ai.operation.name": "create_agent"}, nil, KindAggregate},
		{"invoke_workflow", "x", map[string]any{"gen_ai.operation.name": "invoke_workflow"}, nil, KindAggregate},
		{"openinference LLM", "ChatCompletion", map[string]any{"openinference.span.kind": "LLM"}, nil, KindGeneration},
		{"openinference AGENT", "x", map[string]any{"openinference.span.kind": "AGENT"}, nil, KindAggregate},
		{"openinference CHAIN", "x", map[string]any{"openinference.span.kind": "CHAIN"}, nil, KindAggregate},
		{"openinference RETRIEVER", "x", map[string]any{"openinference.span.kind": "RETRIEVER"}, nil, KindContext},
		{"openinference EVALUATOR", "x", map[string]any{"openinference.span.kind": "EVALUATOR"}, nil, KindJudge},
		{"openllmetry chat", "openai.chat", map[string]any{"llm.request.type": "chat"}, nil, KindGeneration},
		{"openllmetry completion", "x", map[string]any{"llm.request.type": "completion"}, nil, KindGeneration},
		{"openllmetry embedding", "x", map[string]any{"llm.request.type": "embedding"}, nil, KindOther},
		{"traceloop workflow", "x.workflow", map[string]any{"traceloop.span.kind": "workflow"}, nil, KindAggregate},
		{"traceloop agent", "x.agent", map[string]any{"traceloop.span.kind": "agent"}, nil, KindAggregate},
		{"traceloop task", "x.task", map[string]any{"traceloop.span.kind": "task"}, nil, KindContext},
		{"vercel doGenerate", "ai.generateText.doGenerate", map[string]any{"ai.operationId": "ai.generateText.doGenerate"}, nil, KindGeneration},
		{"vercel doStream", "x", map[string]any{"ai.operationId": "ai.streamText.doStream"}, nil, KindGeneration},
		{"vercel object doGenerate", "x", map[string]any{"ai.operationId": "ai.generateObject.doGenerate"}, nil, KindGeneration},
		{"vercel object doStream", "x", map[string]any{"ai.operationId": "ai.streamObject.doStream"}, nil, KindGeneration},
		{"vercel outer", "ai.generateText", map[string]any{"ai.operationId": "ai.generateText"}, nil, KindAggregate},
		{"vercel outer stream", "x", map[string]any{"ai.operationId": "ai.streamObject"}, nil, KindAggregate},
		{"vercel operation.name", "x", map[string]any{"operation.name": "ai.streamText.doStream my-fn"}, nil, KindGeneration},
		{"vercel span name only", "ai.generateText.doGenerate", map[string]any{"ai.model.id": "gpt-4o"}, nil, KindGeneration},
		{"vercel tool call", "ai.toolCall", map[string]any{"ai.operationId": "ai.toolCall"}, nil, KindContext},
		{"retrieval", "retrieval kb", map[string]any{"gen_ai.operation.name": "retrieval"}, nil, KindContext},
		{"search_memory", "x", map[string]any{"gen_ai.operation.name": "search_memory"}, nil, KindContext},
		{"openinference TOOL", "x", map[string]any{"openinference.span.kind": "TOOL"}, nil, KindContext},
		{"traceloop tool", "x.tool", map[string]any{"traceloop.span.kind": "tool"}, nil, KindContext},
		{"mastra tool call", "x", map[string]any{"mastra.span.type": "TOOL_CALL"}, nil, KindContext},
		{"langfuse retriever", "x", map[string]any{"langfuse.observation.type": "retriever"}, nil, KindContext},
		{"langchain azure retriever", "x", map[string]any{"gen_ai.retriever.results": "[]"}, nil, KindContext},
		{"mastra generation repeats its steps", "x", map[string]any{"mastra.span.type": "model_generation", "gen_ai.operation.name": "model_generation"}, nil, KindAggregate},
		{"mastra step", "agent_step x", map[string]any{"mastra.span.type": "model_step", "gen_ai.operation.name": "agent_step"}, nil, KindGeneration},
		{"mastra step, upper case", "x", map[string]any{"mastra.span.type": "MODEL_STEP"}, nil, KindGeneration},
		{"mastra inference repeats its step", "chat gpt-4o-mini", map[string]any{"mastra.span.type": "model_inference", "gen_ai.operation.name": "chat"}, nil, KindOther},
		{"mastra chunk", "x", map[string]any{"mastra.span.type": "model_chunk", "gen_ai.operation.name": "model_chunk"}, nil, KindOther},
		{"mastra agent run", "invoke_agent x", map[string]any{"mastra.span.type": "agent_run", "gen_ai.operation.name": "invoke_agent"}, nil, KindAggregate},
		{"mastra tool", "execute_tool x", map[string]any{"mastra.span.type": "tool_call", "gen_ai.operation.name": "execute_tool"}, nil, KindContext},
		{"mastra judge span", "x", map[string]any{"mastra.span.type": "model_step", JudgeAttribute: true}, nil, KindJudge},
		{"judge by operation", "x", map[string]any{"gen_ai.operation.name": "evaluation"}, nil, KindJudge},
		{"judge by span attribute", "chat m", map[string]any{"gen_ai.operation.name": "chat", "llm_eval.judge": true}, nil, KindJudge},
		{"judge by resource attribute", "chat m", map[string]any{"gen_ai.operation.name": "chat"}, map[string]any{"llm_eval.judge": "bias"}, KindJudge},
		{"http server", "GET /users", map[string]any{"http.request.method": "GET", "url.path": "/users"}, nil, KindOther},
		{"non-string operation", "x", map[string]any{"gen_ai.operation.name": int64(3)}, nil, KindOther},
		{"no attributes", "x", nil, nil, KindOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := pcommon.NewResource()
			require.NoError(t, res.Attributes().FromRaw(tt.resource))
			got := Classify(res, newSpan(t, tt.spanName, tt.attrs))
			assert.Equal(t, tt.want, got, "got %s", got)
		})
	}
}

func BenchmarkClassify(b *testing.B) {
	res := pcommon.NewResource()
	res.Attributes().PutStr("service.name", "checkout")
	res.Attributes().PutStr("service.version", "1.4.2")
	res.Attributes().PutStr("deployment.environment.name", "prod")
	res.Attributes().PutStr("host.name", "node-7")
	res.Attributes().PutStr("telemetry.sdk.language", "go")
	spans := map[string]map[string]any{
		"http_server": {
			"http.request.method":       "GET",
			"http.route":                "/api/orders/{id}",
			"url.path":                  "/api/orders/42",
			"url.scheme":                "https",
			"http.response.status_code": int64(200),
			"server.address":            "shop.example.com",
			"server.port":               int64(443),
			"client.address":            "10.0.0.7",
			"user_agent.original":       "Mozilla/5.0",
			"network.protocol.version":  "1.1",
		},
		"chat": {
			"gen_ai.operation.name":      "chat",
			"gen_ai.provider.name":       "openai",
			"gen_ai.request.model":       "gpt-4o",
			"gen_ai.response.model":      "gpt-4o-2024-08-06",
			"gen_ai.response.id":         "chatcmpl-1",
			"gen_ai.usage.input_tokens":  int64(100),
			"gen_ai.usage.output_tokens": int64(20),
			"gen_ai.input.messages":      `[{"role":"user","parts":[{"type":"text","content":"hi"}]}]`,
			"gen_ai.output.messages":     `[{"role":"assistant","parts":[{"type":"text","content":"hello"}],"finish_reason":"stop"}]`,
			"server.address":             "api.openai.com",
		},
	}
	for name, attrs := range spans {
		span := newSpan(b, name, attrs)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Classify(res, span)
			}
		})
	}
}
