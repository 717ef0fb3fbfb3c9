package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// TestScoreConversationScorers runs the four conversation scorers on the
// README's conversation example with the offline demo judge, whose
// heuristics judge the second reply off the point, forgetful of the city
// and leaving the museum request unserved.
func TestScoreConversationScorers(t *testing.T) {
	srv := scoringtest.New(t)
	noSystem := `{"turns": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]}`
	code, out, stderr := runScoreCLI(t, readmeExample(t, "conversation")+"\n"+noSystem+"\n",
		append(judgeFlags(srv, "conversation_completeness,knowledge_retention,role_adherence,conversation_relevancy"), "--reason-mode", "summary")...)
	require.Equal(t, exitOK, code, stderr)
	require.Len(t, out, 8)
	want := []struct {
		scorer string
		score  float64
	}{{"conversation_completeness", 0.5}, {"knowledge_retention", 0.5}, {"role_adherence", 1}, {"conversation_relevancy", 0.5}}
	for i, w := range want {
		r := out[i]
		assert.Equal(t, w.scorer, r.Scorer)
		require.NotNil(t, r.Score, "%s: %s %s", r.Scorer, r.Label, r.Reason)
		assert.Equal(t, w.score, *r.Score, "%s: %s", r.Scorer, r.Reason)
		assert.Equal(t, "pass", r.Label, r.Scorer)
		assert.Equal(t, "c1", r.Metadata["conversation"])
	}
	assert.Equal(t, "not_scorable", out[6].Label, "role_adherence without a system prompt")
	assert.Contains(t, out[6].Reason, "no system prompt")
	roleCalls := 0
	for _, c := range srv.Calls() {
		if strings.Contains(c.Text(), "<<<SYSTEM\n") {
			roleCalls++
		}
	}
	assert.Equal(t, 1, roleCalls, "no role_adherence call without a system prompt")
}

func TestScoreConversationBadLines(t *testing.T) {
	tests := []struct {
		name, line, wantErr string
	}{
		{"a system turn", `{"turns": [{"role": "system", "content": "Be nice."}]}`, `unknown role "system"`},
		{"a misspelled turn field", `{"turns": [{"role": "user", "text": "Hi"}]}`, `unknown field "text"`},
		{"an omitted turn without a count", `{"turns": [{"role": "omitted"}]}`, "needs a positive count"},
		// Turn.Cut is the processor's, for a message its reader cut; a
		// line's message cannot claim a cut (its marker becomes "[...]").
		{"a turn claiming a cut", `{"turns": [{"role": "user", "content": "Hi", "cut": true}]}`, `unknown field "cut"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := scoringtest.New(t)
			code, out, stderr := runScoreCLI(t, tt.line+"\n", judgeFlags(srv, "conversation_relevancy")...)
			assert.Equal(t, exitCasesErrored, code, stderr)
			require.Len(t, out, 1)
			require.NotNil(t, out[0].Error)
			assert.Contains(t, *out[0].Error, tt.wantErr)
			assert.Equal(t, "invalid_case", *out[0].ErrorType)
		})
	}
}

// TestScoreLongConversation: a line of 10,000 messages is scored on its
// first and last messages, and says so.
func TestScoreLongConversation(t *testing.T) {
	turns := make([]map[string]string, 10000)
	for i := range turns {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		turns[i] = map[string]string{"role": role, "content": fmt.Sprintf("message %d about trains", i+1)}
	}
	line, err := json.Marshal(map[string]any{"turns": turns})
	require.NoError(t, err)
	srv := scoringtest.New(t)
	code, out, stderr := runScoreCLI(t, string(line)+"\n", append(judgeFlags(srv, "conversation_relevancy"), "--max-turns", "20", "--reason-mode", "summary")...)
	require.Equal(t, exitOK, code, stderr)
	require.Len(t, out, 1)
	assert.True(t, out[0].Truncated)
	assert.Contains(t, out[0].Reason, "9981 of the conversation's 10000 messages were left out")
	require.Len(t, srv.Calls(), 1)
	assert.Equal(t, 1, strings.Count(srv.Calls()[0].Text(), `"omitted_turns":9981`))
}

func TestScoreConversationFlags(t *testing.T) {
	srv := scoringtest.New(t)
	for _, args := range [][]string{{"--max-turns", "1"}, {"--conversation-window", "0"}, {"--history-turns", "0"}} {
		code, _, stderr := runScoreCLI(t, "", append(judgeFlags(srv, "conversation_relevancy"), args...)...)
		assert.Equal(t, exitUsage, code, stderr)
		assert.Contains(t, stderr, args[0])
	}
}

// TestScoreFollowUpHistory: answer_relevancy on a case with turns reads
// them as the conversation before the question.
func TestScoreFollowUpHistory(t *testing.T) {
	line := `{"turns": [{"role": "user", "content": "What's the weather in Lisbon in summer?"}, {"role": "assistant", "content": "Hot and dry."}],` +
		` "input": "And in winter?", "output": "Mild and rainy."}`
	srv := scoringtest.New(t)
	code, out, stderr := runScoreCLI(t, line+"\n", append(judgeFlags(srv, "answer_relevancy"), "--history-turns", "1", "--reason-mode", "summary")...)
	require.Equal(t, exitOK, code, stderr)
	require.Len(t, out, 1)
	seen := false
	for _, c := range srv.Calls() {
		seen = seen || strings.Contains(c.Text(), "<<<HISTORY\n{\"omitted_turns\":1}\n{\"turn\":2,\"role\":\"assistant\",\"content\":\"Hot and dry.\"}\nHISTORY>>>")
	}
	assert.True(t, seen, "the last message of the history reaches the judge")
}
