package genai

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

func TestConversationIDReader(t *testing.T) {
	long := strings.Repeat("x", 1<<20) // an id of 1 MB
	tests := []struct {
		name  string
		extra []string
		attrs map[string]any
		want  ConversationID
	}{
		{"none", nil, map[string]any{"gen_ai.operation.name": "chat"}, ConversationID{}},
		{"semconv", nil, map[string]any{"gen_ai.conversation.id": "conv-1"}, ConversationID{ID: "conv-1", Key: AttrConversationID}},
		{"openinference and langfuse", nil, map[string]any{"session.id": "s-1"}, ConversationID{ID: "s-1", Key: AttrSessionID}},
		{"langfuse alias", nil, map[string]any{"langfuse.session.id": "s-2"}, ConversationID{ID: "s-2", Key: "langfuse.session.id"}},
		{"openllmetry association property", nil, map[string]any{"traceloop.association.properties.chat_id": "c-9"},
			ConversationID{ID: "c-9", Key: "traceloop.association.properties.chat_id"}},
		{"ai sdk 7 runtime context", nil, map[string]any{"ai.settings.context.sessionId": "web-7"},
			ConversationID{ID: "web-7", Key: "ai.settings.context.sessionId"}},
		{"ai sdk telemetry metadata", nil, map[string]any{"ai.telemetry.metadata.sessionId": "web-6"},
			ConversationID{ID: "web-6", Key: "ai.telemetry.metadata.sessionId"}},
		{"semconv wins over the conventions' own keys, whatever their order on the span", nil,
			map[string]any{"session.id": "s-1", "traceloop.association.properties.session_id": "t-1", "gen_ai.conversation.id": "conv-1"},
			ConversationID{ID: "conv-1", Key: AttrConversationID}},
		{"an empty value is no id: the next key is read", nil, map[string]any{"gen_ai.conversation.id": "", "session.id": "s-1"},
			ConversationID{ID: "s-1", Key: AttrSessionID}},
		{"an integer id", nil, map[string]any{"session.id": int64(42)}, ConversationID{ID: "42", Key: AttrSessionID}},
		{"a value that is no string or integer is no id", nil, map[string]any{"session.id": []any{"a"}, "langfuse.session.id": true}, ConversationID{}},
		{"a key the user names comes first", []string{"app.chat_id"},
			map[string]any{"gen_ai.conversation.id": "conv-1", "app.chat_id": "mine"}, ConversationID{ID: "mine", Key: "app.chat_id"}},
		{"an id of 1 MB is refused", nil, map[string]any{"gen_ai.conversation.id": long}, ConversationID{Key: AttrConversationID, TooLong: true}},
		{"an id at the bound is taken", nil, map[string]any{"gen_ai.conversation.id": strings.Repeat("y", MaxConversationIDBytes)},
			ConversationID{ID: strings.Repeat("y", MaxConversationIDBytes), Key: AttrConversationID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			attrs := pcommon.NewMap()
			require.NoError(t, attrs.FromRaw(tt.attrs))
			assert.Equal(t, tt.want, NewConversationIDReader(tt.extra).Read(attrs))
		})
	}
}

func TestConversationIDReaderKeys(t *testing.T) {
	r := NewConversationIDReader([]string{"app.chat_id", "session.id", ""})
	assert.Equal(t, "app.chat_id", r.Keys()[0])
	assert.Equal(t, 1, slices.Index(r.Keys(), "session.id"), "a named default key is read at the user's place")
	assert.Equal(t, 1, len(slices.DeleteFunc(slices.Clone(r.Keys()), func(k string) bool { return k != "session.id" })), "and once")
	assert.Len(t, r.Keys(), len(DefaultConversationIDKeys)+1)
}

// The conversation id as each real library sent it in its multi-turn run
// (test/clients TestConversations, stored in
// testdata/otlp/clients/<app>/conversation): the attribute it is read
// from, and which spans carry it.
func TestConversationIDsOfRealLibraries(t *testing.T) {
	const id = "velo-nord-chat-1042" // test/clients/scenario.json
	tests := []struct {
		app string
		key string
		// carriers are the names of the spans that carry the id; every
		// other span carries none.
		carriers []string
		turns    int // spans carrying it
	}{
		// The thread of Mastra's memory option, on every span of the run.
		{"mastra-agent", AttrConversationID, nil, 0},
		{"openinference-openai", AttrSessionID, []string{"OpenAI Chat Completions"}, 3},
		// Only each turn's root observation: its generation takes the id of
		// its trace (internal/conversation).
		{"langfuse-openai", AttrSessionID, []string{"support-turn"}, 3},
		{"traceloop-openai", "traceloop.association.properties.session_id", []string{"chat gpt-4o-mini"}, 3},
		// The run and its step; the chat span below them takes the id of
		// its trace.
		{"aisdk-generate", "ai.settings.context.sessionId", []string{"invoke_agent gpt-4o-mini", "step 1"}, 6},
	}
	r := NewConversationIDReader(nil)
	for _, tt := range tests {
		t.Run(tt.app, func(t *testing.T) {
			carrying := 0
			for name, spans := range readClientSample(t, filepath.Join(tt.app, "conversation", "traces.jsonl")) {
				for _, s := range spans {
					got := r.Read(s.span.Attributes())
					if got.ID == "" {
						assert.False(t, tt.carriers == nil, "span %q carries no id", name)
						continue
					}
					carrying++
					assert.Equal(t, ConversationID{ID: id, Key: tt.key}, got, "span %q", name)
					if tt.carriers != nil {
						assert.Contains(t, tt.carriers, name)
					}
				}
			}
			if tt.turns > 0 {
				assert.Equal(t, tt.turns, carrying, "one span a turn carries it")
			} else {
				assert.Positive(t, carrying)
			}
		})
	}
}
