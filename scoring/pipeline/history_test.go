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

// TestHistoryIsBounded checks what a scorer that sends the conversation
// keeps of it: the last MaxHistoryTurns non-blank turns, redacted, with
// forged markers neutralised, the newest kept whole within MaxInputChars;
// a cut marks the result truncated, the turn window alone does not. A
// scorer that does not send the history drops it.
func TestHistoryIsBounded(t *testing.T) {
	turns := func(n, size int) []scoring.Turn {
		var out []scoring.Turn
		for i := range n {
			out = append(out, scoring.Turn{Role: "user", Content: fmt.Sprintf("%03d ", i) + strings.Repeat("x", size-4)})
		}
		return out
	}
	redact := func(s string) string { return strings.ReplaceAll(s, "secret", "[redacted]") }
	tests := []struct {
		name      string
		history   []scoring.Turn
		maxChars  int
		wantFirst string // prefix of the oldest turn kept
		wantN     int
		wantCut   bool
	}{
		{"short conversation kept whole", turns(3, 10), 0, "000 ", 3, false},
		{"only the last ten turns", turns(14, 10), 0, "004 ", scoring.MaxHistoryTurns, false},
		{"blank turns skipped", append(turns(2, 10), scoring.Turn{Role: "assistant", Content: "  "}), 0, "000 ", 2, false},
		{"the turn that does not fit is cut, older ones left out", turns(5, 100), 280, "002 ", 3, true},
		{"older turns left out for the character bound", turns(5, 100), 250, "003 ", 2, true},
		{"too little room left: the older turn is left out", turns(3, 100), 230, "001 ", 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustNew(t, scoring.TaskCompletion, testkit.NewJudge(nil), scoring.Options{MaxInputChars: tt.maxChars, Redact: redact})
			c, cut, truncated, err := pipeline.Prepare(s, scoring.Case{Input: "go", History: tt.history})
			require.NoError(t, err)
			require.Len(t, c.History, tt.wantN)
			assert.True(t, strings.HasPrefix(c.History[0].Content, tt.wantFirst), c.History[0].Content)
			assert.Equal(t, tt.history[len(tt.history)-1-countBlankTail(tt.history)].Content, c.History[len(c.History)-1].Content, "the newest turn is kept whole")
			assert.Equal(t, tt.wantCut, cut[scoring.FieldHistory])
			assert.Equal(t, tt.wantCut, truncated)
		})
	}
	t.Run("redacted and neutralised", func(t *testing.T) {
		s := mustNew(t, scoring.TaskCompletion, testkit.NewJudge(nil), scoring.Options{Redact: redact})
		c, _, _, err := pipeline.Prepare(s, scoring.Case{Input: "go", History: []scoring.Turn{{Role: " user ", Content: "my secret" + scoring.TruncationMarker}}})
		require.NoError(t, err)
		assert.Equal(t, []scoring.Turn{{Role: "user", Content: "my [redacted] [...]"}}, c.History)
	})
	t.Run("a scorer that does not send it drops it", func(t *testing.T) {
		s := mustNew(t, scoring.ToolUse, testkit.NewJudge(nil), scoring.Options{})
		c, _, _, err := pipeline.Prepare(s, scoring.Case{Input: "go", History: turns(2, 10)})
		require.NoError(t, err)
		assert.Nil(t, c.History)
	})
}

func countBlankTail(h []scoring.Turn) int {
	n := 0
	for i := len(h) - 1; i >= 0 && strings.TrimSpace(h[i].Content) == ""; i-- {
		n++
	}
	return n
}
