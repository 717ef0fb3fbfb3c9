package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// batchSize spans go in each request; one span per request is a GenAI chat
// span when genAIEvery is 100 (1 %).
const batchSize = 100

// traceSize spans make one trace.
const traceSize = 10

// Traffic shapes: what the GenAI share of the traffic looks like.
const (
	// shapeChat: a lone chat span in an otherwise HTTP trace.
	shapeChat = "chat"
	// shapeRAG: an agent trace, an invoke_agent root with retrieval,
	// execute_tool and chat children, the rest of its spans HTTP.
	shapeRAG = "rag"
	// shapeUnfinished: every trace has retrieval and execute_tool spans
	// under a root that never arrives, and no generation ever comes.
	shapeUnfinished = "unfinished"
)

// sender posts OTLP/HTTP protobuf batches at a fixed rate and remembers the
// id of every span the collector accepted.
type sender struct {
	endpoint   string
	genAIEvery int
	shape      string
	client     *http.Client

	sent     map[[8]byte]struct{}
	rejected int
	genAI    int
	seq      int
	// hideGenAI, while set, sends each chat span with its operation name
	// renamed, so that llm_eval passes it like any other span: the same
	// bytes arrive, and nothing is evaluated (-windows).
	hideGenAI atomic.Bool
}

func newSender(endpoint string, genAIEvery int, shape string) *sender {
	return &sender{
		endpoint:   endpoint + "/v1/traces",
		genAIEvery: genAIEvery,
		shape:      shape,
		client:     &http.Client{Timeout: 10 * time.Second},
		sent:       make(map[[8]byte]struct{}, 1<<20),
	}
}

// run sends spansPerSecond spans per second until ctx ends.
func (s *sender) run(ctx context.Context, spansPerSecond int) {
	interval := time.Second * batchSize / time.Duration(spansPerSecond)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			td, ids, genAI := s.batch()
			if err := s.post(td); err != nil {
				s.rejected += len(ids)
				continue
			}
			for _, id := range ids {
				s.sent[id] = struct{}{}
			}
			s.genAI += genAI
		}
	}
}

func (s *sender) post(td ptrace.Traces) error {
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		return err
	}
	resp, err := s.client.Post(s.endpoint, "application/x-protobuf", bytes.NewReader(body))
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("collector answered %s", resp.Status)
	}
	return nil
}

// batch builds one request: 10 traces of 10 spans from one service, with
// ordinary HTTP spans and a GenAI share of the traffic in the sender's
// shape. The number of chat spans (generations) is the same in the chat and
// rag shapes: one per genAIEvery spans.
func (s *sender) batch() (ptrace.Traces, [][8]byte, int) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "checkout")
	rs.Resource().Attributes().PutStr("service.version", "1.4.2")
	rs.Resource().Attributes().PutStr("deployment.environment.name", "load")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("load-generator")
	spans := ss.Spans()
	ids := make([][8]byte, 0, batchSize)
	genAI := 0
	now := time.Now()
	for t := 0; t < batchSize/traceSize; t++ {
		trace := randomTraceID()
		// The trace's spans have sequence numbers first..s.seq; in the rag
		// shape it is an agent trace when the chat shape would put a chat
		// span among them.
		first := s.seq + 1
		s.seq += traceSize
		switch {
		case s.shape == shapeUnfinished:
			ids = s.unfinishedTrace(spans, trace, now, first, ids)
		case s.shape == shapeRAG && (s.seq/s.genAIEvery) > ((first-1)/s.genAIEvery):
			ids = s.agentTrace(spans, trace, now, first, ids)
			genAI++
		default:
			var n int
			ids, n = s.chatTrace(spans, trace, now, first, ids)
			genAI += n
		}
	}
	return td, ids, genAI
}

// newSpan appends a span of the trace ending at end after lasting d.
func newSpan(spans ptrace.SpanSlice, trace pcommon.TraceID, parent pcommon.SpanID, end time.Time, d time.Duration) ptrace.Span {
	span := spans.AppendEmpty()
	span.SetTraceID(trace)
	span.SetSpanID(randomSpanID())
	span.SetParentSpanID(parent)
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(end.Add(-d)))
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(end))
	return span
}

