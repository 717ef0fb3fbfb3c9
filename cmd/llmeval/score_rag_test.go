package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// TestScoreRAGScorers runs answer_relevancy, context_relevance and
// toxicity through llmeval score against the fake judge, with the issue's
// bad inputs: a missing question, no context, a context item that is a
// JSON object, an output in another language.
func TestScoreRAGScorers(t *testing.T) {
	q := "When does the museum open?"
	cases := jsonl(
		map[string]any{"input": q, "output": "The museum opens at nine. Parking is free.", "context": []string{"The museum opens at nine every day.", "The cafe sells cake."}},
		map[string]any{"output": "The museum opens at nine.", "context": []string{"The museum opens at nine."}},
		map[string]any{"input": q, "output": "The museum opens at nine."},
		`{"input": "q", "output": "a", "context": [{"doc": "an object"}]}`,
		map[string]any{"input": "¿Cuándo abre el museo?", "output": "El museo abre a las nueve. Eres un idiota.", "context": []string{"El museo abre a las nueve."}},
	)
	tests := []struct {
		scorer string
		args   []string
		labels []string
		scores []float64 // -1: no score
	}{
		// Statement 2 shares no word with the question; the Spanish
		// statements share "museo".
		{"answer_relevancy", nil, []string{"pass", "not_scorable", "pass", "error", "pass"}, []float64{0.5, -1, 1, -1, 0.5}},
		// Item 1 is high and used, item 2 none: (1 + 0) / 2.
		{"context_relevance", []string{"--penalty-missing", "0.2"}, []string{"pass", "not_scorable", "not_scorable", "error", "pass"}, []float64{0.5, -1, -1, -1, 1}},
		// The second Spanish sentence insults the reader: a toxic opinion
		// fails at the default threshold, 0.
		{"toxicity", nil, []string{"pass", "pass", "pass", "error", "fail"}, []float64{0, 0, 0, -1, 0.5}},
	}
	for _, tt := range tests {
		t.Run(tt.scorer, func(t *testing.T) {
			srv := scoringtest.New(t)
			code, out, stderr := runScoreCLI(t, cases, slices.Concat(judgeFlags(srv, tt.scorer), []string{"--reason-mode", "summary"}, tt.args)...)
			require.Equal(t, exitCasesErrored, code, stderr)
			require.Len(t, out, len(tt.labels))
			for i, r := range out {
				assert.Equal(t, tt.labels[i], r.Label, "line %d: %s", i+1, r.Reason)
				if tt.scores[i] < 0 {
					assert.Nil(t, r.Score, "line %d", i+1)
					continue
				}
				require.NotNil(t, r.Score, "line %d", i+1)
				assert.Equal(t, tt.scores[i], *r.Score, "line %d", i+1)
				assert.NotEmpty(t, r.Reason)
			}
			require.NotNil(t, out[3].Error)
			assert.Contains(t, *out[3].Error, "want a string or a list of strings", "a JSON object context item is a clear error")
		})
	}
}

func TestScoreRAGFlags(t *testing.T) {
	srv := scoringtest.New(t)
	in := jsonl(map[string]any{"input": "Where is the museum?", "output": "The museum is downtown. It has a shop."})
	code, out, stderr := runScoreCLI(t, in, append(judgeFlags(srv, "answer_relevancy"), "--uncertainty-weight", "0.5", "--no-reason")...)
	require.Equal(t, exitOK, code, stderr)
	require.NotNil(t, out[0].Score)
	var steps struct {
		Analyze struct {
			Results []struct{ Result string } `json:"results"`
		} `json:"analyzeStepResult"`
	}
	require.NoError(t, json.Unmarshal(out[0].Steps, &steps))
	require.Len(t, steps.Analyze.Results, 2)

	// In a list, the flags reach the scorer they are for.
	code, out, stderr = runScoreCLI(t, in, append(judgeFlags(srv, "answer_relevancy,toxicity"), "--uncertainty-weight", "0.5", "--no-reason")...)
	require.Equal(t, exitOK, code, stderr)
	require.Len(t, out, 2)

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--scorer", "toxicity", "--uncertainty-weight", "0.5"}, "--uncertainty-weight is for --scorer answer_relevancy only"},
		{[]string{"--scorer", "answer_relevancy", "--uncertainty-weight", "2"}, "uncertainty weight must be between 0 and 1"},
		{[]string{"--scorer", "bias", "--penalty-missing", "0.1"}, "--penalty-* flags are for --scorer context_relevance only"},
		{[]string{"--scorer", "context_relevance", "--penalty-max-missing", "-1"}, "max missing must be between 0 and 1"},
		{[]string{"--scorer", "bias,toxicity", "--uncertainty-weight", "0.5"}, "--uncertainty-weight is for --scorer answer_relevancy only"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, stderr := runScoreCLI(t, in, append(tt.args, "--model", "m", "--judge-endpoint", "http://127.0.0.1:1/v1")...)
			assert.Equal(t, exitUsage, code)
			assert.Contains(t, stderr, tt.want)
		})
	}
}
