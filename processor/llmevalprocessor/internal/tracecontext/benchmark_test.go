package tracecontext

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
)

const benchSpansPerTrace = 100

// benchTrace is one 100-span batch of one trace: an invoke_agent root, a
// chat generation, a retrieval span with three documents and two
// execute_tool spans (4 % context, 1 % generation), and 95 HTTP/DB spans
// with about ten attributes each.
func benchTrace(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	var tr pcommon.TraceID
	binary.BigEndian.PutUint64(tr[:8], uint64(n)+1)
	id := func(i int) pcommon.SpanID {
		var s pcommon.SpanID
		binary.BigEndian.PutUint32(s[:4], uint32(n))
		binary.BigEndian.PutUint32(s[4:], uint32(i)+1)
		return s
	}
	add := func(i, parent int, name string) pcommon.Map {
		s := spans.AppendEmpty()
		s.SetTraceID(tr)
		s.SetSpanID(id(i))
		if parent >= 0 {
			s.SetParentSpanID(id(parent))
		}
		s.SetName(name)
		s.SetStartTimestamp(pcommon.Timestamp(1_766_400_000_000_000_000 + int64(i)*1_000_000))
		s.SetEndTimestamp(pcommon.Timestamp(1_766_400_000_000_000_000 + int64(i+1)*1_000_000))
		return s.Attributes()
	}
	for i := 2; i < benchSpansPerTrace; i++ {
		switch i {
		case 10:
			a := add(i, 1, "retrieval kb")
			a.PutStr("gen_ai.operation.name", "retrieval")
			a.PutStr("gen_ai.data_source.id", "kb")
			a.PutStr("gen_ai.retrieval.documents", `[{"id":"1","score":0.9,"content":"Order 1042 shipped on Tuesday from the Lyon warehouse and is handled by the regional carrier."},`+
				`{"id":"2","score":0.7,"content":"Standard delivery takes three to five working days after shipping."},`+
				`{"id":"3","score":0.5,"content":"Customers are told by e-mail when the parcel leaves the warehouse."}]`)
		case 20, 30:
			a := add(i, 1, "execute_tool lookup_order")
			a.PutStr("gen_ai.operation.name", "execute_tool")
			a.PutStr("gen_ai.tool.name", "lookup_order")
			a.PutStr("gen_ai.tool.call.arguments", `{"order":1042}`)
			a.PutStr("gen_ai.tool.call.result", fmt.Sprintf(`{"order":1042,"status":"shipped","eta":"Friday","call":%d}`, i))
		case 50:
			a := add(i, 1, "chat gpt-4o")
			a.PutStr("gen_ai.operation.name", "chat")
			a.PutStr("gen_ai.request.model", "gpt-4o")
			a.PutStr("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"Where is my order 1042?"}]}]`)
			a.PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"It shipped on Tuesday and should arrive by Friday."}],"finish_reason":"stop"}]`)
		default:
			a := add(i, 1+i%3, fmt.Sprintf("GET /api/orders/%d", i))
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
	}
	// Intermediate spans 2 and 3 hang under the root; the root ends last.
	a := add(1, -1, "invoke_agent support")
	a.PutStr("gen_ai.operation.name", "invoke_agent")
	a.PutStr("gen_ai.agent.name", "support")
	add(0, 1, "GET /health") // keeps the batch at 100 spans
	return td
}

// BenchmarkIndex measures the per-span cost of the index on the processor's
// hot path: classify every span (what llm_eval does today), read and add the
// GenAI spans, link the batch. Traces are new to the index each time (the
// index is kept smaller than the stream), so every batch pays for creating
// its trace and evicting an old one. Few distinct batches keep the data in
// cache, as a batch just decoded by the receiver is.
func BenchmarkIndex(b *testing.B) {
	const distinct = 8
	batches := make([]ptrace.Traces, distinct)
	for i := range batches {
		batches[i] = benchTrace(i)
	}
	// stage is how much of the path runs: 0 classify, 1 also read the
	// context spans, 2 also index.
	run := func(b *testing.B, stage int) {
		ix, err := New(Config{
			MaxTraces: distinct / 4, MaxBytes: 64 << 20, TTL: time.Minute,
			MaxDocumentBytes: 32 << 10, MaxTraceBytes: 1 << 20,
		})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			td := batches[n%distinct]
			n++
			rss := td.ResourceSpans()
			for i := 0; i < rss.Len(); i++ {
				rs := rss.At(i)
				sss := rs.ScopeSpans()
				for j := 0; j < sss.Len(); j++ {
					ss := sss.At(j)
					spans := ss.Spans()
					for k := 0; k < spans.Len(); k++ {
						span := spans.At(k)
						kind := genai.Classify(rs.Resource(), span)
						if stage == 0 {
							continue
						}
						switch kind {
						case genai.KindContext:
							src := genai.ReadContext(span)
							if stage == 1 {
								continue
							}
							ix.Add(Span{TraceID: span.TraceID(), SpanID: span.SpanID(), ParentID: span.ParentSpanID(),
								Start: span.StartTimestamp(), End: span.EndTimestamp(), Role: src.Role, Texts: src.Texts})
						case genai.KindGeneration, genai.KindAggregate:
							if stage == 1 {
								continue
							}
							ix.Add(Span{TraceID: span.TraceID(), SpanID: span.SpanID(), ParentID: span.ParentSpanID(),
								Start: span.StartTimestamp(), End: span.EndTimestamp()})
						}
					}
				}
			}
			if stage == 2 {
				ix.LinkAll(td)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchSpansPerTrace), "ns/span")
	}
	b.Run("classify_only", func(b *testing.B) { run(b, 0) })
	b.Run("classify_read", func(b *testing.B) { run(b, 1) })
	b.Run("classify_read_index", func(b *testing.B) { run(b, 2) })
}

// BenchmarkLinkAllUnknownTraces is the cost for traffic without GenAI
// spans: one lookup per span, nothing kept.
func BenchmarkLinkAllUnknownTraces(b *testing.B) {
	ix, err := New(Config{MaxTraces: 100, MaxBytes: 1 << 20, TTL: time.Minute, MaxDocumentBytes: 1 << 10, MaxTraceBytes: 1 << 18})
	if err != nil {
		b.Fatal(err)
	}
	ix.Add(Span{TraceID: pcommon.TraceID{0xFF}, SpanID: pcommon.SpanID{1}})
	td := benchTrace(7)
	b.ReportAllocs()
	for b.Loop() {
		ix.LinkAll(td)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchSpansPerTrace), "ns/span")
}
