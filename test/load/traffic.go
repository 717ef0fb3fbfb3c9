package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// batchSize spans go in each request; one span per request is a GenAI chat
// span when genAIEvery is 100 (1 %).
const batchSize = 100

// sender posts OTLP/HTTP protobuf batches at a fixed rate and remembers the
// id of every span the collector accepted.
type sender struct {
	endpoint   string
	genAIEvery int
	client     *http.Client

	sent     map[[8]byte]struct{}
	rejected int
	genAI    int
	seq      int
}

func newSender(endpoint string, genAIEvery int) *sender {
	return &sender{
		endpoint:   endpoint + "/v1/traces",
		genAIEvery: genAIEvery,
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
// ordinary HTTP/database spans and, every genAIEvery spans, a chat span
// carrying GenAI semconv content.
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
	var trace pcommon.TraceID
	var parent pcommon.SpanID
	for i := 0; i < batchSize; i++ {
		if i%10 == 0 {
			trace = randomTraceID()
			parent = pcommon.NewSpanIDEmpty()
		}
		span := spans.AppendEmpty()
		id := randomSpanID()
		span.SetTraceID(trace)
		span.SetSpanID(id)
		span.SetParentSpanID(parent)
		span.SetStartTimestamp(pcommon.NewTimestampFromTime(now.Add(-20 * time.Millisecond)))
		span.SetEndTimestamp(pcommon.NewTimestampFromTime(now))
		s.seq++
		if s.seq%s.genAIEvery == 0 {
			chatSpan(span, s.seq)
			genAI++
		} else {
			httpSpan(span, i)
		}
		if parent.IsEmpty() {
			parent = id
		}
		ids = append(ids, id)
	}
	return td, ids, genAI
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