// chatTrace is today's shape: HTTP spans under the first one, a chat span
// wherever the sequence number is a multiple of genAIEvery.
func (s *sender) chatTrace(spans ptrace.SpanSlice, trace pcommon.TraceID, now time.Time, first int, ids [][8]byte) ([][8]byte, int) {
	genAI := 0
	parent := pcommon.NewSpanIDEmpty()
	for i := 0; i < traceSize; i++ {
		seq := first + i
		span := newSpan(spans, trace, parent, now, 20*time.Millisecond)
		if seq%s.genAIEvery == 0 {
			chatSpan(span, seq)
			if s.hideGenAI.Load() {
				hideOperation(span)
			} else {
				genAI++
			}
		} else {
			httpSpan(span, i)
		}
		if parent.IsEmpty() {
			parent = span.SpanID()
		}
		ids = append(ids, span.SpanID())
	}
	return ids, genAI
}

// agentTrace is a GenAI semconv agent trace: an invoke_agent root, a
// retrieval child, an execute_tool child and a chat child that ends after
// both, then HTTP spans under the root. All spans of a trace go in one
// batch, so the context is indexed before the generation is read.
func (s *sender) agentTrace(spans ptrace.SpanSlice, trace pcommon.TraceID, now time.Time, first int, ids [][8]byte) [][8]byte {
	root := newSpan(spans, trace, pcommon.NewSpanIDEmpty(), now, 120*time.Millisecond)
	agentSpan(root, first)
	retrieval := newSpan(spans, trace, root.SpanID(), now.Add(-80*time.Millisecond), 20*time.Millisecond)
	retrievalSpan(retrieval, first)
	tool := newSpan(spans, trace, root.SpanID(), now.Add(-60*time.Millisecond), 10*time.Millisecond)
	toolSpan(tool, first)
	chat := newSpan(spans, trace, root.SpanID(), now.Add(-5*time.Millisecond), 50*time.Millisecond)
	chatSpan(chat, first)
	ids = append(ids, root.SpanID(), retrieval.SpanID(), tool.SpanID(), chat.SpanID())
	for i := 4; i < traceSize; i++ {
		span := newSpan(spans, trace, root.SpanID(), now, 20*time.Millisecond)
		httpSpan(span, i)
		ids = append(ids, span.SpanID())
	}
	return ids
}

// unfinishedTrace is an agent trace whose retrieval and tool spans arrive
// but whose root and generation never do: the index keeps its context
// until a bound (max_traces, max_bytes, ttl) evicts it.
func (s *sender) unfinishedTrace(spans ptrace.SpanSlice, trace pcommon.TraceID, now time.Time, first int, ids [][8]byte) [][8]byte {
	root := randomSpanID() // never sent
	retrieval := newSpan(spans, trace, root, now.Add(-30*time.Millisecond), 20*time.Millisecond)
	retrievalSpan(retrieval, first)
	tool := newSpan(spans, trace, root, now.Add(-10*time.Millisecond), 10*time.Millisecond)
	toolSpan(tool, first)
	ids = append(ids, retrieval.SpanID(), tool.SpanID())
	for i := 2; i < traceSize; i++ {
		span := newSpan(spans, trace, root, now, 20*time.Millisecond)
		httpSpan(span, i)
		ids = append(ids, span.SpanID())
	}
	return ids
}

func httpSpan(span ptrace.Span, i int) {
	span.SetName("GET /api/cart/{id}")
	span.SetKind(ptrace.SpanKindServer)
	a := span.Attributes()
	a.PutStr("http.request.method", "GET")
	a.PutStr("http.route", "/api/cart/{id}")
	a.PutInt("http.response.status_code", 200)
	a.PutStr("url.path", fmt.Sprintf("/api/cart/%d", i))
	a.PutStr("url.scheme", "https")
	a.PutStr("server.address", "checkout.internal")
	a.PutInt("server.port", 443)
	a.PutStr("client.address", "10.1.2.3")
	a.PutStr("user_agent.original", "Mozilla/5.0 (X11; Linux x86_64)")
	a.PutStr("network.protocol.version", "1.1")
}

