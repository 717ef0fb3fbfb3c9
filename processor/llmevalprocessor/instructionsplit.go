package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"errors"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/sysprompt"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/guard"
)

// Bounds of the instruction split cache, one per processor. A deployment
// has few distinct system prompts, and each entry holds at most twice the
// characters of the prompt sent (max_input_chars, 20,000 when 0), so 256
// entries are a few MB for ordinary prompts and about 10 MB of ASCII text
// at worst.
const (
	splitCacheSize = 256
	splitCacheTTL  = time.Hour
)

// judgesSystemInstructions reports whether the scorer judges the span's
// system instructions: prompt_alignment or a criteria scorer showing the
// judge instructions, with no instructions of its own and
// use_system_instructions on.
func (sc *ScorerConfig) judgesSystemInstructions() bool {
	judgesInstructions := sc.Name == scoring.PromptAlignment ||
		(sc.isCriteria() && slices.Contains(sc.Fields, string(scoring.FieldInstructions)))
	return judgesInstructions && len(sc.Instructions) == 0 && sc.UseSystemInstructions
}

// splitsInstructions reports whether the scorer's instructions are split
// before it judges them: split_instructions, true unless set false, where
// it applies.
func (sc *ScorerConfig) splitsInstructions() bool {
	return sc.judgesSystemInstructions() && (sc.SplitInstructions == nil || *sc.SplitInstructions)
}

// validateSplitInstructions rejects split_instructions: true on a scorer
// that has no system instructions to split.
func (sc *ScorerConfig) validateSplitInstructions() error {
	if sc.SplitInstructions == nil || !*sc.SplitInstructions || sc.judgesSystemInstructions() {
		return nil
	}
	return errors.New("split_instructions: only applies to a scorer that judges the span's system instructions " +
		"(prompt_alignment, or a criteria scorer with the instructions field) without instructions of its own and with use_system_instructions: true")
}

// splitInstructions puts the instruction split in front of s when the
// scorer's configuration asks for it. The first scorer that does creates
// the splitter and its cache, which every such scorer of the processor
// shares: it asks the same guarded judge the scorers ask and sends the
// system prompt through the same redaction and max_input_chars.
func (js *judgeSet) splitInstructions(cfg *Config, sc ScorerConfig, s scoring.Scorer, judge scoring.Judge, redact func(string) string, onSplit func(context.Context, sysprompt.Outcome)) (scoring.Scorer, error) {
	if !sc.splitsInstructions() {
		return s, nil
	}
	if js.splits == nil {
		splitter, err := scoring.NewInstructionSplitter(judge, scoring.SplitOptions{MaxInputChars: cfg.MaxInputChars, Redact: redact})
		if err != nil {
			return nil, err
		}
		if js.splits, err = guard.NewSplitCache(splitter, guard.CacheConfig{Size: splitCacheSize, TTL: splitCacheTTL}); err != nil {
			return nil, err
		}
	}
	return sysprompt.Wrap(s, js.splits, onSplit), nil
}

// splitOutcomeAttrs are the attribute sets of instruction_splits that do
// not carry an error.
var splitOutcomeAttrs = struct{ split, noInstructions metric.MeasurementOption }{
	split: metric.WithAttributeSet(attribute.NewSet(attribute.String("outcome", "split"))),
	noInstructions: metric.WithAttributeSet(attribute.NewSet(attribute.String("outcome", "fallback"),
		attribute.String("error_type", sysprompt.NoInstructions))),
}
