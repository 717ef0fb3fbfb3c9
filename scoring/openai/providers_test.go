package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// transportHeaders are the headers net/http adds on its own; every other
// header of a request is checked exactly.
var transportHeaders = []string{"User-Agent", "Accept-Encoding", "Content-Length"}

// providerBody is the request body every provider row expects, with the
// fields of the row laid over it (a nil value removes a field). Without
// response_format the schema is spelled out in the system message.
func providerBody(t *testing.T, fields map[string]any) string {
	t.Helper()
	req := opinionsRequest()
	system := req.Messages[0].Content
	if rf, ok := fields["response_format"]; ok && rf == nil {
		system += "\n\n" + SchemaInstruction(opinionsSchema)
	}
	body := map[string]any{
		"model": "judge-model",
		"messages": []map[string]string{
			{"role": "system", "content": system},
			{"role": "user", "content": req.Messages[1].Content},
		},
		"temperature": 0,
		"max_tokens":  1024,
		"stream":      false, // go-openai always sends it
		"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{
			"name": "bias_opinions", "strict": true, "schema": json.RawMessage(opinionsSchema.Schema),
		}},
	}
	for k, v := range fields {
		if v == nil {
			delete(body, k)
		} else {
			body[k] = v
		}
	}
	b, err := json.Marshal(body)
	require.NoError(t, err)
	return string(b)
}

// TestProvidersOnTheWire is one row per provider of docs/providers.md:
// the settings the table gives, and the exact request the judge sends
// (path, query, headers, body). The expectations follow each provider's
// documentation of its OpenAI-compatible endpoint.
func TestProvidersOnTheWire(t *testing.T) {
	tests := []struct {
		name string
		// base turns the fake's root URL (no /v1) into the configured endpoint.
		base      func(root string) string
		cfg       Config
		path      string
		query     string
		headers   map[string]string
		bodyDelta map[string]any
	}{{
		name:    "OpenAI",
		base:    func(root string) string { return root + "/v1" },
		cfg:     Config{APIKey: "sk-openai", Model: "judge-model"},
		path:    "/v1/chat/completions",
		headers: map[string]string{"Authorization": "Bearer sk-openai"},
	}, {
		name: "OpenAI reasoning model",
		base: func(root string) string { return root + "/v1" },
		cfg:  Config{APIKey: "sk-openai", Model: "gpt-5-mini", ReasoningEffort: "minimal"},
		path: "/v1/chat/completions", headers: map[string]string{"Authorization": "Bearer sk-openai"},
		// No temperature; max_completion_tokens instead of max_tokens.
		bodyDelta: map[string]any{"model": "gpt-5-mini", "temperature": nil, "max_tokens": nil,
			"max_completion_tokens": 1024, "reasoning_effort": "minimal"},
	}, {
		name: "Azure OpenAI v1",
		base: func(root string) string { return root },
		cfg:  Config{APIKey: "azure-key", Model: "gpt-4o-mini", Azure: true, AzureAPIVersion: AzureV1, AzureDeployment: "judge-4o"},
		path: "/openai/v1/chat/completions", headers: map[string]string{"Api-Key": "azure-key"},
		// The v1 API names the deployment as the model.
		bodyDelta: map[string]any{"model": "judge-4o"},
	}, {
		name:  "Azure OpenAI classic deployment",
		base:  func(root string) string { return root },
		cfg:   Config{APIKey: "azure-key", Model: "gpt-4o-mini", Azure: true, AzureAPIVersion: "2024-10-21", AzureDeployment: "judge-4o"},
		path:  "/openai/deployments/judge-4o/chat/completions",
		query: "api-version=2024-10-21", headers: map[string]string{"Api-Key": "azure-key"},
		bodyDelta: map[string]any{"model": "gpt-4o-mini"},
	}, {
		name: "Ollama",
		base: func(root string) string { return root + "/v1" },
		// No key: Ollama ignores it, and none is sent.
		cfg:       Config{Model: "qwen3:8b", ReasoningEffort: "none"},
		path:      "/v1/chat/completions",
		bodyDelta: map[string]any{"model": "qwen3:8b", "reasoning_effort": "none"},
	}, {
		name: "vLLM",
		base: func(root string) string { return root + "/v1" },
		cfg:  Config{APIKey: "token-vllm", Model: "Qwen/Qwen3-8B", ChatTemplateKwargs: map[string]any{"enable_thinking": false}},
		path: "/v1/chat/completions", headers: map[string]string{"Authorization": "Bearer token-vllm"},
		bodyDelta: map[string]any{"model": "Qwen/Qwen3-8B", "chat_template_kwargs": map[string]any{"enable_thinking": false}},
	}, {
		name: "LiteLLM proxy",
		base: func(root string) string { return root + "/v1" },
		cfg: Config{APIKey: "sk-litellm", Model: "judge", OmitTemperature: true,
			ExtraBody: map[string]any{"metadata": map[string]any{"tags": []any{"llm_eval"}}}},
		path: "/v1/chat/completions", headers: map[string]string{"Authorization": "Bearer sk-litellm"},
		bodyDelta: map[string]any{"model": "judge", "temperature": nil, "metadata": map[string]any{"tags": []any{"llm_eval"}}},
	}, {
		name: "Anthropic OpenAI-compatible",
		base: func(root string) string { return root + "/v1" },
		// response_format is ignored there: off sends none and spells the
		// schema out in the prompt.
		cfg: Config{APIKey: "sk-ant", Model: "claude-haiku-4-5", StructuredOutputs: StructuredOutputsOff,
			ExtraBody: map[string]any{"thinking": map[string]any{"type": "disabled"}}},
		path: "/v1/chat/completions", headers: map[string]string{"Authorization": "Bearer sk-ant"},
		bodyDelta: map[string]any{"model": "claude-haiku-4-5", "response_format": nil, "thinking": map[string]any{"type": "disabled"}},
	}, {
		name: "Amazon Bedrock OpenAI-compatible",
		base: func(root string) string { return root + "/openai/v1" },
		cfg:  Config{APIKey: "bedrock-api-key", Model: "openai.gpt-oss-20b-1:0", ReasoningEffort: "low"},
		path: "/openai/v1/chat/completions", headers: map[string]string{"Authorization": "Bearer bedrock-api-key"},
		bodyDelta: map[string]any{"model": "openai.gpt-oss-20b-1:0", "reasoning_effort": "low"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := scoringtest.New(t)
			cfg := tt.cfg
			cfg.BaseURL = tt.base(strings.TrimSuffix(srv.URL, "/v1"))
			cfg.MaxTokens = 1024
			cfg.Retry.MaxAttempts = 1
			j, err := NewJudge(cfg)
			require.NoError(t, err)
			_, err = j.Complete(context.Background(), opinionsRequest())
			require.NoError(t, err)
			calls := srv.Calls()
			require.Len(t, calls, 1)
			c := calls[0]
			assert.Equal(t, http.MethodPost, c.Method)
			assert.Equal(t, tt.path, c.Path)
			assert.Equal(t, tt.query, c.RawQuery)
			want := map[string]string{"Content-Type": "application/json", "Accept": "application/json"}
			for k, v := range tt.headers {
				want[k] = v
			}
			got := map[string]string{}
			for k, v := range c.Header {
				got[k] = strings.Join(v, ",")
			}
			for _, h := range transportHeaders {
				delete(got, h)
			}
			assert.Equal(t, want, got, "headers")
			assert.JSONEq(t, providerBody(t, tt.bodyDelta), string(c.Body), "body")
		})
	}
}

