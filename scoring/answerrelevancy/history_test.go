package answerrelevancy

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
)

// TestFollowUpReadsHistory: on a follow-up turn the judge of relevance
// sees the conversation before the question, bounded to its last
// messages; the statement split never does.
func TestFollowUpReadsHistory(t *testing.T) {
	j := testkit.NewJudge(relevancyReplies("yes"))
	turns := append(testkit.Chat(20), testkit.Talk("What's the weather like in Lisbon in summer?", "Hot and dry, around 28°C.")...)
	res := testkit.Scorer(t, New, j, scoring.Options{HistoryTurns: 4, OmitReason: true}).Score(context.Background(), scoring.Case{
		Turns: turns, Input: "And in winter?", Output: "Mild and rainy, around 15°C.",
	})
	require.NoError(t, res.Err)
	assert.False(t, res.Truncated, "history left out is not a cut")
	reqs := j.Requests()
	require.Len(t, reqs, 2)
	assert.NotContains(t, reqs[0].Messages[1].Content, "HISTORY", "the statements step sees the output only")
	analyze := reqs[1].Messages[1].Content
	assert.Contains(t, analyze, "<<<HISTORY\n"+
		`{"omitted_turns":19}`+"\n"+
		`{"turn":20,"role":"assistant","content":"message 20"}`+"\n"+
		`{"turn":21,"role":"user","content":"What's the weather like in Lisbon in summer?"}`+"\n"+
		`{"turn":22,"role":"assistant","content":"Hot and dry, around 28°C."}`+"\n"+
		"HISTORY>>>\n\n<<<INPUT\n\"And in winter?\"\nINPUT>>>")
	assert.Contains(t, analyze, "Use it only to understand what the question refers to")
}

func TestNoHistoryNoBlock(t *testing.T) {
	for _, turns := range [][]scoring.Turn{nil, testkit.Talk(" ", "")} {
		j := testkit.NewJudge(relevancyReplies("yes"))
		res := testkit.Scorer(t, New, j, scoring.Options{OmitReason: true}).Score(context.Background(), scoring.Case{Turns: turns, Input: "q", Output: "a"})
		require.NoError(t, res.Err)
		assert.False(t, strings.Contains(j.Requests()[1].Messages[1].Content, "HISTORY"))
	}
}

func TestLongHistoryTextIsCut(t *testing.T) {
	j := testkit.NewJudge(relevancyReplies("yes"))
	res := testkit.Scorer(t, New, j, scoring.Options{MaxInputChars: 200, OmitReason: true}).Score(context.Background(), scoring.Case{
		Turns: testkit.Talk(strings.Repeat("long ", 200), "ok"), Input: "q", Output: "a",
	})
	require.NoError(t, res.Err)
	assert.True(t, res.Truncated, "a history text cut to max_input_chars is a cut the judge sees")
	assert.Contains(t, j.Requests()[1].Messages[1].Content, scoring.TruncationMarker)
}
