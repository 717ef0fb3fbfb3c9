package llmevalprocessor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadata"
	"github.com/llm-eval/llm_eval/scoring"
)

// benchLogBatch is a 100-record batch of a web service's logs, about ten
// attributes each, with one gen_ai.client.inference.operation.details
// record (testdata/otlp/logs/details_structured.json) at index 50.
func benchLogBatch(b *testing.B) plog.Logs {
	raw, err := os.ReadFile(filepath.Join(otlpTestdata, "logs", "details_structured.json"))
	if err != nil {
		b.Fatal(err)
	}
	src, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(raw)
	if err != nil {
		b.Fatal(err)
	}
	var details plog.LogRecord
	for _, rec := range src.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().All() {
		if genai.LogEventKind(genai.LogEventName(rec)) == genai.LogDetails {
			details = rec
		}
	}
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	src.ResourceLogs().At(0).Resource().CopyTo(rl.Resource())
	sl := rl.ScopeLogs().AppendEmpty()
	recs := sl.LogRecords()
	for i := range 100 {
		if i == 50 {
			details.CopyTo(recs.AppendEmpty())
			continue
		}
		r := recs.AppendEmpty()
		r.SetTimestamp(1766400000000000000)
		r.SetSeverityNumber(plog.SeverityNumberInfo)
		r.Body().SetStr(fmt.Sprintf("GET /api/orders/%d 200 in 12ms", i))
		r.SetTraceID(randomTraceID())
		r.SetSpanID(nextSpanID())
		a := r.Attributes()
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
	return ld
}

// BenchmarkLogsOverhead is BenchmarkOverhead for the logs signal: the cost
// of ConsumeLogs on a 100-record batch with one GenAI details record,
// sampling 10 %, relative to decoding the batch.
func BenchmarkLogsOverhead(b *testing.B) {
	ld := benchLogBatch(b)
	raw, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	if err != nil {
		b.Fatal(err)
	}
	decodeNsPerOp := measureNsPerOp(func() {
		if _, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(raw); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("llm_eval", func(b *testing.B) {
		cfg := testConfig(scoring.Bias)
		cfg.Sampling.Percentage = 10
		cfg.QueueSize = 100000
		set := processortest.NewNopSettings(metadata.Type)
		p, err := createLogsWith(fakeJudge([]scoring.Scorer{fixedScorer(scoring.Bias, 0.1, scoring.LabelPass)}))(context.Background(), set, cfg, consumertest.NewNop())
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
			b.Fatal(err)
		}
		defer func() { _ = p.Shutdown(context.Background()) }()
		details := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(50)
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			// A new call each time: a fresh trace id decides the sample.
			details.SetTraceID(randomTraceID())
			if err := p.ConsumeLogs(context.Background(), ld); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/decodeNsPerOp, "of_decode")
	})
}
