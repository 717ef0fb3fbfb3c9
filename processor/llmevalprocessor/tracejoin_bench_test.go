package llmevalprocessor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadata"
	"github.com/llm-eval/llm_eval/scoring"
)

// ragTraceBatch is one agent trace of the semconv fixture (agent root,
// retrieval, tool, chat) plus 15 HTTP spans, under a fresh trace id.
func ragTraceBatch(b *testing.B, ctxTD, genTD ptrace.Traces) ptrace.Traces {
	td := ptrace.NewTraces()
	ctxTD.ResourceSpans().CopyTo(td.ResourceSpans())
	genTD.ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	tid := randomTraceID()
	http := td.ResourceSpans().At(0).ScopeSpans().AppendEmpty().Spans()
	for i := range 15 {
		s := http.AppendEmpty()
		s.SetSpanID(nextSpanID())
		s.SetName(fmt.Sprintf("GET /api/orders/%d", i))
		s.Attributes().PutStr("http.request.method", "GET")
		s.Attributes().PutStr("http.route", "/api/orders/{id}")
		s.Attributes().PutInt("http.response.status_code", 200)
	}
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				s.SetTraceID(tid)
			}
		}
	}
	return td
}

// BenchmarkTraceContextIndex measures the processor per span on a RAG mix
// (an agent trace of about 20 spans per batch, 10% of traces sampled) with
// the trace context index on and off.
func BenchmarkTraceContextIndex(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "index_off"
		if on {
			name = "index_on"
		}
		b.Run(name, func(b *testing.B) {
			cfg := testConfig(scoring.Hallucination)
			cfg.Sampling.Percentage = 10
			cfg.QueueSize = 100000
			cfg.TraceContext.ContextWait = 0
			build := func(context.Context, *Config, component.Host, component.TelemetrySettings, judgeHooks) (judgeSet, error) {
				return judgeSet{scorers: []scoring.Scorer{fixedScorer(scoring.Hallucination, 0.1, scoring.LabelPass)}}, nil
			}
			p, proc, err := newTracesProcessor(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop(), build)
			if err != nil {
				b.Fatal(err)
			}
			if !on {
				p.join = nil
			}
			if err := proc.Start(context.Background(), componenttest.NewNopHost()); err != nil {
				b.Fatal(err)
			}
			defer func() { _ = proc.Shutdown(context.Background()) }()

			load := func(name string) ptrace.Traces {
				td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(mustRead(b, name))
				if err != nil {
					b.Fatal(err)
				}
				return td
			}
			ctxTD := load("semconv_agent_context.json")
			genTD := load("semconv_agent_generation.json")
			spans := ragTraceBatch(b, ctxTD, cloneTraces(genTD)).SpanCount()
			consumeBatches(b, proc, 1000, func() ptrace.Traces { return ragTraceBatch(b, ctxTD, cloneTraces(genTD)) })
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spans), "ns/span")
		})
	}
}

// consumeBatches times ConsumeTraces on a fresh batch per iteration: it
// builds pool batches up front (and again, outside the timer, when they are
// used up), since a batch is consumed (its sampled spans moved out) once.
func consumeBatches(b *testing.B, proc processor.Traces, pool int, batch func() ptrace.Traces) {
	batches := make([]ptrace.Traces, pool)
	fill := func() {
		for i := range batches {
			batches[i] = batch()
		}
	}
	fill()
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if i == pool {
			b.StopTimer()
			fill()
			i = 0
			b.StartTimer()
		}
		if err := proc.ConsumeTraces(context.Background(), batches[i]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func cloneTraces(td ptrace.Traces) ptrace.Traces {
	out := ptrace.NewTraces()
	td.CopyTo(out)
	return out
}

func mustRead(b *testing.B, name string) []byte {
	b.Helper()
	raw, err := os.ReadFile(filepath.Join(otlpTestdata, "tracecontext", name))
	if err != nil {
		b.Fatal(err)
	}
	return raw
}
