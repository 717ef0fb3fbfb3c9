package llmevalprocessor

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/scoring"
)

// BenchmarkCrossSignal is the cost of one call evaluated once across
// signals: a span without content through the traces side and its
// per-message log events through the logs side of one component, with an
// instant fake scorer. joined (cross_signal_wait on, the default) waits
// for both halves and evaluates once; separate (cross_signal_wait 0) is
// what the component did before: the span is marked not scorable at once
// and the events are evaluated on their own, two results for one call.
// It reports ns/op and allocations per call, and the evaluations made per
// call.
func BenchmarkCrossSignal(b *testing.B) {
	for _, bc := range []struct {
		name string
		wait time.Duration
	}{{"joined", time.Minute}, {"separate", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			var evaluations atomic.Int64
			scorer := &fakeScorer{name: scoring.Bias, fn: func(context.Context, scoring.Case) scoring.Result {
				evaluations.Add(1)
				return scoring.Result{Label: scoring.LabelPass}
			}}
			cfg := crossSignalConfig(bc.wait)
			cfg.MaxWait = 5 * time.Minute
			cfg.QueueSize = 10_000
			h := (&bothHarness{}).start(b, cfg, scorer)
			calls := make([]call, b.N)
			for i := range calls {
				calls[i] = newCall()
			}
			spans, events := make([]ptrace.Traces, b.N), make([]plog.Logs, b.N)
			for i, c := range calls {
				spans[i], events[i] = c.spanBatch(false), c.eventsBatch("content")
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range calls {
				h.consumeSpan(spans[i])
				h.consumeEvents(events[i])
			}
			// Both ways, every span has left and every call's events have
			// their result record.
			require.Eventually(b, func() bool {
				return h.spans.SpanCount() == b.N && resultRecords(h.recs.AllLogs()) == b.N
			}, time.Minute, time.Millisecond)
			b.StopTimer()
			h.shutdown()
			b.ReportMetric(float64(evaluations.Load())/float64(b.N), "evaluations/call")
		})
	}
}

func resultRecords(batches []plog.Logs) int {
	n := 0
	for _, v := range resultsBySpan(batches) {
		n += len(v)
	}
	return n
}

// BenchmarkCrossSignalHeld measures the heap held by a span without
// content waiting for its log events (cross_signal_wait): the bytes one
// waiting half costs, its span and bookkeeping included.
func BenchmarkCrossSignalHeld(b *testing.B) {
	cfg := crossSignalConfig(time.Hour)
	cfg.MaxWait = 4 * time.Hour
	cfg.QueueSize = max(b.N, 1)
	h := (&bothHarness{}).start(b, cfg, fixedScorer(scoring.Bias, 0, scoring.LabelPass))
	batches := make([]ptrace.Traces, b.N)
	for i := range batches {
		batches[i] = newCall().spanBatch(false)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for _, td := range batches {
		h.consumeSpan(td)
	}
	b.StopTimer()
	batches = nil
	runtime.GC()
	runtime.ReadMemStats(&after)
	require.Zero(b, h.spans.SpanCount(), "every span waits")
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(b.N), "heap-B/waiting-span")
	h.shutdown()
}
