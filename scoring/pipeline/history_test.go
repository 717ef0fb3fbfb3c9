package pipeline_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
)

// TestHistoryIsBounded checks what a scorer of one turn that sends the
// conversation before the request keeps of it: the last HistoryTurns
// non-blank messages, redacted, with forged markers neutralised, the
// newest kept whole within MaxInputChars; an omitted turn in front stands
// for the messages left out, so the judge knows they were there. A cut
// for MaxInputChars marks the result truncated, the HistoryTurns window
// alone does not. A scorer that does not send the history drops it.
func TestHistoryIsBounded(t *testing.T) {
	turns := func(n, size int) []scoring.Turn {
		var out []scoring.Turn
		for i := range n {
			out = append(out, scoring.Turn{Role: scoring.RoleUser, Content: fmt.Sprintf("%03d ", i) + strings.Repeat("x", size-4)})
		}
		return out
	}
	redact := func(s string) string { return strings.ReplaceAll(s, "secret", "[redacted]") }
	tests := []struct {
		name        string
		history     []scoring.Turn
		maxChars    int
		wantFirst   string // prefix of the oldest message kept
		wantKept    int    // messages kept
		wantOmitted int    // messages an omitted turn in front stands for
		wantCut     bool
	}{
		{"short conversation kept whole", turns(3, 10), 0, "000 ", 3, 0, false},
		{"only the last ten lines", turns(14, 10), 0, "005 ", scoring.DefaultHistoryTurns - 1, 5, false},
		{"blank messages skipped", append(turns(2, 10), scoring.Turn{Role: scoring.RoleAssistant, Content: "  "}), 0, "000 ", 2, 0, false},
		{"the message that does not fit is cut, older ones left out", turns(5, 100), 280, "002 ", 3, 2, true},
		{"older messages left out for the character bound", turns(5, 100), 250, "003 ", 2, 3, true},
		{"too little room left: the older message is left out", turns(3, 100), 230, "001 ", 2, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustNew(t, scoring.TaskCompletion, testkit.NewJudge(nil), scoring.Options{MaxInputChars: tt.maxChars, Redact: redact})
			c, cut, truncated, err := pipeline.Prepare(s, scoring.Case{Input: "go", Turns: tt.history})
			require.NoError(t, err)
			kept := pipeline.NumberTurns(c.Turns)
			require.Len(t, kept, tt.wantKept)
			assert.Equal(t, tt.wantOmitted, pipeline.TurnsOmitted(c.Turns))
			if tt.wantOmitted > 0 {
				assert.Equal(t, scoring.Turn{Role: scoring.RoleOmitted, Count: tt.wantOmitted}, c.Turns[0], "one omitted turn in front")
			}
			assert.True(t, strings.HasPrefix(kept[0].Content, tt.wantFirst), kept[0].Content)
			assert.Equal(t, tt.history[len(tt.history)-1-countBlankTail(tt.history)].Content, kept[len(kept)-1].Content, "the newest message is kept whole")
			assert.Equal(t, tt.wantCut, cut[scoring.FieldTurns])
			assert.Equal(t, tt.wantCut, truncated)
		})
	}
	t.Run("redacted and neutralised", func(t *testing.T) {
		s := mustNew(t, scoring.TaskCompletion, testkit.NewJudge(nil), scoring.Options{Redact: redact})
		c, _, _, err := pipeline.Prepare(s, scoring.Case{Input: "go", Turns: []scoring.Turn{{Role: scoring.RoleUser, Content: "my secret" + scoring.TruncationMarker}}})
		require.NoError(t, err)
		assert.Equal(t, []scoring.Turn{{Role: scoring.RoleUser, Content: "my [redacted] [...]"}}, c.Turns)
	})
	t.Run("a scorer that does not send it drops it", func(t *testing.T) {
		s := mustNew(t, scoring.ToolUse, testkit.NewJudge(nil), scoring.Options{})
		c, _, _, err := pipeline.Prepare(s, scoring.Case{Input: "go", Turns: turns(2, 10)})
		require.NoError(t, err)
		assert.Nil(t, c.Turns)
	})
}

func countBlankTail(h []scoring.Turn) int {
	n := 0
	for i := len(h) - 1; i >= 0 && strings.TrimSpace(h[i].Content) == ""; i-- {
		n++
	}
	return n
}
