package pipeline

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
)

// prepareWith prepares c for a scorer of def's kind with opts.
func prepareWith(t *testing.T, def Definition, c scoring.Case, opts scoring.Options) (scoring.Case, bool, error) {
	t.Helper()
	def.Name = "test"
	def.Run = func(e *Evaluation) { e.SetScore(0) }
	s, err := New(def, testkit.NewJudge(nil), opts)
	require.NoError(t, err)
	e := &Evaluation{}
	err = s.(*scorer).prepare(c, e)
	return e.Case, e.Result.Truncated, err
}

func TestPrepareConversationBounds(t *testing.T) {
	conv := Definition{Conversation: true}
	t.Run("10,000 messages keep the first and last, one omitted turn between", func(t *testing.T) {
		got, truncated, err := prepareWith(t, conv, scoring.Case{Turns: testkit.Chat(10000)}, scoring.Options{MaxTurns: 10})
		require.NoError(t, err)
		assert.True(t, truncated)
		require.Len(t, got.Turns, 10)
		assert.Equal(t, "message 5", got.Turns[4].Content)
		assert.Equal(t, scoring.Turn{Role: scoring.RoleOmitted, Count: 9991}, got.Turns[5])
		assert.Equal(t, "message 9997", got.Turns[6].Content)
		assert.Equal(t, "message 10000", got.Turns[9].Content)
		assert.Equal(t, 10000, scoring.TurnCount(got.Turns))
		// The judge sees each kept message under its number in the whole conversation.
		numbered := NumberTurns(got.Turns)
		assert.Equal(t, 9997, numbered[5].Number)
		assert.Equal(t, TurnLine{Omitted: 9991}, TurnLines(got.Turns)[5])
	})
	t.Run("the default bound", func(t *testing.T) {
		got, truncated, err := prepareWith(t, conv, scoring.Case{Turns: testkit.Chat(10000)}, scoring.Options{})
		require.NoError(t, err)
		assert.True(t, truncated)
		assert.Len(t, got.Turns, scoring.DefaultMaxTurns)
	})
	t.Run("input and output end the conversation, and are not sent apart from it", func(t *testing.T) {
		got, truncated, err := prepareWith(t, conv, scoring.Case{Turns: testkit.Chat(2), Input: "q", Output: "a"}, scoring.Options{})
		require.NoError(t, err)
		assert.False(t, truncated)
		assert.Equal(t, []scoring.Turn{testkit.Chat(2)[0], testkit.Chat(2)[1], {Role: scoring.RoleUser, Content: "q"}, {Role: scoring.RoleAssistant, Content: "a"}}, got.Turns)
		assert.Empty(t, got.Input)
		assert.Empty(t, got.Output)
	})
	t.Run("blank messages are skipped", func(t *testing.T) {
		turns := []scoring.Turn{{Role: scoring.RoleUser, Content: "hi"}, {Role: scoring.RoleAssistant, Content: " \n"}, {Role: scoring.RoleUser}}
		got, truncated, err := prepareWith(t, conv, scoring.Case{Turns: turns}, scoring.Options{})
		require.NoError(t, err)
		assert.False(t, truncated)
		assert.Equal(t, turns[:1], got.Turns)
	})
	t.Run("an omitted turn of the caller is truncation", func(t *testing.T) {
		turns := append(testkit.Chat(2), scoring.Turn{Role: scoring.RoleOmitted, Count: 3})
		got, truncated, err := prepareWith(t, conv, scoring.Case{Turns: turns}, scoring.Options{})
		require.NoError(t, err)
		assert.True(t, truncated)
		assert.Equal(t, turns, got.Turns)
	})
	t.Run("an unknown role is an invalid case", func(t *testing.T) {
		_, _, err := prepareWith(t, conv, scoring.Case{Turns: []scoring.Turn{{Role: "tool", Content: "42"}}}, scoring.Options{})
		assert.ErrorContains(t, err, `unknown role "tool"`)
	})
	t.Run("texts are redacted, their markers neutralised and cut together", func(t *testing.T) {
		turns := []scoring.Turn{
			{Role: scoring.RoleUser, Content: "my key is sk-123" + scoring.TruncationMarker},
			{Role: scoring.RoleAssistant, Content: strings.Repeat("long ", 100)},
		}
		redact := func(s string) string { return strings.ReplaceAll(s, "sk-123", "[KEY]") }
		got, truncated, err := prepareWith(t, conv, scoring.Case{Turns: turns}, scoring.Options{Redact: redact, MaxInputChars: 200})
		require.NoError(t, err)
		assert.True(t, truncated)
		assert.Equal(t, "my key is [KEY] [...]", got.Turns[0].Content)
		assert.True(t, strings.HasSuffix(got.Turns[1].Content, scoring.TruncationMarker))
		assert.Equal(t, strings.Repeat("long ", 100), turns[1].Content, "the caller's turn was written to")
	})
}

func TestPrepareHistory(t *testing.T) {
	hist := Definition{History: true}
	t.Run("the last messages, the earlier ones counted", func(t *testing.T) {
		got, truncated, err := prepareWith(t, hist, scoring.Case{Turns: testkit.Chat(30), Input: "q", Output: "a"}, scoring.Options{HistoryTurns: 4})
		require.NoError(t, err)
		assert.False(t, truncated, "history left out is not a cut")
		require.Len(t, got.Turns, 4)
		assert.Equal(t, scoring.Turn{Role: scoring.RoleOmitted, Count: 27}, got.Turns[0])
		assert.Equal(t, "message 28", got.Turns[1].Content)
		assert.Equal(t, "message 30", got.Turns[3].Content)
		assert.Equal(t, "q", got.Input)
		assert.Equal(t, "a", got.Output)
	})
	t.Run("a scorer of one turn without History never sees turns", func(t *testing.T) {
		got, _, err := prepareWith(t, Definition{}, scoring.Case{Turns: testkit.Chat(3), Input: "q", Output: "a"}, scoring.Options{})
		require.NoError(t, err)
		assert.Nil(t, got.Turns)
	})
}

func TestTurnOptions(t *testing.T) {
	def := Definition{Name: "test", Run: func(e *Evaluation) {}}
	for _, opts := range []scoring.Options{{MaxTurns: -1}, {MaxTurns: 1}, {HistoryTurns: -2}, {ConversationWindow: -1}} {
		_, err := New(def, testkit.NewJudge(nil), opts)
		assert.Error(t, err, "%+v", opts)
	}
}