func TestExtraBodyReservedFieldsRefused(t *testing.T) {
	for _, field := range []string{"model", "messages", "temperature", "response_format", "stream", "n", "tools", "reasoning_effort"} {
		t.Run(field, func(t *testing.T) {
			_, err := NewJudge(Config{BaseURL: "http://x/v1", Model: "m", ExtraBody: map[string]any{"top_k": 20, field: 1}})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "extra_body."+field)
		})
	}
	_, err := NewJudge(Config{BaseURL: "http://x/v1", Model: "m", ExtraBody: map[string]any{"bad": func() {}}})
	require.ErrorContains(t, err, "extra_body.bad: not a JSON value")
	_, err = NewJudge(Config{BaseURL: "http://x/v1", Model: "m", ReasoningEffort: "very high"})
	require.ErrorContains(t, err, "reasoning effort")
}

// TestExtraBodyOnEveryRequest: the extra fields ride on every attempt and
// every structured-output fallback, beside the judge's own fields.
func TestExtraBodyOnEveryRequest(t *testing.T) {
	srv := scoringtest.New(t)
	srv.Handle(refusing("json_schema"))
	srv.Script(scoringtest.AnyStep, scoringtest.Status(503, ""))
	j, _ := newTestJudge(t, srv.URL, func(c *Config) { c.ExtraBody = map[string]any{"top_k": 20, "priority": "low"} })
	_, err := j.Complete(context.Background(), opinionsRequest())
	require.NoError(t, err)
	calls := srv.Calls()
	require.Len(t, calls, 3, "a 503 retried, then json_schema refused and json_object sent")
	for i, c := range calls {
		var body map[string]any
		require.NoError(t, json.Unmarshal(c.Body, &body), "call %d", i)
		assert.EqualValues(t, 20, body["top_k"], "call %d", i)
		assert.Equal(t, "low", body["priority"], "call %d", i)
		assert.Equal(t, "judge-model", body["model"], "call %d", i)
	}
}
