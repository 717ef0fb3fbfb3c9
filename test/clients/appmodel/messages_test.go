package appmodel

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMessages drives the Messages API as the Anthropic SDK's tool loop
// does: a tool_use block first, the scripted answer once a tool_result
// block is in; a request the fake model cannot answer is refused.
func TestMessages(t *testing.T) {
	s := New(Script{
		Answers:       map[string]string{"Where is 7?": "It shipped."},
		ToolArguments: map[string]string{"lookup": `{"id":"7"}`},
	})
	defer s.Close()
	tools := `"tools":[{"name":"lookup","input_schema":{"type":"object"}}]`
	tests := []struct {
		name       string
		body       string
		wantStatus int
		wantBlock  map[string]any
		wantStop   string
	}{
		{
			name:       "tool offered, no result yet: tool_use",
			body:       `{"model":"m","system":"Be brief.","messages":[{"role":"user","content":"Where is 7?"}],` + tools + `}`,
			wantStatus: http.StatusOK, wantStop: "tool_use",
			wantBlock: map[string]any{"type": "tool_use", "name": "lookup", "input": map[string]any{"id": "7"}},
		},
		{
			name: "tool_result in: the answer to the last user text",
			body: `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"Where is 7?"}]},` +
				`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"lookup","input":{"id":"7"}}]},` +
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"shipped"}]}],` + tools + `}`,
			wantStatus: http.StatusOK, wantStop: "end_turn",
			wantBlock: map[string]any{"type": "text", "text": "It shipped."},
		},
		{name: "streaming is refused", body: `{"model":"m","stream":true,"messages":[{"role":"user","content":"Where is 7?"}]}`, wantStatus: http.StatusBadRequest},
		{name: "unscripted question", body: `{"model":"m","messages":[{"role":"user","content":"Who?"}]}`, wantStatus: http.StatusBadRequest},
		{name: "not JSON", body: `{"model":`, wantStatus: http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Post(s.URL+"/messages", "application/json", strings.NewReader(tt.body))
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, tt.wantStatus, resp.StatusCode)
			if tt.wantStatus != http.StatusOK {
				return
			}
			var reply struct {
				Type       string           `json:"type"`
				Role       string           `json:"role"`
				StopReason string           `json:"stop_reason"`
				Content    []map[string]any `json:"content"`
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&reply))
			assert.Equal(t, "message", reply.Type)
			assert.Equal(t, "assistant", reply.Role)
			assert.Equal(t, tt.wantStop, reply.StopReason)
			require.Len(t, reply.Content, 1)
			for k, v := range tt.wantBlock {
				assert.Equal(t, v, reply.Content[0][k], k)
			}
		})
	}
	var kinds []Kind
	for _, x := range s.Exchanges() {
		kinds = append(kinds, x.Kind)
	}
	assert.Equal(t, []Kind{Messages, Messages, Messages, Messages, Messages}, kinds)
}
