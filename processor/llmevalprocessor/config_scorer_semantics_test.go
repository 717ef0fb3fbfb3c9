package llmevalprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"

	"github.com/llm-eval/llm_eval/scoring"
)

// TestContextChunksAndInstructionSourcesReachTheScorers checks that
// max_context_chunks and prompt_alignment's instruction_sources reach the
// library's options and change the cache fingerprint (issue 36 items 1
// and 6), and which scorers are handed the conversation before the
// request.
func TestContextChunksAndInstructionSourcesReachTheScorers(t *testing.T) {
	cfg := withJudge("http://j/v1")
	require.NoError(t, confmap.NewFromStringMap(map[string]any{
		"max_context_chunks": 7,
		"scorers": []any{
			map[string]any{"name": "hallucination"},
			map[string]any{"name": "prompt_alignment", "instruction_sources": "user"},
			map[string]any{"name": "task_completion"},
		},
	}).Unmarshal(cfg))
	require.NoError(t, confmap.Validate(cfg))
	hall := scorerSpec(cfg, cfg.Scorers[0], nil)
	assert.Equal(t, 7, hall.Options.MaxContextChunks)
	align := scorerSpec(cfg, cfg.Scorers[1], nil)
	assert.Equal(t, scoring.SourcesUser, align.Options.InstructionSources)
	assert.False(t, cfg.Scorers[1].splitsInstructions(), "a scorer judging only the user's instructions splits no system prompt")

	other := withJudge("http://j/v1")
	other.MaxContextChunks = 3
	assert.NotEqual(t, scorerFingerprint(cfg, cfg.Scorers[0]), scorerFingerprint(other, cfg.Scorers[0]))
	assert.NotEqual(t, scorerFingerprint(cfg, cfg.Scorers[1]), scorerFingerprint(cfg, defaultScorerConfig(scoring.PromptAlignment)))

	// The conversation reaches answer_relevancy, task_completion and
	// prompt_alignment (not judging the system instructions alone), and a
	// conversation scorer keeps its conversation; no other scorer gets it.
	c := scoring.Case{Input: "Yes.", Output: "Done.", Turns: []scoring.Turn{{Role: scoring.RoleUser, Content: "Book it?"}}, Context: []string{"doc"}}
	for _, tt := range []struct {
		sc          ScorerConfig
		wantHistory bool
		wantContext bool
	}{
		{cfg.Scorers[0], false, true},
		{cfg.Scorers[1], true, false},
		{cfg.Scorers[2], true, false},
		{defaultScorerConfig(scoring.Bias), false, false},
		{defaultScorerConfig(scoring.AnswerRelevancy), true, false},
		{defaultScorerConfig(scoring.KnowledgeRetention), true, false},
		{func() ScorerConfig {
			s := defaultScorerConfig(scoring.PromptAlignment)
			s.InstructionSources = "system"
			return s
		}(), false, false},
	} {
		var got scoring.Case
		unsentFree(caseKeeper{&got}, tt.sc).Score(context.Background(), c)
		assert.Equal(t, tt.wantHistory, got.Turns != nil, "%s %s: history", tt.sc.Name, tt.sc.InstructionSources)
		assert.Equal(t, tt.wantContext, got.Context != nil, "%s: context", tt.sc.Name)
	}
}

// caseKeeper is a scorer that keeps the case it was handed.
type caseKeeper struct{ c *scoring.Case }

func (r caseKeeper) Name() string { return "recorder" }

func (r caseKeeper) Score(_ context.Context, c scoring.Case) scoring.Result {
	*r.c = c
	return scoring.Result{Label: scoring.LabelPass}
}
