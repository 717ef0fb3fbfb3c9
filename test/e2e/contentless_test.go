//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/scoring/scoringtest"
	"github.com/llm-eval/llm_eval/test/internal/collectortest"
)

// What the official OTel JS OpenAI instrumentation sends with content
// capture off: chat spans without content, and no log events.
const (
	captureOffService = "capture-off-app"
	captureOffScope   = "@opentelemetry/instrumentation-openai"
	captureOffVar     = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true"
)

// ids is the trace and span id of the n-th call of the test.
func ids(n int) (pcommon.TraceID, pcommon.SpanID) {
	var tr pcommon.TraceID
	var sp pcommon.SpanID
	binary.BigEndian.PutUint64(tr[8:], uint64(n)+1)
	tr[0] = 0x31
	binary.BigEndian.PutUint64(sp[:], uint64(n)+1)
	return tr, sp
}

// chatSpans are spans n..n+count-1 of the service; with content they carry
// GenAI semconv 1.37 messages.
func chatSpans(n, count int, withContent bool) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", captureOffService)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(captureOffScope)
	ss.Scope().SetVersion("0.22.0")
	now := time.Now()
	for i := n; i < n+count; i++ {
		span := ss.Spans().AppendEmpty()
		tr, sp := ids(i)
		span.SetTraceID(tr)
		span.SetSpanID(sp)
		span.SetName("chat gpt-4o-mini")
		span.SetKind(ptrace.SpanKindClient)
		span.SetStartTimestamp(pcommon.NewTimestampFromTime(now.Add(-time.Second)))
		span.SetEndTimestamp(pcommon.NewTimestampFromTime(now))
		attrs := span.Attributes()
		attrs.PutStr("gen_ai.operation.name", "chat")
		attrs.PutStr("gen_ai.system", "openai")
		attrs.PutStr("gen_ai.request.model", "gpt-4o-mini")
		attrs.PutStr("gen_ai.response.id", fmt.Sprintf("chatcmpl_%d", i))
		if withContent {
			attrs.PutStr("gen_ai.system_instructions", `[{"type":"text","content":"Answer only from the tool results."}]`)
			attrs.PutStr("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"Where is my order 1042?"}]},`+
				`{"role":"assistant","parts":[{"type":"tool_call","id":"call_1","name":"lookup_order","arguments":{"id":"1042"}}]},`+
				`{"role":"tool","parts":[{"type":"tool_call_response","id":"call_1","response":"Order 1042 shipped on 2025-12-18."}]}]`)
			attrs.PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"Order 1042 shipped on 2025-12-18."}],"finish_reason":"stop"}]`)
		}
	}
	return td
}

// chatEvents are the per-message GenAI log events (semconv ≤ 1.36) of
// call n, as the instrumentation sends them with content capture on.
func chatEvents(n int) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", captureOffService)
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName(captureOffScope)
	tr, sp := ids(n)
	add := func(event string, body func(pcommon.Map)) {
		rec := sl.LogRecords().AppendEmpty()
		rec.SetTraceID(tr)
		rec.SetSpanID(sp)
		rec.SetTimestamp(pcommon.NewTimestampFromTime(time.Now()))
		rec.Attributes().PutStr("event.name", event)
		rec.Attributes().PutStr("gen_ai.system", "openai")
		body(rec.Body().SetEmptyMap())
	}
	add("gen_ai.system.message", func(m pcommon.Map) { m.PutStr("content", "Answer only from the tool results.") })
	add("gen_ai.user.message", func(m pcommon.Map) { m.PutStr("content", "Where is my order 1042?") })
	add("gen_ai.tool.message", func(m pcommon.Map) {
		m.PutStr("id", "call_1")
		m.PutStr("content", "Order 1042 shipped on 2025-12-18.")
	})
	add("gen_ai.choice", func(m pcommon.Map) {
		m.PutInt("index", 0)
		m.PutStr("finish_reason", "stop")
		m.PutEmptyMap("message").PutStr("content", "Order 1042 shipped on 2025-12-18.")
	})
	return ld
}

func post(ctx context.Context, t *testing.T, url string, body []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

func postSpans(ctx context.Context, t *testing.T, port int, td ptrace.Traces) {
	t.Helper()
	body, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	post(ctx, t, fmt.Sprintf("http://127.0.0.1:%d/v1/traces", port), body)
}

func postLogs(ctx context.Context, t *testing.T, port int, ld plog.Logs) {
	t.Helper()
	body, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	require.NoError(t, err)
	post(ctx, t, fmt.Sprintf("http://127.0.0.1:%d/v1/logs", port), body)
}

// labelsOf is the gen_ai.evaluation.result labels of a span by scorer.
func labelsOf(span ptrace.Span) map[string]string {
	out := map[string]string{}
	for _, ev := range span.Events().All() {
		if ev.Name() != "gen_ai.evaluation.result" {
			continue
		}
		out[attr(ev.Attributes(), "gen_ai.evaluation.name")] = attr(ev.Attributes(), "gen_ai.evaluation.score.label")
	}
	return out
}

// Spans waiting for their log events never starve the rest (issue 31):
// one llm_eval in a traces and a logs pipeline at defaults gets 3,000 chat
// spans without content and no log events, then 20 spans with content.
// Every content span is scored (none queue_full); the content-less ones
// leave not_scorable with how to turn content capture on, the service is
// learned as sending no events, its next content-less span leaves at once,
// and once an event of it arrives its spans wait again and are scored on
// their events. The collector warns once, naming the variable.
func TestContentlessSpansDoNotStarveEvaluation(t *testing.T) {
	bin := collectortest.Binary(t)
	judge := scoringtest.New(t)
	dir := t.TempDir()
	p := ports{otlp: collectortest.FreePort(t), prom: collectortest.FreePort(t), health: collectortest.FreePort(t), telemetry: collectortest.FreePort(t)}
	logPath := startCollector(t, bin, writeConfig(t, dir, judge.URL, p), dir, diagnosticMetrics)
	ctx, cancel := context.WithTimeout(context.Background(), 4*waitLimit)
	defer cancel()
	waitHealthy(ctx, t, p)
	tracesPath := filepath.Join(dir, "traces.jsonl")

	const contentless, withContent = 3000, 20
	for n := 0; n < contentless; n += 500 {
		postSpans(ctx, t, p.otlp, chatSpans(n, 500, false))
	}
	postSpans(ctx, t, p.otlp, chatSpans(contentless, withContent, true))

	spanID := func(n int) string { _, sp := ids(n); return sp.String() }
	var want []string
	for n := contentless; n < contentless+withContent; n++ {
		want = append(want, spanID(n))
	}
	spans := waitForSpans(t, tracesPath, want)
	for _, id := range want {
		got := labelsOf(spans[id][0])
		for _, sc := range scorers {
			assert.Contains(t, []string{"pass", "fail"}, got[sc], "content span %s, scorer %s: scored while 3,000 spans wait for events", id, sc)
		}
	}

	// The content-less spans leave not_scorable after cross_signal_wait,
	// saying how to turn content capture on.
	first := []string{spanID(0), spanID(contentless - 1)}
	spans = waitForSpans(t, tracesPath, first)
	for _, id := range first {
		span := spans[id][0]
		assert.Equal(t, "not_scorable", labelsOf(span)["bias"])
		assert.Contains(t, attr(span.Attributes(), "llm_eval.bias.reason"), captureOffVar)
	}

	telemetry := fmt.Sprintf("http://127.0.0.1:%d/metrics", p.telemetry)
	var page string
	require.Eventually(t, func() bool {
		_, page, _ = httpGet(ctx, telemetry)
		return hasLine(page, "otelcol_processor_llm_eval_content_capture_off", `service="`+captureOffService+`"`, `library="`+captureOffScope+`"`)
	}, waitLimit, 250*time.Millisecond, "the service is learned as sending no events")
	assert.True(t, hasLine(page, "otelcol_processor_llm_eval_signal_joins", `outcome="span_alone"`, " 3000"), "every content-less span waited, outside queue_size:\n%s", grepLines(page, "signal_joins"))
	assert.True(t, hasLine(page, "otelcol_processor_llm_eval_events_waiting", " 0"), "the waiting area is empty again")

	// Learned: the next content-less span leaves at once.
	learned := contentless + withContent
	postSpans(ctx, t, p.otlp, chatSpans(learned, 1, false))
	spans = waitForSpans(t, tracesPath, []string{spanID(learned)})
	assert.Contains(t, attr(spans[spanID(learned)][0].Attributes(), "llm_eval.bias.reason"), "content capture is off")
	require.Eventually(t, func() bool {
		_, page, _ = httpGet(ctx, telemetry)
		return hasLine(page, "otelcol_processor_llm_eval_signal_joins", `outcome="content_capture_off"`, " 1")
	}, waitLimit, 250*time.Millisecond, "counted as not waiting")

	// Content capture turned on: an event of the service arrives (call A's
	// events), and the next content-less span (call B) waits again for its
	// events, which come after it.
	callA, callB := learned+1, learned+2
	postLogs(ctx, t, p.otlp, chatEvents(callA))
	time.Sleep(time.Second) // the logs pipeline has read call A's events
	postSpans(ctx, t, p.otlp, chatSpans(callB, 1, false))
	time.Sleep(500 * time.Millisecond)
	postLogs(ctx, t, p.otlp, chatEvents(callB))
	spans = waitForSpans(t, tracesPath, []string{spanID(callB)})
	got := labelsOf(spans[spanID(callB)][0])
	for _, sc := range scorers {
		assert.Contains(t, []string{"pass", "fail"}, got[sc], "after capture is turned on, %s scores the span on its events", sc)
	}

	logBytes, err := os.ReadFile(logPath)
	require.NoError(t, err)
	var warnings []string
	for _, line := range strings.Split(string(logBytes), "\n") {
		if strings.Contains(line, "content capture is off") && strings.Contains(line, captureOffService) {
			warnings = append(warnings, line)
		}
	}
	require.Len(t, warnings, 1, "one warning per service and library")
	assert.Contains(t, warnings[0], captureOffVar)
	assert.Contains(t, warnings[0], captureOffScope)
}