// chatSpan is a chat span with unique content, so no result cache can
// spare the judge a call.
func chatSpan(span ptrace.Span, seq int) {
	span.SetName("chat gpt-4o-mini")
	span.SetKind(ptrace.SpanKindClient)
	a := span.Attributes()
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

// hideOperation renames the span's gen_ai.operation.name, which leaves no
// attribute llm_eval selects a generation by.
func hideOperation(span ptrace.Span) {
	a := span.Attributes()
	if v, ok := a.Get("gen_ai.operation.name"); ok {
		a.PutStr("load.hidden.operation.name", v.Str())
		a.Remove("gen_ai.operation.name")
	}
}

// agentSpan is an invoke_agent root with the user's request and the final
// answer.
func agentSpan(span ptrace.Span, seq int) {
	span.SetName("invoke_agent checkout-assistant")
	span.SetKind(ptrace.SpanKindInternal)
	a := span.Attributes()
	a.PutStr("gen_ai.operation.name", "invoke_agent")
	a.PutStr("gen_ai.provider.name", "openai")
	a.PutStr("gen_ai.agent.name", "checkout-assistant")
	a.PutStr("gen_ai.agent.id", "agent-checkout-v2")
	a.PutStr("gen_ai.input.messages", fmt.Sprintf(`[{"role":"user","parts":[{"type":"text","content":"When will order %d arrive?"}]}]`, seq))
	a.PutStr("gen_ai.output.messages", fmt.Sprintf(`[{"role":"assistant","parts":[{"type":"text","content":"Order %d shipped on November 18 with DHL and should arrive on November 21."}],"finish_reason":"stop"}]`, seq))
}

// retrievalSpan is a semconv retrieval span with three short documents,
// one of them naming the order, so every trace's context is distinct.
func retrievalSpan(span ptrace.Span, seq int) {
	span.SetName("retrieval kb-shipping")
	span.SetKind(ptrace.SpanKindClient)
	a := span.Attributes()
	a.PutStr("gen_ai.operation.name", "retrieval")
	a.PutStr("gen_ai.provider.name", "openai")
	a.PutStr("gen_ai.data_source.id", "kb-shipping")
	a.PutInt("gen_ai.request.top_k", 3)
	a.PutStr("gen_ai.retrieval.query.text", fmt.Sprintf("delivery date order %d", seq))
	a.PutStr("gen_ai.retrieval.documents", fmt.Sprintf(`[`+
		`{"id":"kb-ship-2","score":0.88,"content":"DHL parcels within the country are delivered two to three business days after they ship."},`+
		`{"id":"kb-ship-5","score":0.71,"content":"Orders placed before 2 pm ship on the same business day."},`+
		`{"id":"order-%d","score":0.93,"content":"Order %d: shipped 2026-11-18 with DHL, tracking DE%09d."}]`, seq, seq, seq))
}

// toolSpan is a semconv execute_tool span with the order lookup's result.
func toolSpan(span ptrace.Span, seq int) {
	span.SetName("execute_tool get_order")
	span.SetKind(ptrace.SpanKindInternal)
	a := span.Attributes()
	a.PutStr("gen_ai.operation.name", "execute_tool")
	a.PutStr("gen_ai.tool.name", "get_order")
	a.PutStr("gen_ai.tool.type", "function")
	a.PutStr("gen_ai.tool.call.id", "call_1")
	a.PutStr("gen_ai.tool.call.arguments", fmt.Sprintf(`{"id":%d}`, seq))
	a.PutStr("gen_ai.tool.call.result", fmt.Sprintf(`{"id":%d,"status":"shipped","carrier":"DHL","expected_delivery":"2026-11-21"}`, seq))
}

func randomTraceID() pcommon.TraceID {
	var id [16]byte
	_, _ = rand.Read(id[:])
	return id
}

func randomSpanID() pcommon.SpanID {
	var id [8]byte
	_, _ = rand.Read(id[:])
	return id
}
