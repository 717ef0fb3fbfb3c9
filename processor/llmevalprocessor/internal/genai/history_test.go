package genai

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHistoryIsTheConversationBeforeTheRequest checks a follow-up turn:
// the request is the last user message, and the turns before it (user,
// assistant with its tool calls; not system, not tool results) are its
// history, oldest first, at most the last MaxHistoryTurns, so that
// task_completion and prompt_alignment read "Yes, go ahead" with what it
// answers (issue 36 item 3).
func TestHistoryIsTheConversationBeforeTheRequest(t *testing.T) {
	span := newSpan(t, "chat", map[string]any{
		"gen_ai.operation.name": "chat",
		"gen_ai.input.messages": `[{"role":"system","parts":[{"type":"text","content":"Be brief."}]},` +
			`{"role":"user","parts":[{"type":"text","content":"Find me a flight to Lisbon on May 3."}]},` +
			`{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"search","arguments":{"to":"LIS"}}]},` +
			`{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"TAP 9:40, 120 EUR"}]},` +
			`{"role":"assistant","parts":[{"type":"text","content":"TAP at 9:40 for 120 EUR. Shall I book it?"}]},` +
			`{"role":"user","parts":[{"type":"text","content":"Yes, go ahead."}]}]`,
		"gen_ai.output.messages": `[{"role":"assistant","finish_reason":"stop","parts":[{"type":"text","content":"Booked."}]}]`,
	})
	g := read(span)
	assert.Equal(t, "Yes, go ahead.", g.Input)
	assert.Equal(t, []Turn{
		{Role: "user", Content: "Find me a flight to Lisbon on May 3."},
		{Role: "assistant", Content: `[tool call search({"to":"LIS"})]`},
		{Role: "assistant", Content: "TAP at 9:40 for 120 EUR. Shall I book it?"},
	}, g.History)

	// A long conversation keeps its last turns; a single turn has none.
	var msgs string
	for i := range 30 {
		if i > 0 {
			msgs += ","
		}
		role := map[bool]string{true: "user", false: "assistant"}[i%2 == 0]
		msgs += fmt.Sprintf(`{"role":%q,"parts":[{"type":"text","content":"turn %d"}]}`, role, i)
	}
	long := read(newSpan(t, "chat", map[string]any{"gen_ai.operation.name": "chat", "gen_ai.input.messages": "[" + msgs + "]",
		"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"ok"}]}]`}))
	require.Len(t, long.History, MaxHistoryTurns)
	assert.Equal(t, "turn 18", long.History[0].Content)
	assert.Equal(t, "turn 28", long.Input)
	single := read(newSpan(t, "chat", map[string]any{"gen_ai.operation.name": "chat",
		"gen_ai.input.messages":  `[{"role":"user","parts":[{"type":"text","content":"Hi"}]}]`,
		"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"Hello"}]}]`}))
	assert.Empty(t, single.History)
}
