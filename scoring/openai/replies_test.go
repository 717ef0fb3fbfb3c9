package openai

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// repliesDir holds chat completion replies and error bodies in the shapes
// endpoints write them (testdata/judge/README.md).
var repliesDir = filepath.Join("..", "..", "testdata", "judge", "replies")

// TestRepliesAsEndpointsWriteThem serves every reply of repliesDir and
// checks what the judge makes of it.
func TestRepliesAsEndpointsWriteThem(t *testing.T) {
	type want struct {
		status int // 0: 200
		resp   scoring.Response
		err    scoring.ErrorType
		text   string // substring of the error
	}
	tests := map[string]want{
		"openai.json": {resp: scoring.Response{Content: `{"verdicts":[{"verdict":"yes","reason":"The text follows \"x\"/y."}]}`,
			FinishReason: "stop", PromptTokens: 1412, CompletionTokens: 118}},
		"openai_refusal.json": {resp: scoring.Response{Content: "I'm sorry, I can't help with that request.",
			FinishReason: "stop", PromptTokens: 903, CompletionTokens: 12}},
		"openai_length.json": {resp: scoring.Response{Content: `{"claims":["The order shipped on 18 November","café 日`,
			FinishReason: "length", PromptTokens: 777, CompletionTokens: 20}},
		"openai_reasoning.json": {resp: scoring.Response{Content: `{"opinions":[]}`, FinishReason: "stop", PromptTokens: 650, CompletionTokens: 402}},
		"azure.json": {resp: scoring.Response{Content: `{"results":[{"result":"no","reason":"A statement of fact."}]}`,
			FinishReason: "stop", PromptTokens: 880, CompletionTokens: 19}},
		"vllm.json": {resp: scoring.Response{Content: `{"claims": ["Order 42 shipped via DHL."]}`, FinishReason: "stop", PromptTokens: 512, CompletionTokens: 15}},
		"ollama.json": {resp: scoring.Response{Content: "{\n  \"verdicts\": [\n    {\"verdict\": \"no\", \"reason\": \"Supported by the context.\"}\n  ]\n}",
			FinishReason: "stop", PromptTokens: 1024, CompletionTokens: 31}},
		"unicode_escapes.json": {resp: scoring.Response{Content: `{"reason":"été 😀 <ok>"}`, FinishReason: "stop", PromptTokens: 5, CompletionTokens: 7}},
		"no_choices.json":      {err: scoring.ErrorJudgeUnavailable, text: "no choices"},
		"error_openai_invalid_key.json": {status: 401, err: scoring.ErrorJudgeAuth,
			text: "judge returned HTTP 401: Incorrect API key provided: sk-proj-"},
		"error_openai_response_format.json": {status: 400, err: scoring.ErrorJudgeBadRequest,
			text: "'response_format' of type 'json_schema' is not supported"},
		"error_azure_content_filter.json": {status: 400, err: scoring.ErrorJudgeBadRequest,
			text: "filtered due to the prompt triggering Azure OpenAI's content management policy"},
		// vLLM's error object is not under "error": the status text stands in.
		"error_vllm.json":       {status: 400, err: scoring.ErrorJudgeBadRequest, text: "judge returned HTTP 400: Bad Request"},
		"error_rate_limit.json": {status: 429, err: scoring.ErrorJudgeRateLimited, text: "Rate limit reached for gpt-4o-mini"},
	}
	files, err := filepath.Glob(filepath.Join(repliesDir, "*.json"))
	require.NoError(t, err)
	require.Len(t, files, len(tests), "every reply file has expectations")
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			w, ok := tests[name]
			require.True(t, ok, "no expectations for %s", name)
			body, err := os.ReadFile(path)
			require.NoError(t, err)
			srv := scoringtest.New(t)
			srv.Script(scoringtest.AnyStep, scoringtest.Status(max(w.status, 200), string(body)))
			// Fixed mode and one attempt: each file is read exactly once.
			j, _ := newTestJudge(t, srv.URL, func(c *Config) {
				c.StructuredOutputs = StructuredOutputsJSONSchema
				c.Retry.MaxAttempts = 1
			})
			resp, err := j.Complete(context.Background(), opinionsRequest())
			if w.err == "" {
				require.NoError(t, err)
				w.resp.Model = "judge-model" // the configured model, whatever the reply names
				assert.Equal(t, w.resp, resp)
				return
			}
			e := requireErrorType(t, err, w.err)
			assert.Contains(t, e.Error(), w.text)
			assert.Equal(t, max(w.status, 200), e.Status)
		})
	}
}
