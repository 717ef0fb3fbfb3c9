package llmevalprocessor

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/scoring"
)

// BenchmarkConversationOverhead is ConsumeTraces on the batch of
// BenchmarkOverhead (100 spans of a web service, one GenAI span, 10 %
// sampling, bias) with and without a conversation scorer: with one, every
// span's attributes are read for a conversation id. "turn" puts a
// conversation id on the GenAI span, so each batch adds a turn to one open
// conversation (held to max_turns). Compare the ns/op of the three.
func BenchmarkConversationOverhead(b *testing.B) {
	for _, c := range []struct {
		name          string
		conversations bool
		turn          bool
	}{{"off", false, false}, {"on", true, false}, {"on_turn", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			cfg := testConfig(scoring.Bias)
			cfg.Sampling.Percentage = 10
			cfg.QueueSize = 100000
			scorers := []scoring.Scorer{fixedScorer(scoring.Bias, 0.1, scoring.LabelPass)}
			if c.conversations {
				sc := defaultScorerConfig(scoring.ConversationCompleteness)
				sc.Targets = []string{targetConversation}
				cfg.Scorers = append(cfg.Scorers, sc)
				cfg.Conversation.IdleTimeout = time.Hour
				scorers = append(scorers, fixedScorer(scoring.ConversationCompleteness, 1, scoring.LabelPass))
			}
			var edit func(ptrace.Span)
			if c.turn {
				edit = func(gen ptrace.Span) { gen.Attributes().PutStr("gen_ai.conversation.id", "bench-conversation") }
			}
			benchConsume(b, cfg, scorers, edit)
		})
	}
}
