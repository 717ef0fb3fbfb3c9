package conversationcompleteness

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

// replies scripts the judge: one intention per verdict, judged with the
// given verdicts.
func replies(verdicts ...string) map[string][]string {
	intentions := []string{}
	vs := []map[string]string{}
	for i, v := range verdicts {
		in := fmt.Sprintf("The user wants thing %d.", i+1)
		intentions = append(intentions, in)
		vs = append(vs, map[string]string{"intention": in, "verdict": v, "reason": fmt.Sprintf("reason %d", i+1)})
	}
	return map[string][]string{
		SchemaIntentions:     {testkit.MustJSON(map[string]any{"intentions": intentions})},
		SchemaVerdicts:       {testkit.MustJSON(map[string]any{"verdicts": vs})},
		scoring.SchemaReason: {`{"reason": "judge reason"}`},
	}
}

// TestFormula checks deepeval's ConversationCompletenessMetric arithmetic
// on scripted verdicts: satisfied intentions / intentions (deepeval counts
// every verdict that is not "no"; ours are only yes or no), 1 when the
// judge finds no intention, 0 in strict mode below 1. deepeval keeps the
// unrounded ratio; ours is rounded to two decimals, as every scorer's.
func TestFormula(t *testing.T) {
	tests := []struct {
		name     string
		verdicts []string
		opts     scoring.Options
		want     testkit.Worked // deepeval's score by hand, and ours
	}{
		{"two of three satisfied", []string{"yes", "no", "yes"}, scoring.Options{}, testkit.Worked{Reference: 2.0 / 3, Score: 0.67, Label: scoring.LabelPass, Calls: 3}},
		{"one of four satisfied", []string{"no", "yes", "no", "no"}, scoring.Options{}, testkit.Worked{Reference: 0.25, Score: 0.25, Label: scoring.LabelFail, Calls: 3}},
		{"half passes the default threshold", []string{"yes", "no"}, scoring.Options{}, testkit.Worked{Reference: 0.5, Score: 0.5, Label: scoring.LabelPass, Calls: 3}},
		{"all satisfied", []string{"yes", "yes"}, scoring.Options{}, testkit.Worked{Reference: 1, Score: 1, Label: scoring.LabelPass, Calls: 3}},
		{"none satisfied", []string{"no"}, scoring.Options{}, testkit.Worked{Reference: 0, Score: 0, Label: scoring.LabelFail, Calls: 3}},
		{"no intention found scores 1", nil, scoring.Options{}, testkit.Worked{Reference: 1, Score: 1, Label: scoring.LabelPass, Calls: 1}},
		{"strict mode below 1 is 0", []string{"yes", "no", "yes"}, scoring.Options{StrictMode: true}, testkit.Worked{Reference: 0, Score: 0, Label: scoring.LabelFail, Calls: 3}},
		{"strict mode at 1", []string{"yes", "yes"}, scoring.Options{StrictMode: true}, testkit.Worked{Reference: 1, Score: 1, Label: scoring.LabelPass, Calls: 3}},
		{"scale 10", []string{"yes", "no", "yes"}, scoring.Options{Scale: 10}, testkit.Worked{Reference: 2.0 / 3, Score: 6.67, Label: scoring.LabelPass, Calls: 3}},
		{"threshold 0.7", []string{"yes", "no", "yes"}, scoring.Options{Threshold: testkit.Ptr(0.7)}, testkit.Worked{Reference: 2.0 / 3, Score: 0.67, Label: scoring.LabelFail, Calls: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := testkit.NewJudge(replies(tt.verdicts...))
			res := testkit.Scorer(t, New, j, tt.opts).Score(context.Background(), scoring.Case{Turns: testkit.Chat(6)})
			testkit.CheckWorked(t, res, tt.opts, tt.want)
			assert.Equal(t, "judge reason" == res.Reason, tt.want.Calls == 3, "reason %q", res.Reason)
		})
	}
}

func TestSteps(t *testing.T) {
	j := testkit.NewJudge(replies("yes", "no"))
	res := testkit.Scorer(t, New, j, scoring.Options{Verbose: true}).Score(context.Background(), scoring.Case{
		Turns:        testkit.Talk("Book a table for two.", "Done: 8 pm at Luigi's."),
		Input:        "And a taxi?",
		Output:       "I can't book taxis.",
		Instructions: []string{"You are a concierge."},
	})
	require.NoError(t, res.Err)
	assert.Equal(t, []string{SchemaIntentions, SchemaVerdicts, scoring.SchemaReason}, j.Schemas())
	assert.Equal(t, Intentions{Intentions: []string{"The user wants thing 1.", "The user wants thing 2."}}, res.Steps.Preprocess)
	assert.Equal(t, Verdicts{Verdicts: []Verdict{
		{Intention: "The user wants thing 1.", Verdict: "yes", Reason: "reason 1"},
		{Intention: "The user wants thing 2.", Verdict: "no", Reason: "reason 2"},
	}}, res.Steps.Analyze)
	// The judge sees the whole conversation, Input and Output as its last
	// two messages, and never the system prompt.
	analyze := j.Requests()[1].Messages[1].Content
	for _, want := range []string{
		`{"turn":1,"role":"user","content":"Book a table for two."}`,
		`{"turn":4,"role":"assistant","content":"I can't book taxis."}`,
		"Return exactly 2 verdicts.",
		"<<<INTENTIONS\n1. \"The user wants thing 1.\"",
	} {
		assert.Contains(t, analyze, want)
	}
	assert.NotContains(t, analyze, "concierge")
	assert.Contains(t, res.Steps.AnalyzePrompt, "CONVERSATION")
	assert.False(t, res.Truncated)
}

