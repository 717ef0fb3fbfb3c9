package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wireRequest is one judge request as the endpoint received it.
type wireRequest struct {
	path, query, apiKey string
	body                map[string]any
}

// recordingEndpoint answers every request with 400, after recording it.
func recordingEndpoint(t *testing.T) (string, func() []wireRequest) {
	t.Helper()
	var mu sync.Mutex
	var got []wireRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		mu.Lock()
		got = append(got, wireRequest{path: r.URL.Path, query: r.URL.RawQuery, apiKey: r.Header.Get("api-key"), body: body})
		mu.Unlock()
		http.Error(w, `{"error": {"message": "recorded"}}`, http.StatusBadRequest)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []wireRequest {
		mu.Lock()
		defer mu.Unlock()
		return append([]wireRequest(nil), got...)
	}
}

func TestScoreProviderFlagsOnTheWire(t *testing.T) {
	t.Setenv("LLMEVAL_TEST_KEY", "k-123")
	tests := []struct {
		name  string
		flags []string
		check func(t *testing.T, r wireRequest)
	}{
		{
			name:  "azure classic deployment",
			flags: []string{"--azure", "--azure-api-version", "2024-10-21", "--model", "judge-deploy"},
			check: func(t *testing.T, r wireRequest) {
				assert.Equal(t, "/openai/deployments/judge-deploy/chat/completions", r.path)
				assert.Equal(t, "api-version=2024-10-21", r.query)
				assert.Equal(t, "k-123", r.apiKey)
			},
		},
		{
			name:  "azure v1",
			flags: []string{"--azure", "--azure-api-version", "v1", "--model", "judge-deploy"},
			check: func(t *testing.T, r wireRequest) {
				assert.Equal(t, "/openai/v1/chat/completions", r.path)
				assert.Equal(t, "judge-deploy", r.body["model"])
			},
		},
		{
			name: "thinking model settings",
			flags: []string{"--model", "qwen3", "--omit-temperature", "--reasoning-effort", "low",
				"--chat-template-kwargs", `{"enable_thinking": false}`, "--extra-body", `{"top_k": 20}`},
			check: func(t *testing.T, r wireRequest) {
				assert.Equal(t, "/chat/completions", r.path)
				assert.NotContains(t, r.body, "temperature")
				assert.Equal(t, "low", r.body["reasoning_effort"])
				assert.Equal(t, map[string]any{"enable_thinking": false}, r.body["chat_template_kwargs"])
				assert.Equal(t, float64(20), r.body["top_k"])
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, requests := recordingEndpoint(t)
			args := append([]string{"--scorer", "bias", "--judge-endpoint", url, "--api-key-env", "LLMEVAL_TEST_KEY"}, tt.flags...)
			code, _, stderr := runScoreCLI(t, jsonl(map[string]any{"output": "Some answer."}), args...)
			assert.Equal(t, exitCasesErrored, code, stderr)
			got := requests()
			require.NotEmpty(t, got, stderr)
			tt.check(t, got[0])
		})
	}
}

func TestScoreProviderFlagErrors(t *testing.T) {
	tests := []struct {
		name, want string
		flags      []string
	}{
		{"api version without azure", "--azure-api-version needs --azure", []string{"--azure-api-version", "v1"}},
		{"extra body sets a judge field", "--extra-body", []string{"--extra-body", `{"messages": []}`}},
		{"extra body not an object", "extra-body", []string{"--extra-body", `[1]`}},
		{"chat template kwargs not JSON", "chat-template-kwargs", []string{"--chat-template-kwargs", `enable_thinking=false`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--scorer", "bias", "--judge-endpoint", "http://127.0.0.1:1/v1", "--model", "m"}, tt.flags...)
			code, out, stderr := runScoreCLI(t, jsonl(map[string]any{"output": "x"}), args...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, out)
			assert.Contains(t, stderr, tt.want)
		})
	}
}
