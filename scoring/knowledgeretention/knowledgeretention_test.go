package knowledgeretention

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

// replies scripts the judge: a fact from each user message numbered in
// factTurns, and a verdict for each reply numbered in verdicts' keys order.
func replies(factTurns []int, judged []int, verdicts ...string) map[string][]string {
	facts := []map[string]any{}
	for _, n := range factTurns {
		facts = append(facts, map[string]any{"turn": n, "fact": fmt.Sprintf("fact of message %d", n)})
	}
	vs := []map[string]any{}
	for i, n := range judged {
		vs = append(vs, map[string]any{"turn": n, "verdict": verdicts[i], "reason": fmt.Sprintf("reason %d", n)})
	}
	return map[string][]string{
		SchemaFacts:          {testkit.MustJSON(map[string]any{"facts": facts})},
		SchemaVerdicts:       {testkit.MustJSON(map[string]any{"verdicts": vs})},
		scoring.SchemaReason: {`{"reason": "judge reason"}`},
	}
}

// TestFormula checks deepeval's KnowledgeRetentionMetric arithmetic on
// scripted verdicts. deepeval extracts knowledge from each user message,
// judges every assistant message that has knowledge from an earlier
// message ("yes" there means an attrition; ours asks the other way round,
// "yes" keeps the facts), and scores retained / judged, or 1 when no
// message was judged. Turns are numbered from 1.
func TestFormula(t *testing.T) {
	tests := []struct {
		name      string
		turns     []scoring.Turn
		factTurns []int
		judged    []int // the replies deepeval judges for these facts
		verdicts  []string
		opts      scoring.Options
		want      testkit.Worked // deepeval's score by hand, and ours
	}{
		{"facts first: every reply judged, one forgets", testkit.Chat(6), []int{1}, []int{2, 4, 6}, []string{"yes", "no", "yes"}, scoring.Options{}, testkit.Worked{Reference: 2.0 / 3, Score: 0.67, Label: scoring.LabelPass, Calls: 3}},
		{"facts in message 3: replies 4 and 6", testkit.Chat(6), []int{3}, []int{4, 6}, []string{"yes", "no"}, scoring.Options{}, testkit.Worked{Reference: 0.5, Score: 0.5, Label: scoring.LabelPass, Calls: 3}},
		{"facts in the last user message: only the last reply", testkit.Chat(6), []int{5}, []int{6}, []string{"no"}, scoring.Options{}, testkit.Worked{Reference: 0, Score: 0, Label: scoring.LabelFail, Calls: 3}},
		{"ten messages, facts in 1 and 7", testkit.Chat(10), []int{1, 7}, []int{2, 4, 6, 8, 10}, []string{"yes", "yes", "no", "yes", "no"}, scoring.Options{}, testkit.Worked{Reference: 0.6, Score: 0.6, Label: scoring.LabelPass, Calls: 3}},
		{"no fact: nothing judged, 1", testkit.Chat(6), nil, nil, nil, scoring.Options{}, testkit.Worked{Reference: 1, Score: 1, Label: scoring.LabelPass, Calls: 1}},
		{"strict mode below 1 is 0", testkit.Chat(6), []int{1}, []int{2, 4, 6}, []string{"yes", "no", "yes"}, scoring.Options{StrictMode: true}, testkit.Worked{Reference: 0, Score: 0, Label: scoring.LabelFail, Calls: 3}},
		{"scale 10", testkit.Chat(6), []int{1}, []int{2, 4, 6}, []string{"yes", "no", "yes"}, scoring.Options{Scale: 10}, testkit.Worked{Reference: 2.0 / 3, Score: 6.67, Label: scoring.LabelPass, Calls: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := testkit.NewJudge(replies(tt.factTurns, tt.judged, tt.verdicts...))
			res := testkit.Scorer(t, New, j, tt.opts).Score(context.Background(), scoring.Case{Turns: tt.turns})
			testkit.CheckWorked(t, res, tt.opts, tt.want)
			if tt.judged != nil {
				got := res.Steps.Analyze.(Verdicts).Verdicts
				require.Len(t, got, len(tt.judged))
				for i, n := range tt.judged {
					assert.Equal(t, n, got[i].Turn)
				}
			}
		})
	}
}

func TestRepliesJudged(t *testing.T) {
	// Two user messages, then a reply: the reply follows the fact.
	turns := []scoring.Turn{
		{Role: scoring.RoleAssistant, Content: "Hi! How can I help?"},
		{Role: scoring.RoleUser, Content: "I'm in Rome."},
		{Role: scoring.RoleUser, Content: "Find me a museum."},
		{Role: scoring.RoleAssistant, Content: "Which city are you in?"},
	}
	j := testkit.NewJudge(replies([]int{2}, []int{4}, "no"))
	res := testkit.Scorer(t, New, j, scoring.Options{ReasonMode: scoring.ReasonSummary}).Score(context.Background(), scoring.Case{Turns: turns})
	require.NoError(t, res.Err)
	assert.Equal(t, 0.0, res.Score)
	assert.Equal(t, "The score is 0 because 0 of the 1 reply that follow facts the user told keep them; forgotten or contradicted: reason 4.", res.Reason)
	analyze := j.Requests()[1].Messages[1].Content
	assert.Contains(t, analyze, "<<<FACTS\n{\"turn\":2,\"fact\":\"fact of message 2\"}\nFACTS>>>")
	assert.Contains(t, analyze, "<<<REPLIES\n{\"turn\":4}\nREPLIES>>>")
	assert.Contains(t, analyze, "Return exactly 1 verdicts.")
}