func TestNothingToJudge(t *testing.T) {
	tests := []struct {
		name      string
		c         scoring.Case
		wantLabel scoring.Label
		wantScore float64
		wantWords string
	}{
		{"no message", scoring.Case{}, scoring.LabelNotScorable, 0, "no message"},
		{"only blank messages", scoring.Case{Turns: testkit.Talk(" ", "")}, scoring.LabelNotScorable, 0, "no message"},
		{"no user message", scoring.Case{Turns: []scoring.Turn{{Role: scoring.RoleAssistant, Content: "Hello!"}}}, scoring.LabelPass, 1, "no user message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := testkit.NewJudge(replies("no"))
			res := testkit.Scorer(t, New, j, scoring.Options{}).Score(context.Background(), tt.c)
			assert.Equal(t, tt.wantLabel, res.Label)
			assert.Equal(t, tt.wantScore, res.Score)
			assert.Contains(t, res.Reason, tt.wantWords)
			assert.Empty(t, j.Requests(), "no judge call")
		})
	}
}

func TestLongConversationIsBoundedAndSaid(t *testing.T) {
	j := testkit.NewJudge(replies("yes", "no"))
	res := testkit.Scorer(t, New, j, scoring.Options{ReasonMode: scoring.ReasonSummary}).Score(context.Background(), scoring.Case{Turns: testkit.Chat(10000)})
	require.NoError(t, res.Err)
	assert.True(t, res.Truncated)
	assert.Equal(t, 0.5, res.Score)
	assert.Contains(t, res.Reason, "9951 of the conversation's 10000 messages were left out")
	for _, r := range j.Requests() {
		user := r.Messages[1].Content
		assert.Contains(t, user, `{"omitted_turns":9951}`)
		assert.Contains(t, user, `{"turn":10000,"role":"assistant","content":"message 10000"}`)
		assert.Equal(t, scoring.DefaultMaxTurns, strings.Count(user, "\n{"), "lines sent")
	}
}

func TestSummaryReason(t *testing.T) {
	j := testkit.NewJudge(replies("yes", "no", "no"))
	res := testkit.Scorer(t, New, j, scoring.Options{ReasonMode: scoring.ReasonSummary}).Score(context.Background(), scoring.Case{Turns: testkit.Chat(4)})
	assert.Equal(t, "The score is 0.33 because the assistant satisfied 1 of the 3 intentions the user had in the conversation; left unsatisfied: reason 2; reason 3.", res.Reason)
	assert.Equal(t, 2, res.Usage.LLMCalls)
}

func TestBadReplies(t *testing.T) {
	j := testkit.NewJudge(replies("yes", "no"))
	j.Prepend(SchemaVerdicts, testkit.ReplyOf(`{"verdicts": [{"intention": "The user wants thing 1.", "verdict": "partly", "reason": "x"}, {"intention": "The user wants thing 2.", "verdict": "no", "reason": "y"}]}`, "stop"))
	res := testkit.Scorer(t, New, j, scoring.Options{OmitReason: true}).Score(context.Background(), scoring.Case{Turns: testkit.Chat(4)})
	require.NoError(t, res.Err)
	assert.Equal(t, 0.5, res.Score)
	assert.Equal(t, 3, res.Usage.LLMCalls, "one re-ask")

	j = testkit.NewJudge(replies("yes", "no"))
	j.Set(SchemaVerdicts, testkit.ReplyOf(`{"verdicts": [{"verdict": "yes"}]}`, "stop"))
	res = testkit.Scorer(t, New, j, scoring.Options{OmitReason: true}).Score(context.Background(), scoring.Case{Turns: testkit.Chat(4)})
	assert.Equal(t, scoring.LabelError, res.Label)
	assert.ErrorContains(t, res.Err, "expected exactly 2 items")
}

func TestTooManyIntentions(t *testing.T) {
	vs := make([]string, MaxIntentions+5)
	for i := range vs {
		vs[i] = "yes"
	}
	r := replies(vs...)
	r[SchemaVerdicts] = replies(vs[:MaxIntentions]...)[SchemaVerdicts]
	res := testkit.Scorer(t, New, testkit.NewJudge(r), scoring.Options{ReasonMode: scoring.ReasonSummary}).Score(context.Background(), scoring.Case{Turns: testkit.Chat(4)})
	require.NoError(t, res.Err)
	assert.True(t, res.Truncated)
	assert.Equal(t, 5, res.Steps.Preprocess.(Intentions).Dropped)
	assert.Contains(t, res.Reason, "5 more were left out")
}
