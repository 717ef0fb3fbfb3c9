package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring/hallucination"
	"github.com/llm-eval/llm_eval/scoring/promptalignment"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
	"github.com/llm-eval/llm_eval/scoring/taskcompletion"
)

// TestScoreConversationAndScorerSettings checks what llmeval score adds
// for issue 36: a case's "turns" (the conversation before its request) reach
// task_completion and prompt_alignment, --instruction-sources says whose
// instructions prompt_alignment judges, and --max-context-chunks bounds
// how much of a long context hallucination judges.
func TestScoreConversationAndScorerSettings(t *testing.T) {
	turns := []map[string]string{{"role": "user", "content": "Find me a flight to Lisbon."}, {"role": "assistant", "content": "TAP at 9:40. Book it?"}}
	t.Run("the turns before the request reach task_completion", func(t *testing.T) {
		srv := scoringtest.New(t)
		in := jsonl(map[string]any{"input": "Yes, go ahead.", "output": "Booked.", "turns": turns,
			"trajectory": map[string]any{"steps": []any{map[string]any{"kind": "generation", "output": "Booked."}}}})
		code, out, stderr := runScoreCLI(t, in, append(judgeFlags(srv, "task_completion"), "--no-reason")...)
		require.Equal(t, 0, code, stderr)
		require.Len(t, out, 1)
		var sawHistory bool
		for _, c := range srv.Calls() {
			if c.Step == taskcompletion.SchemaTask {
				sawHistory = strings.Contains(c.Text(), `{"turn":2,"role":"assistant","content":"TAP at 9:40. Book it?"}`)
			}
		}
		assert.True(t, sawHistory, "the requirements are worked out with the conversation")
	})
	t.Run("instruction sources", func(t *testing.T) {
		for _, tt := range []struct {
			sources   string
			wantLabel string
			wantUser  bool
		}{
			{"", "pass", true},
			{"user", "pass", true},
			{"system", "not_scorable", false},
		} {
			srv := scoringtest.New(t)
			in := jsonl(map[string]any{"input": "Say hello in French.", "output": "Bonjour.", "turns": turns})
			args := append(judgeFlags(srv, "prompt_alignment"), "--no-reason")
			if tt.sources != "" {
				args = append(args, "--instruction-sources", tt.sources)
			}
			code, out, stderr := runScoreCLI(t, in, args...)
			require.Equal(t, 0, code, stderr)
			require.Len(t, out, 1)
			assert.Equal(t, tt.wantLabel, out[0].Label, "%q: %s", tt.sources, out[0].Reason)
			asked := slices.ContainsFunc(srv.Calls(), func(c scoringtest.Call) bool { return c.Step == promptalignment.SchemaVerdicts })
			assert.Equal(t, tt.wantUser, asked, "%q", tt.sources)
		}
		code, _, stderr := runScoreCLI(t, "", append(judgeFlags(scoringtest.New(t), "prompt_alignment"), "--instruction-sources", "assistant")...)
		assert.Equal(t, exitUsage, code)
		assert.Contains(t, stderr, "--instruction-sources")
		code, _, stderr = runScoreCLI(t, "", append(judgeFlags(scoringtest.New(t), "bias"), "--instruction-sources", "user")...)
		assert.Equal(t, exitUsage, code)
		assert.Contains(t, stderr, "--instruction-sources is for --scorer prompt_alignment only")
	})
	t.Run("context chunks", func(t *testing.T) {
		srv := scoringtest.New(t)
		doc := strings.Repeat("The museum opens at nine. ", 8) // 208 characters
		in := jsonl(map[string]any{"input": "When does it open?", "output": "It opens at 10:30 every day.", "context": []string{doc, doc + "Again.", doc + "Once more."}})
		code, out, stderr := runScoreCLI(t, in, append(judgeFlags(srv, "hallucination"), "--no-reason", "--max-input-chars", "250", "--max-context-chunks", "2")...)
		require.Equal(t, 0, code, stderr)
		require.Len(t, out, 1)
		chunks := 0
		for _, c := range srv.Calls() {
			if c.Step == hallucination.SchemaVerdicts {
				chunks++
			}
		}
		assert.Equal(t, 2, chunks, "at most --max-context-chunks requests for the context")
		assert.True(t, out[0].Truncated, "the rest of the context was not judged")
		code, _, stderr = runScoreCLI(t, "", append(judgeFlags(scoringtest.New(t), "hallucination"), "--max-context-chunks", "0")...)
		assert.Equal(t, exitUsage, code)
		assert.Contains(t, stderr, "--max-context-chunks")
	})
}