func TestNothingToJudge(t *testing.T) {
	for _, tt := range []struct {
		name      string
		turns     []scoring.Turn
		wantLabel scoring.Label
		wantWords string
	}{
		{"no message", nil, scoring.LabelNotScorable, "no message"},
		{"no reply after a user message", []scoring.Turn{{Role: scoring.RoleAssistant, Content: "Hi!"}, {Role: scoring.RoleUser, Content: "I'm Ann."}}, scoring.LabelPass, "no reply"},
		{"only user messages", testkit.Talk("I'm Ann.")[:1], scoring.LabelPass, "no reply"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			j := testkit.NewJudge(replies([]int{1}, nil))
			res := testkit.Scorer(t, New, j, scoring.Options{}).Score(context.Background(), scoring.Case{Turns: tt.turns})
			assert.Equal(t, tt.wantLabel, res.Label)
			assert.Contains(t, res.Reason, tt.wantWords)
			assert.Empty(t, j.Requests())
		})
	}
}

func TestBadFacts(t *testing.T) {
	for _, tt := range []struct {
		name, reply, wantErr string
	}{
		{"a fact from a reply of the assistant", `{"facts": [{"turn": 2, "fact": "x"}]}`, "turn 2, which is not a message of the user"},
		{"a fact from no message", `{"facts": [{"turn": 99, "fact": "x"}]}`, "turn 99"},
		{"no turn", `{"facts": [{"fact": "x"}]}`, `has no "turn"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			j := testkit.NewJudge(replies([]int{1}, []int{2, 4}, "yes", "yes"))
			j.Set(SchemaFacts, testkit.ReplyOf(tt.reply, "stop"))
			res := testkit.Scorer(t, New, j, scoring.Options{}).Score(context.Background(), scoring.Case{Turns: testkit.Chat(4)})
			assert.Equal(t, scoring.LabelError, res.Label)
			assert.ErrorContains(t, res.Err, tt.wantErr)
			assert.Equal(t, 2, res.Usage.LLMCalls, "asked, then re-asked once")
		})
	}
}

func TestBadVerdicts(t *testing.T) {
	for _, tt := range []struct {
		name, reply, wantErr string
	}{
		{"a turn not to judge", `{"verdicts": [{"turn": 2, "verdict": "yes"}, {"turn": 3, "verdict": "yes"}]}`, "turn 3, which is not one of the turns to judge (2, 4)"},
		{"a turn twice", `{"verdicts": [{"turn": 2, "verdict": "yes"}, {"turn": 2, "verdict": "no"}]}`, "verdicts 1 and 2 both judge turn 2"},
		{"a verdict without its turn", `{"verdicts": [{"turn": 2, "verdict": "yes"}, {"verdict": "yes"}]}`, "1 of 2 verdicts give no turn"},
		{"one verdict short", `{"verdicts": [{"turn": 2, "verdict": "yes"}]}`, "expected exactly 2 items"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			j := testkit.NewJudge(replies([]int{1}, []int{2, 4}, "yes", "yes"))
			j.Set(SchemaVerdicts, testkit.ReplyOf(tt.reply, "stop"))
			res := testkit.Scorer(t, New, j, scoring.Options{}).Score(context.Background(), scoring.Case{Turns: testkit.Chat(4)})
			assert.Equal(t, scoring.LabelError, res.Label)
			assert.ErrorContains(t, res.Err, tt.wantErr)
		})
	}
	// Verdicts given out of order are put back in the replies' order.
	j := testkit.NewJudge(replies([]int{1}, []int{2, 4}, "yes", "yes"))
	j.Set(SchemaVerdicts, testkit.ReplyOf(`{"verdicts": [{"turn": 4, "verdict": "no", "reason": "b"}, {"turn": 2, "verdict": "yes", "reason": "a"}]}`, "stop"))
	res := testkit.Scorer(t, New, j, scoring.Options{OmitReason: true}).Score(context.Background(), scoring.Case{Turns: testkit.Chat(4)})
	require.NoError(t, res.Err)
	assert.Equal(t, Verdicts{Verdicts: []pipeline.TurnVerdict{{Turn: 2, Verdict: "yes", Reason: "a"}, {Turn: 4, Verdict: "no", Reason: "b"}}, Reordered: true}, res.Steps.Analyze)
}

func TestLongConversationIsBoundedAndSaid(t *testing.T) {
	// Of 10,000 messages the judge sees 1-25 and 9977-10000; a fact in
	// message 1 makes every visible reply a target.
	var judged []int
	var verdicts []string
	for n := 2; n <= 10000; n += 2 {
		if n <= 25 || n >= 9977 {
			judged = append(judged, n)
			verdicts = append(verdicts, "yes")
		}
	}
	j := testkit.NewJudge(replies([]int{1}, judged, verdicts...))
	res := testkit.Scorer(t, New, j, scoring.Options{ReasonMode: scoring.ReasonSummary}).Score(context.Background(), scoring.Case{Turns: testkit.Chat(10000)})
	require.NoError(t, res.Err)
	assert.True(t, res.Truncated)
	assert.Equal(t, 1.0, res.Score)
	assert.Len(t, judged, 24)
	assert.Contains(t, res.Reason, "9951 of the conversation's 10000 messages were left out")
}
