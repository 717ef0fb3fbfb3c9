package llmevalprocessor

import (
	"context"
	"fmt"
	"runtime/pprof"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadata"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// BenchmarkEvaluationCPU runs one evaluated generation at a time end to end
// through the processor: the three judge scorers against the fake judge
// over HTTP on loopback, with the judge client the processor builds
// (confighttp) and its telemetry on an SDK meter provider. One op is one
// evaluated generation.
//
// The fake judge runs in this process too. Its goroutines carry the pprof
// label side=judge, so a CPU profile separates the collector's share:
//
//	go test -run '^$' -bench EvaluationCPU -cpuprofile cpu.out ./processor/llmevalprocessor/
//	go tool pprof -tagignore side=judge -top cpu.out
//
// Sub-benchmarks run the scorers with each reason_mode: llm asks the judge
// for the reason (8 calls per generation here), summary builds it from the
// verdicts (5 calls).
func BenchmarkEvaluationCPU(b *testing.B) {
	for _, mode := range []scoring.ReasonMode{scoring.ReasonLLM, scoring.ReasonSummary} {
		b.Run("reason_mode="+string(mode), func(b *testing.B) { benchmarkEvaluationCPU(b, mode) })
	}
}

func benchmarkEvaluationCPU(b *testing.B, mode scoring.ReasonMode) {
	var judge *scoringtest.Server
	// Goroutines inherit labels from the goroutine that starts them: the
	// server's accept loop and every connection it serves are labelled.
	pprof.Do(context.Background(), pprof.Labels("side", "judge"), func(context.Context) {
		judge = scoringtest.NewServer()
	})
	defer judge.Close()

	cfg := testConfig(scoring.Bias, scoring.Hallucination, scoring.PromptAlignment)
	cfg.Judge.ClientConfig.Endpoint = judge.URL
	cfg.MaxWait = time.Minute
	cfg.QueueSize = 16
	for i := range cfg.Scorers {
		cfg.Scorers[i].ReasonMode = string(mode)
	}

	set := processortest.NewNopSettings(metadata.Type)
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	set.MeterProvider = mp
	// The next consumer hands each span over a channel: no polling, so
	// waiting costs no CPU.
	out := make(chan ptrace.Traces, 1)
	next, err := consumer.NewTraces(func(_ context.Context, td ptrace.Traces) error {
		out <- td
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	_, proc, err := newTracesProcessor(context.Background(), set, cfg, next, newJudge)
	if err != nil {
		b.Fatal(err)
	}
	if err := proc.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = proc.Shutdown(context.Background()) }()

	batches := make([]ptrace.Traces, b.N)
	for i := range batches {
		bb := newBatch()
		loadGeneration(bb, i)
		batches[i] = bb.td
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i, td := range batches {
		if err := proc.ConsumeTraces(context.Background(), td); err != nil {
			b.Fatal(err)
		}
		span := (<-out).ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
		if n := len(evaluationEvents(span)); n != 3 {
			b.Fatalf("generation %d left with %d evaluation events, want 3", i, n)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(len(judge.Calls()))/float64(b.N), "calls/op")
}

// loadGeneration adds the chat span that test/load sends: system
// instructions, a question, a tool call and its result as context, and an
// answer, all unique per seq so that the result cache never hits.
func loadGeneration(bb *batchBuilder, seq int) {
	s := bb.spans.AppendEmpty()
	s.SetTraceID(randomTraceID())
	s.SetSpanID(nextSpanID())
	s.SetName("chat gpt-4o-mini")
	s.SetKind(ptrace.SpanKindClient)
	a := s.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("gen_ai.provider.name", "openai")
	a.PutStr("gen_ai.request.model", "gpt-4o-mini")
	a.PutStr("gen_ai.response.id", fmt.Sprintf("chatcmpl-load-%d", seq))
	a.PutInt("gen_ai.usage.input_tokens", 412)
	a.PutInt("gen_ai.usage.output_tokens", 96)
	a.PutStr("gen_ai.system_instructions", `[{"type":"text","content":"You are the checkout assistant. Answer only from the order data. Keep answers under 80 words."}]`)
	a.PutStr("gen_ai.input.messages", fmt.Sprintf(`[{"role":"user","parts":[{"type":"text","content":"When will order %d arrive?"}]},`+
		`{"role":"assistant","parts":[{"type":"tool_call","id":"call_1","name":"get_order","arguments":{"id":%d}}]},`+
		`{"role":"tool","parts":[{"type":"tool_call_response","id":"call_1","response":"Order %d shipped on 2026-11-18 by DHL, expected delivery 2026-11-21."}]}]`, seq, seq, seq))
	a.PutStr("gen_ai.output.messages", fmt.Sprintf(`[{"role":"assistant","parts":[{"type":"text","content":"Order %d shipped on November 18 with DHL and should arrive on November 21."}],"finish_reason":"stop"}]`, seq))
}
