package llmevalprocessor

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadata"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// BenchmarkStorage measures what storage costs at 10 % sampling: one op is
// a batch of ten generation spans of which exactly one is in the sample
// (sampling.percentage 10), sent through the processor end to end with the
// three judge scorers (reason_mode summary) against the fake judge over
// HTTP on loopback; the op ends when all ten spans have come out. With
// storage=on the processor writes to file_storage in a temporary
// directory.
//
// Reported: cpu-ns/span, the process's CPU time (user + system, from
// getrusage) per span, which includes the fake judge running in this
// process; stored-B/held-span, the bytes of records written per sampled
// span (the item and the results recorded while others were pending); and
// file-B, the size of the bbolt file at the end. BENCHMARKS.md has the
// figures and how they were taken (interleaved on/off pairs).
//
// storage=fsync is storage=on with file_storage's fsync: true, which
// examples/collector.yaml sets against torn writes on a power loss.
func BenchmarkStorage(b *testing.B) {
	for _, mode := range []string{"off", "on", "fsync"} {
		b.Run("storage="+mode, func(b *testing.B) { benchmarkStorage(b, mode != "off", mode == "fsync") })
	}
}

func benchmarkStorage(b *testing.B, on, fsync bool) {
	judge := scoringtest.NewServer()
	defer judge.Close()
	cfg := testConfig(scoring.Bias, scoring.Hallucination, scoring.PromptAlignment)
	cfg.Judge.ClientConfig.Endpoint = judge.URL
	cfg.MaxWait = time.Minute
	cfg.QueueSize = 16
	cfg.Sampling.Percentage = 10
	for i := range cfg.Scorers {
		cfg.Scorers[i].ReasonMode = string(scoring.ReasonSummary)
	}
	dir := b.TempDir()
	host := fileStorageOn(b, dir)
	if fsync {
		host = fileStorageWith(b, dir, func(c *filestorage.Config) { c.FSync = true })
	}
	if on {
		cfg.Storage = &fileStorageID
	}

	set := processortest.NewNopSettings(metadata.Type)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	set.MeterProvider = mp
	out := make(chan int, 16)
	next, err := consumer.NewTraces(func(_ context.Context, td ptrace.Traces) error {
		out <- td.SpanCount()
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	_, proc, err := newTracesProcessor(context.Background(), set, cfg, next, newJudge)
	if err != nil {
		b.Fatal(err)
	}
	if err := proc.Start(context.Background(), host); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = proc.Shutdown(context.Background()) }()

	sampler := newTraceSampler(cfg.Sampling.Percentage)
	batches := make([]ptrace.Traces, b.N)
	for i := range batches {
		bb := newBatch()
		unsampled, sampledOne := 0, false
		for seq := i * 1000; unsampled < 9 || !sampledOne; seq++ {
			loadGeneration(bb, seq)
			id := bb.spans.At(bb.spans.Len() - 1).TraceID()
			in := sampler.sampled(id)
			switch {
			case in && !sampledOne:
				sampledOne = true
			case !in && unsampled < 9:
				unsampled++
			default: // keep exactly one of the ten in the sample
				bb.spans.RemoveIf(func(x ptrace.Span) bool { return x.TraceID() == id })
			}
		}
		batches[i] = bb.td
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for _, td := range batches {
		if err := proc.ConsumeTraces(context.Background(), td); err != nil {
			b.Fatal(err)
		}
		for got := 0; got < 10; {
			got += <-out
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N*10), "cpu-ns/span")
	if on {
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(sumInt(rm, "otelcol_processor_llm_eval_storage_written_bytes"))/float64(b.N), "stored-B/held-span")
		if fi, err := os.Stat(filepath.Join(dir, "processor_llm_eval_")); err == nil {
			b.ReportMetric(float64(fi.Size()), "file-B")
		}
	}
}

// cpuTime is the process's user and system CPU time so far, in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// sumInt adds up the data points of an int64 sum metric.
func sumInt(rm metricdata.ResourceMetrics, name string) int64 {
	var total int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if s, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == name {
				for _, dp := range s.DataPoints {
					total += dp.Value
				}
			}
		}
	}
	return total
}
