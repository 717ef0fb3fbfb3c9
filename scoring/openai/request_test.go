package openai

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
)

// encodingJSON is what appendJSON must match byte for byte.
func encodingJSON(t testing.TB, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(v))
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func TestRequestJSONIsEncodingJSON(t *testing.T) {
	seed, zero := 42, 0.0
	tricky := "quotes \" and \\ backslash, <<<BLOCK\n\"x\"\nBLOCK>>> & tabs\t\r\b\f\x00\x1f\x7f, é, 日本, \u2028\u2029, bad \xff\xfe utf-8, emoji 🙂"
	tests := []struct {
		name string
		req  chatRequest
	}{
		{name: "minimal", req: chatRequest{Model: "m", Messages: []scoring.Message{{Role: "user", Content: "hi"}}}},
		{name: "no messages", req: chatRequest{Model: "m"}},
		{name: "tricky text", req: chatRequest{Model: tricky, Messages: []scoring.Message{{Role: "system", Content: tricky}, {Role: "user", Content: tricky}}}},
		{name: "all numbers", req: chatRequest{Model: "gpt-4o", Messages: []scoring.Message{{Role: "user", Content: "x"}},
			Temperature: &zero, MaxTokens: 512, Seed: &seed}},
		{name: "reasoning model", req: chatRequest{Model: "o3", Messages: []scoring.Message{{Role: "user", Content: "x"}}, MaxCompletionTokens: 2048}},
		{name: "json_object", req: chatRequest{Model: "m", Messages: []scoring.Message{{Role: "user", Content: "x"}},
			ResponseFormat: &responseFormat{Type: "json_object"}}},
		{name: "json_schema with spaces", req: chatRequest{Model: "m", Messages: []scoring.Message{{Role: "user", Content: "x"}}, Temperature: &zero,
			ResponseFormat: &responseFormat{Type: "json_schema", JSONSchema: &jsonSchema{Name: "verdicts", Strict: true,
				Schema: json.RawMessage("{\n  \"type\": \"object\",\n  \"properties\": {\"v\": {\"type\": \"string\", \"enum\": [\"<yes>\", \"no\"]}}\n}")}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.req.appendJSON(nil)
			require.NoError(t, err)
			assert.Equal(t, string(encodingJSON(t, tt.req)), string(got))
		})
	}
}

func TestRequestJSONRejectsABadSchema(t *testing.T) {
	req := chatRequest{Model: "m", ResponseFormat: &responseFormat{Type: "json_schema",
		JSONSchema: &jsonSchema{Name: "broken", Schema: json.RawMessage(`{"type":`)}}}
	_, err := req.appendJSON(nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "schema broken")
}
