package conversationrelevancy

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
)

// roles builds a conversation from a string of roles: u (user), a
// (assistant), and a digit for that many omitted messages.
func roles(s string) []scoring.Turn {
	var out []scoring.Turn
	for i, r := range s {
		switch {
		case r == 'u':
			out = append(out, scoring.Turn{Role: scoring.RoleUser, Content: fmt.Sprintf("m%d", i)})
		case r == 'a':
			out = append(out, scoring.Turn{Role: scoring.RoleAssistant, Content: fmt.Sprintf("m%d", i)})
		default:
			out = append(out, scoring.Turn{Role: scoring.RoleOmitted, Count: int(r - '0')})
		}
	}
	return out
}

// numbers lists the message numbers of each exchange.
func numbers(xs []Exchange) [][]int {
	out := [][]int{}
	for _, x := range xs {
		var ns []int
		for _, m := range x {
			ns = append(ns, m.Number)
		}
		out = append(out, ns)
	}
	return out
}

// TestExchanges checks the exchanges against deepeval's
// get_unit_interactions, worked by hand on each conversation.
func TestExchanges(t *testing.T) {
	tests := []struct {
		conv string
		want [][]int
	}{
		{"uauaua", [][]int{{1, 2}, {3, 4}, {5, 6}}},
		{"auaua", [][]int{{1, 2, 3}, {4, 5}}},     // a greeting joins the first exchange
		{"uuaaua", [][]int{{1, 2, 3, 4}, {5, 6}}}, // runs of one role stay together
		{"uau", [][]int{{1, 2}}},                  // a last message without a reply is no exchange
		{"aa", [][]int{}},                         // no user message
		{"u", [][]int{}},                          //
		{"ua5aua", [][]int{{1, 2}, {8, 9, 10}}},   // ours: an omitted turn starts afresh
		{"uau3aua", [][]int{{1, 2}, {7, 8, 9}}},   // the run cut by the gap is dropped
		{"uaua", [][]int{{1, 2}, {3, 4}}},         //
		{"uuuuua", [][]int{{1, 2, 3, 4, 5, 6}}},   //
		{"auauauaua", [][]int{{1, 2, 3}, {4, 5}, {6, 7}, {8, 9}}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, numbers(Exchanges(roles(tt.conv))), tt.conv)
	}
}

func TestWindows(t *testing.T) {
	xs := Exchanges(testkit.Chat(24)) // 12 exchanges of two messages
	w10 := Windows(xs, 10)
	assert.Equal(t, pipeline.TurnTarget{Turn: 2, From: 1}, w10[0])
	assert.Equal(t, pipeline.TurnTarget{Turn: 20, From: 1}, w10[9], "the tenth exchange still sees the first")
	assert.Equal(t, pipeline.TurnTarget{Turn: 22, From: 3}, w10[10], "the eleventh drops the first")
	assert.Equal(t, pipeline.TurnTarget{Turn: 24, From: 5}, w10[11])
	w1 := Windows(xs, 1)
	assert.Equal(t, pipeline.TurnTarget{Turn: 24, From: 23}, w1[11], "a window of one is the exchange itself")
}

// replies scripts the judge with a verdict for each reply numbered in
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

// TestFormula checks deepeval's TurnRelevancyMetric arithmetic on
// scripted verdicts: relevant windows / windows (one window per exchange),
// 1 without an exchange, 0 in strict mode below 1.
func TestFormula(t *testing.T) {
	tests := []struct {
		name     string
		conv     string
		judged   []int
		verdicts []string
		opts     scoring.Options
		want     testkit.Worked // deepeval's score by hand, and ours
	}{
		{"one of three off the point", "uauaua", []int{2, 4, 6}, []string{"yes", "no", "yes"}, scoring.Options{}, testkit.Worked{Reference: 2.0 / 3, Score: 0.67, Label: scoring.LabelPass, Calls: 2}},
		{"a greeting first: two exchanges", "auaua", []int{3, 5}, []string{"no", "yes"}, scoring.Options{}, testkit.Worked{Reference: 0.5, Score: 0.5, Label: scoring.LabelPass, Calls: 2}},
		{"two of five relevant", "uauauauaua", []int{2, 4, 6, 8, 10}, []string{"no", "yes", "no", "no", "yes"}, scoring.Options{}, testkit.Worked{Reference: 0.4, Score: 0.4, Label: scoring.LabelFail, Calls: 2}},
		{"only the last reply of a run is judged", "uuaaua", []int{4, 6}, []string{"yes", "yes"}, scoring.Options{}, testkit.Worked{Reference: 1, Score: 1, Label: scoring.LabelPass, Calls: 2}},
		{"no exchange scores 1", "uuu", nil, nil, scoring.Options{}, testkit.Worked{Reference: 1, Score: 1, Label: scoring.LabelPass, Calls: 0}},
		{"strict mode below 1 is 0", "uauaua", []int{2, 4, 6}, []string{"yes", "no", "yes"}, scoring.Options{StrictMode: true}, testkit.Worked{Reference: 0, Score: 0, Label: scoring.LabelFail, Calls: 2}},
		{"scale 10", "uauaua", []int{2, 4, 6}, []string{"yes", "no", "yes"}, scoring.Options{Scale: 10}, testkit.Worked{Reference: 2.0 / 3, Score: 6.67, Label: scoring.LabelPass, Calls: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := testkit.NewJudge(replies(tt.judged, tt.verdicts...))
			res := testkit.Scorer(t, New, j, tt.opts).Score(context.Background(), scoring.Case{Turns: roles(tt.conv)})
			testkit.CheckWorked(t, res, tt.opts, tt.want)
		})
	}
}

func TestWindowInPrompt(t *testing.T) {
	j := testkit.NewJudge(replies([]int{2, 4, 6}, "yes", "yes", "no"))
	res := testkit.Scorer(t, New, j, scoring.Options{ConversationWindow: 2, ReasonMode: scoring.ReasonSummary}).Score(context.Background(), scoring.Case{Turns: testkit.Chat(6)})
	require.NoError(t, res.Err)
	user := j.Requests()[0].Messages[1].Content
	assert.Contains(t, user, "<<<REPLIES\n{\"turn\":2,\"window_from\":1}\n{\"turn\":4,\"window_from\":1}\n{\"turn\":6,\"window_from\":3}\nREPLIES>>>")
	assert.Equal(t, Verdicts{Window: 2, Verdicts: []pipeline.TurnVerdict{
		{Turn: 2, From: 1, Verdict: "yes", Reason: "reason 2"},
		{Turn: 4, From: 1, Verdict: "yes", Reason: "reason 4"},
		{Turn: 6, From: 3, Verdict: "no", Reason: "reason 6"},
	}}, res.Steps.Analyze)
	assert.Equal(t, "The score is 0.67 because 2 of the assistant's 3 replies are relevant to the conversation before them; off the point: reason 6.", res.Reason)
}

func TestDefaultWindowIsDeepevals(t *testing.T) {
	j := testkit.NewJudge(nil)
	s := testkit.Scorer(t, New, j, scoring.Options{OmitReason: true})
	s.Score(context.Background(), scoring.Case{Turns: testkit.Chat(24)})
	assert.Contains(t, j.Requests()[0].Messages[1].Content, `{"turn":22,"window_from":3}`)
}
