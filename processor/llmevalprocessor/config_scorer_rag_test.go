package llmevalprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/scorers"
)

// TestRAGScorerKeys checks that answer_relevancy's uncertainty_weight and
// context_relevance's context_penalties decode, reach the library's
// options (unset penalties keep their defaults), change the cache
// fingerprint, and are refused out of range or on another scorer.
func TestRAGScorerKeys(t *testing.T) {
	decode := func(t *testing.T, scorers ...map[string]any) (*Config, error) {
		list := make([]any, len(scorers))
		for i, s := range scorers {
			list[i] = s
		}
		cfg := withJudge("http://j/v1")
		if err := confmap.NewFromStringMap(map[string]any{"scorers": list}).Unmarshal(cfg); err != nil {
			return nil, err
		}
		return cfg, confmap.Validate(cfg)
	}
	t.Run("decoded and mapped", func(t *testing.T) {
		cfg, err := decode(t,
			map[string]any{"name": "answer_relevancy", "uncertainty_weight": 0.5},
			map[string]any{"name": "context_relevance", "context_penalties": map[string]any{"unused_high_relevance": 0.2}},
			map[string]any{"name": "toxicity", "threshold": 0.1})
		require.NoError(t, err)
		ar := scorerOptions(cfg.Scorers[0])
		require.NotNil(t, ar.UncertaintyWeight)
		assert.Equal(t, 0.5, *ar.UncertaintyWeight)
		assert.Nil(t, ar.ContextPenalties)
		cr := scorerOptions(cfg.Scorers[1])
		assert.Equal(t, &scoring.ContextPenalties{UnusedHighRelevance: 0.2, MissingPerItem: 0.15, MaxMissing: 0.5}, cr.ContextPenalties)
		assert.NotEqual(t, scorerFingerprint(cfg, cfg.Scorers[1]), scorerFingerprint(cfg, defaultScorerConfig(scoring.ContextRelevance)))
		assert.NotEqual(t, scorerFingerprint(cfg, cfg.Scorers[0]), scorerFingerprint(cfg, defaultScorerConfig(scoring.AnswerRelevancy)))
		for _, sc := range cfg.Scorers {
			_, err := scorers.New(sc.Name, fakeJudgeForOptions{}, scorerOptions(sc))
			require.NoError(t, err, sc.Name)
		}
	})
	tests := []struct {
		name    string
		scorer  map[string]any
		wantErr string
	}{
		{"weight out of range", map[string]any{"name": "answer_relevancy", "uncertainty_weight": 1.2}, "uncertainty_weight: must be between 0 and 1"},
		{"weight on another scorer", map[string]any{"name": "toxicity", "uncertainty_weight": 0.3}, "uncertainty_weight: only answer_relevancy"},
		{"penalty out of range", map[string]any{"name": "context_relevance", "context_penalties": map[string]any{"max_missing_context": -1}}, "context_penalties::max_missing_context"},
		{"penalties on another scorer", map[string]any{"name": "hallucination", "context_penalties": map[string]any{"unused_high_relevance": 0.1}}, "context_penalties: only context_relevance"},
		{"typo in a penalty key", map[string]any{"name": "context_relevance", "context_penalties": map[string]any{"unused_high": 0.1}}, "unused_high"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decode(t, tt.scorer)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

// fakeJudgeForOptions is a judge that is never called: the test only
// builds scorers.
type fakeJudgeForOptions struct{ scoring.Judge }
