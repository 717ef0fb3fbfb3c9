package scoring

import (
	"fmt"
	"math"
)

// DefaultUncertaintyWeight is what an "unsure" statement counts for in
// answer_relevancy unless Options.UncertaintyWeight says otherwise
// (Mastra's default).
const DefaultUncertaintyWeight = 0.3

// ContextPenalties are the deductions context_relevance makes from the
// mean relevance of the context items, before scaling. Each lies in [0, 1].
type ContextPenalties struct {
	// UnusedHighRelevance is deducted for each high-relevance item the
	// response did not use.
	UnusedHighRelevance float64 `json:"unused_high_relevance"`
	// MissingPerItem is deducted for each piece of information the answer
	// needed that no item had.
	MissingPerItem float64 `json:"missing_per_item"`
	// MaxMissing caps the total deduction for missing information.
	MaxMissing float64 `json:"max_missing"`
}

// DefaultContextPenalties returns Mastra's defaults: 0.1 per unused
// high-relevance item, 0.15 per missing piece, at most 0.5 for missing
// information.
func DefaultContextPenalties() ContextPenalties {
	return ContextPenalties{UnusedHighRelevance: 0.1, MissingPerItem: 0.15, MaxMissing: 0.5}
}

// Limits on what one evaluation sends to the judge or keeps from it. An
// evaluation that reaches one is scored on what was kept and has
// Result.Truncated set.
const (
	// MaxStatements bounds the statements answer_relevancy judges and the
	// verdicts toxicity counts: the first MaxStatements are kept.
	MaxStatements = 100
	// MaxContextItems bounds the context items context_relevance judges in
	// its one call: the first MaxContextItems, in retrieval order.
	MaxContextItems = 50
)

// checkRAGOptions validates the options only answer_relevancy and
// context_relevance read.
func checkRAGOptions(opts Options) error {
	inUnit := func(v float64) bool { return !math.IsNaN(v) && v >= 0 && v <= 1 }
	if w := opts.UncertaintyWeight; w != nil && !inUnit(*w) {
		return fmt.Errorf("uncertainty weight must be between 0 and 1, got %v", *w)
	}
	if p := opts.ContextPenalties; p != nil {
		for _, f := range []struct {
			name string
			v    float64
		}{
			{"unused high relevance", p.UnusedHighRelevance},
			{"missing per item", p.MissingPerItem},
			{"max missing", p.MaxMissing},
		} {
			if !inUnit(f.v) {
				return fmt.Errorf("context penalty %s must be between 0 and 1, got %v", f.name, f.v)
			}
		}
	}
	return nil
}

// uncertaintyWeight returns the configured or default weight of "unsure".
func (o Options) uncertaintyWeight() float64 {
	if o.UncertaintyWeight != nil {
		return *o.UncertaintyWeight
	}
	return DefaultUncertaintyWeight
}

// contextPenalties returns the configured or default penalties.
func (o Options) contextPenalties() ContextPenalties {
	if o.ContextPenalties != nil {
		return *o.ContextPenalties
	}
	return DefaultContextPenalties()
}

// setFraction scores raw, a share of the scale that is not a plain count
// ratio (answer_relevancy's weighted count, context_relevance's penalised
// mean): rounded to two decimals as Mastra rounds, then labelled. Strict
// mode decides on the unrounded value, so 0.999 of the scale, which rounds
// to the scale, is still not perfect.
func (e *evaluation) setFraction(raw float64) {
	scale := e.s.opts.Scale
	if !e.s.opts.StrictMode {
		e.setScore(roundScore(raw))
		return
	}
	perfect := raw >= scale
	if e.s.spec.lowerIsBetter {
		perfect = raw <= 0
	}
	score := 0.0
	if perfect != e.s.spec.lowerIsBetter {
		score = scale
	}
	e.setScore(score)
}
