package llmevalprocessor

import (
	"fmt"
	"math"

	"github.com/llm-eval/llm_eval/scoring"
)

// ContextPenaltiesConfig tunes context_relevance's deductions; each unset
// value keeps the library's default (scoring.DefaultContextPenalties).
type ContextPenaltiesConfig struct {
	// UnusedHighRelevance is deducted per highly relevant context item the
	// answer did not use (default 0.1).
	UnusedHighRelevance *float64 `mapstructure:"unused_high_relevance"`
	// MissingContextPerItem is deducted per piece of information the
	// answer needed that no item had (default 0.15).
	MissingContextPerItem *float64 `mapstructure:"missing_context_per_item"`
	// MaxMissingContext caps the deduction for missing information
	// (default 0.5).
	MaxMissingContext *float64 `mapstructure:"max_missing_context"`
}

// validateRAG checks the settings only answer_relevancy and
// context_relevance take.
func (sc *ScorerConfig) validateRAG() []error {
	var errs []error
	inUnit := func(v float64) bool { return !math.IsNaN(v) && v >= 0 && v <= 1 }
	if w := sc.UncertaintyWeight; w != nil {
		switch {
		case sc.Name != scoring.AnswerRelevancy:
			errs = append(errs, fmt.Errorf("uncertainty_weight: only answer_relevancy takes it, not %q", sc.Name))
		case !inUnit(*w):
			errs = append(errs, fmt.Errorf("uncertainty_weight: must be between 0 and 1, got %v", *w))
		}
	}
	if p := sc.ContextPenalties; p != nil {
		if sc.Name != scoring.ContextRelevance {
			errs = append(errs, fmt.Errorf("context_penalties: only context_relevance takes them, not %q", sc.Name))
		}
		for _, f := range []struct {
			key string
			v   *float64
		}{
			{"unused_high_relevance", p.UnusedHighRelevance},
			{"missing_context_per_item", p.MissingContextPerItem},
			{"max_missing_context", p.MaxMissingContext},
		} {
			if f.v != nil && !inUnit(*f.v) {
				errs = append(errs, fmt.Errorf("context_penalties::%s: must be between 0 and 1, got %v", f.key, *f.v))
			}
		}
	}
	return errs
}

// contextPenalties returns the library's penalties for this scorer: the
// defaults with the configured values over them, or nil when none is set.
func (sc ScorerConfig) contextPenalties() *scoring.ContextPenalties {
	p := sc.ContextPenalties
	if p == nil {
		return nil
	}
	out := scoring.DefaultContextPenalties()
	for _, f := range []struct {
		dst *float64
		v   *float64
	}{
		{&out.UnusedHighRelevance, p.UnusedHighRelevance},
		{&out.MissingPerItem, p.MissingContextPerItem},
		{&out.MaxMissing, p.MaxMissingContext},
	} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	return &out
}

// ragFingerprint is the part of scorerFingerprint for these settings.
func (sc ScorerConfig) ragFingerprint() string {
	w := "default"
	if sc.UncertaintyWeight != nil {
		w = fmt.Sprint(*sc.UncertaintyWeight)
	}
	p := "default"
	if cp := sc.contextPenalties(); cp != nil {
		p = fmt.Sprintf("%v/%v/%v", cp.UnusedHighRelevance, cp.MissingPerItem, cp.MaxMissing)
	}
	return " uncertainty_weight=" + w + " context_penalties=" + p
}
