package roleadherence

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
)

// replies scripts the judge with a verdict for each message numbered in
// judged.
func replies(judged []int, verdicts ...string) map[string][]string {
	vs := []map[string]any{}
	for i, n := range judged {
		vs = append(vs, map[string]any{"turn": n, "verdict": verdicts[i], "reason": fmt.Sprintf("reason %d", n)})
	}
	return map[string][]string{
		SchemaVerdicts:       {testkit.MustJSON(map[string]any{"verdicts": vs})},
		scoring.SchemaReason: {`{"reason": "judge reason"}`},
	}
}

var pirate = []string{"You are Captain Flint, a pirate. Always talk like a pirate."}

// TestFormula checks deepeval's RoleAdherenceMetric arithmetic on
// scripted verdicts: (assistant messages − messages out of role) /
// assistant messages, 1 when the assistant wrote nothing, 0 in strict mode
// below 1. deepeval's judge lists only the messages out of role; ours
// gives every assistant message a verdict, so "out of role" is the count
// of "no" verdicts.
func TestFormula(t *testing.T) {
	tests := []struct {
		name     string
		turns    []scoring.Turn
		judged   []int
		verdicts []string
		opts     scoring.Options
		want     testkit.Worked // deepeval's score by hand, and ours
	}{
		{"one of three out of role", testkit.Chat(6), []int{2, 4, 6}, []string{"yes", "no", "yes"}, scoring.Options{}, testkit.Worked{Reference: (3.0 - 1) / 3, Score: 0.67, Label: scoring.LabelPass, Calls: 2}},
		{"two of five out of role", testkit.Chat(10), []int{2, 4, 6, 8, 10}, []string{"yes", "no", "yes", "no", "yes"}, scoring.Options{}, testkit.Worked{Reference: (5.0 - 2) / 5, Score: 0.6, Label: scoring.LabelPass, Calls: 2}},
		{"all out of role", testkit.Chat(8), []int{2, 4, 6, 8}, []string{"no", "no", "no", "no"}, scoring.Options{}, testkit.Worked{Reference: 0, Score: 0, Label: scoring.LabelFail, Calls: 2}},
		{"all in role", testkit.Chat(4), []int{2, 4}, []string{"yes", "yes"}, scoring.Options{}, testkit.Worked{Reference: 1, Score: 1, Label: scoring.LabelPass, Calls: 2}},
		{"no assistant message scores 1", testkit.Chat(1), nil, nil, scoring.Options{}, testkit.Worked{Reference: 1, Score: 1, Label: scoring.LabelPass, Calls: 0}},
		{"no assistant message at scale 10", testkit.Chat(1), nil, nil, scoring.Options{Scale: 10}, testkit.Worked{Reference: 1, Score: 10, Label: scoring.LabelPass, Calls: 0}},
		{"strict mode below 1 is 0", testkit.Chat(6), []int{2, 4, 6}, []string{"yes", "no", "yes"}, scoring.Options{StrictMode: true}, testkit.Worked{Reference: 0, Score: 0, Label: scoring.LabelFail, Calls: 2}},
		{"scale 5", testkit.Chat(6), []int{2, 4, 6}, []string{"yes", "no", "yes"}, scoring.Options{Scale: 5}, testkit.Worked{Reference: (3.0 - 1) / 3, Score: 3.33, Label: scoring.LabelPass, Calls: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := testkit.NewJudge(replies(tt.judged, tt.verdicts...))
			res := testkit.Scorer(t, New, j, tt.opts).Score(context.Background(), scoring.Case{Turns: tt.turns, Instructions: pirate})
			testkit.CheckWorked(t, res, tt.opts, tt.want)
		})
	}
}

func TestNoSystemPrompt(t *testing.T) {
	for _, instructions := range [][]string{nil, {"", "  \n"}} {
		j := testkit.NewJudge(replies([]int{2}, "yes"))
		res := testkit.Scorer(t, New, j, scoring.Options{}).Score(context.Background(), scoring.Case{Turns: testkit.Chat(2), Instructions: instructions})
		assert.Equal(t, scoring.LabelNotScorable, res.Label)
		assert.Contains(t, res.Reason, "no system prompt")
		assert.Empty(t, j.Requests(), "no judge call")
	}
}

func TestPrompt(t *testing.T) {
	j := testkit.NewJudge(replies([]int{2, 4}, "yes", "no"))
	res := testkit.Scorer(t, New, j, scoring.Options{ReasonMode: scoring.ReasonSummary}).Score(context.Background(), scoring.Case{
		Turns:        testkit.Talk("Ahoy?", "Arr, matey!", "Talk normally."),
		Output:       "Certainly. How may I assist you today?",
		Instructions: []string{"You are Captain Flint, a pirate.", "", "Always talk like a pirate."},
	})
	require.NoError(t, res.Err)
	user := j.Requests()[0].Messages[1].Content
	assert.Contains(t, user, "<<<SYSTEM\n\"You are Captain Flint, a pirate.\\n\\nAlways talk like a pirate.\"\nSYSTEM>>>")
	assert.Contains(t, user, "<<<REPLIES\n{\"turn\":2}\n{\"turn\":4}\nREPLIES>>>")
	assert.Contains(t, user, "Return exactly 2 verdicts.")
	assert.Equal(t, "The score is 0.5 because 1 of the assistant's 2 messages stays in the role its system prompt gives it; out of role: reason 4.", res.Reason)
}

func TestLongSystemPromptIsCutAndSaid(t *testing.T) {
	j := testkit.NewJudge(replies([]int{2}, "yes"))
	res := testkit.Scorer(t, New, j, scoring.Options{MaxInputChars: 100}).Score(context.Background(), scoring.Case{
		Turns: testkit.Chat(2), Instructions: []string{"You are a pirate. " + strings.Repeat("Arr. ", 100)},
	})
	require.NoError(t, res.Err)
	assert.True(t, res.Truncated)
	assert.Contains(t, j.Requests()[0].Messages[1].Content, scoring.TruncationMarker)
}
