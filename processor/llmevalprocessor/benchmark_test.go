package llmevalprocessor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadata"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// benchBatch is a 100-span batch of a web service with one GenAI span,
// about ten attributes per span.
func benchBatch() (ptrace.Traces, int) {
	b := newBatch()
	res := b.td.ResourceSpans().At(0).Resource().Attributes()
	res.PutStr("service.version", "1.4.0")
	res.PutStr("deployment.environment.name", "production")
	res.PutStr("host.name", "web-7f9c")
	res.PutStr("telemetry.sdk.language", "python")
	tid := randomTraceID()
	genIndex := 0
	for i := range 100 {
		if i == 50 {
			genIndex = b.spans.Len()
			b.generation(tid, "Where is my order 1042? It was due on Monday.",
				"Order 1042 shipped on Tuesday and should arrive by Friday.")
			s := b.spans.At(genIndex)
			s.Attributes().PutStr("gen_ai.provider.name", "openai")
			s.Attributes().PutInt("gen_ai.usage.input_tokens", 412)
			s.Attributes().PutInt("gen_ai.usage.output_tokens", 38)
			continue
		}
		s := b.spans.AppendEmpty()
		s.SetTraceID(tid)
		s.SetSpanID(nextSpanID())
		s.SetName(fmt.Sprintf("GET /api/orders/%d", i))
		s.SetKind(ptrace.SpanKindServer)
		s.SetStartTimestamp(1766400000000000000)
		s.SetEndTimestamp(1766400000050000000)
		a := s.Attributes()
		a.PutStr("http.request.method", "GET")
		a.PutStr("http.route", "/api/orders/{id}")
		a.PutInt("http.response.status_code", 200)
		a.PutStr("url.path", fmt.Sprintf("/api/orders/%d", i))
		a.PutStr("url.scheme", "https")
		a.PutStr("server.address", "orders.internal")
		a.PutInt("server.port", 443)
		a.PutStr("client.address", "10.0.3.17")
		a.PutStr("user_agent.original", "Mozilla/5.0 (X11; Linux x86_64)")
		a.PutStr("network.protocol.version", "1.1")
	}
	return b.td, genIndex
}

func BenchmarkOverhead(b *testing.B) {
	td, _ := benchBatch()
	raw, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		b.Fatal(err)
	}
	decode := func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(raw); err != nil {
				b.Fatal(err)
			}
		}
	}
	decodeNsPerOp := measureNsPerOp(func() {
		if _, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(raw); err != nil {
			b.Fatal(err)
		}
	})

	b.Run("decode", decode)
	b.Run("llm_eval", func(b *testing.B) {
		cfg := testConfig(scoring.Bias)
		cfg.Sampling.Percentage = 10
		cfg.QueueSize = 100000
		benchConsume(b, cfg, []scoring.Scorer{fixedScorer(scoring.Bias, 0.1, scoring.LabelPass)}, nil)
		llmEvalNsPerOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(llmEvalNsPerOp/decodeNsPerOp, "of_decode")
	})
}

// benchConsume runs a traces processor of cfg and scorers and times
// ConsumeTraces on the batch of benchBatch (changed by edit first, when
// set), a new trace id on the GenAI span each time.
func benchConsume(b *testing.B, cfg *Config, scorers []scoring.Scorer, edit func(gen ptrace.Span)) {
	b.Helper()
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
	if edit != nil {
		edit(work.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(genIndex))
	}
	gen := ptrace.NewSpan()
	work.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(genIndex).CopyTo(gen)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		spans := work.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		if spans.Len() < 100 {
			// The sampled GenAI span was taken: put one back, untimed.
			b.StopTimer()
			gen.CopyTo(spans.AppendEmpty())
			b.StartTimer()
		}
		spans.At(genAt(spans, genIndex)).SetTraceID(randomTraceID())
		if err := proc.ConsumeTraces(context.Background(), work); err != nil {
			b.Fatal(err)
		}
	}
}

// genAt is the index of the GenAI span: where it started, or last once it
// was taken and put back.
func genAt(spans ptrace.SpanSlice, genIndex int) int {
	if spans.At(genIndex).Name() == "chat gpt-4o-mini" {
		return genIndex
	}
	return spans.Len() - 1
}

// measureNsPerOp times f over at least 200ms. (testing.Benchmark cannot be
// called from inside a benchmark: it would wait on the benchmark lock.)
func measureNsPerOp(f func()) float64 {
	for range 100 {
		f() // warm up
	}
	n, start := 0, time.Now()
	for time.Since(start) < 200*time.Millisecond {
		for range 100 {
			f()
		}
		n += 100
	}
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}

func BenchmarkJudgeThroughput(b *testing.B) {
	const (
		maxConcurrency = 8
		latency        = 50 * time.Millisecond
	)
	judge := scoringtest.NewServer()
	defer judge.Close()
	judge.SetLatency(latency)

	cfg := testConfig(scoring.PromptAlignment)
	cfg.Judge.ClientConfig.Endpoint = judge.URL
	cfg.Judge.MaxConcurrency = maxConcurrency
	cfg.Scorers[0].IncludeReason = false // one judge call per evaluation
	cfg.Scorers[0].Instructions = []string{"Answer in English"}
	cfg.MaxWait = time.Hour
	cfg.QueueSize = b.N + 1
	sink := new(consumertest.TracesSink)
	_, proc, err := newTracesProcessor(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink, newJudge)
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
		// Distinct answers: the result cache must not spare the judge a call.
		bb.generation(randomTraceID(), "Where is my order?", fmt.Sprintf("It ships in %d days.", i))
		batches[i] = bb.td
	}
	b.ResetTimer()
	start := time.Now()
	for _, td := range batches {
		if err := proc.ConsumeTraces(context.Background(), td); err != nil {
			b.Fatal(err)
		}
	}
	for sink.SpanCount() < b.N {
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()

	evalsPerSec := float64(b.N) / elapsed.Seconds()
	b.ReportMetric(evalsPerSec, "evals/s")
	b.ReportMetric(evalsPerSec/(maxConcurrency/latency.Seconds()), "of_limit")
	if calls := len(judge.Calls()); calls != b.N {
		b.Fatalf("judge calls = %d, want one per evaluation (%d)", calls, b.N)
	}
}
