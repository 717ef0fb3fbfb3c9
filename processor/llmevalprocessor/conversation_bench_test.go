package llmevalprocessor

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadata"
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
			build := func(context.Context, *Config, component.Host, component.TelemetrySettings, judgeHooks) (judgeSet, error) {
				return judgeSet{scorers: scorers}, nil
			}
			_, proc, err := newTracesProcessor(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop(), build)
			if err != nil {
				b.Fatal(err)
			}
			if err := proc.Start(context.Background(), componenttest.NewNopHost()); err != nil {
				b.Fatal(err)
			}
			defer func() { _ = proc.Shutdown(context.Background()) }()
			work, genIndex := benchBatch()
			if c.turn {
				work.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(genIndex).Attributes().PutStr("gen_ai.conversation.id", "bench-conversation")
			}
			saved := ptrace.NewSpan()
			work.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(genIndex).CopyTo(saved)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				spans := work.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
				if spans.Len() < 100 {
					b.StopTimer()
					saved.CopyTo(spans.AppendEmpty())
					b.StartTimer()
				}
				spans.At(genAt(spans, genIndex)).SetTraceID(randomTraceID())
				if err := proc.ConsumeTraces(context.Background(), work); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
