package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
)

// sampleLogCall is the GenAI log events of one LLM call, sent by one service.
type sampleLogCall struct {
	service    string
	scope      string
	convention string
	story      string
	// records appends the call's records, all with the given ids.
	records func(dst plog.LogRecordSlice, trace pcommon.TraceID, span pcommon.SpanID, at time.Time)
}

// sampleLogCalls is the logs part of the demo traffic: one call in each
// style of GenAI log events.
func sampleLogCalls() []sampleLogCall {
	return []sampleLogCall{
		{
			service: "order-assistant", scope: "opentelemetry.util.genai", convention: "details event",
			story:   "grounded answer (semconv 1.37+ operation details log record)",
			records: detailsRecord,
		},
		{
			service: "weather-agent", scope: "opentelemetry.instrumentation.openai_v2", convention: "message events",
			story:   "ungrounded answer (rainy vs sunny in the tool result; semconv 1.36 per-message log records)",
			records: messageEventRecords,
		},
	}
}

// detailsRecord is a gen_ai.client.inference.operation.details record with
// structured content attributes, as opentelemetry-util-genai sends it with
// content capture set to EVENT_ONLY.
func detailsRecord(dst plog.LogRecordSlice, trace pcommon.TraceID, span pcommon.SpanID, at time.Time) {
	rec := newEventRecord(dst, "gen_ai.client.inference.operation.details", trace, span, at)
	attrs := rec.Attributes()
	attrs.PutStr("gen_ai.operation.name", "chat")
	attrs.PutStr("gen_ai.provider.name", "openai")
	attrs.PutStr("gen_ai.request.model", "gpt-4o-mini")
	attrs.PutStr("gen_ai.response.id", "chatcmpl-"+span.String())
	attrs.PutEmptySlice("gen_ai.response.finish_reasons").AppendEmpty().SetStr("stop")
	mustFromRaw(attrs.PutEmptySlice("gen_ai.system_instructions"), []any{
		map[string]any{"type": "text", "content": "Answer only from tool results."},
	})
	mustFromRaw(attrs.PutEmptySlice("gen_ai.input.messages"), []any{
		map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "content": "Where is my order 1042?"}}},
		map[string]any{"role": "assistant", "parts": []any{map[string]any{"type": "tool_call", "id": "call_1", "name": "lookup_order",
			"arguments": map[string]any{"order_id": "1042"}}}},
		map[string]any{"role": "tool", "parts": []any{map[string]any{"type": "tool_call_response", "id": "call_1",
			"response": "Order 1042 shipped on 2025-12-18 via DHL, tracking DE123456."}}},
	})
	mustFromRaw(attrs.PutEmptySlice("gen_ai.output.messages"), []any{
		map[string]any{"role": "assistant", "finish_reason": "stop", "parts": []any{map[string]any{"type": "text",
			"content": "Order 1042 shipped on 18 December 2025 with DHL, tracking number DE123456."}}},
	})
}

// messageEventRecords are the per-message events of one call as the
// OpenAI v2 instrumentation sends them: the input turns, then the choice.
func messageEventRecords(dst plog.LogRecordSlice, trace pcommon.TraceID, span pcommon.SpanID, at time.Time) {
	event := func(name string, body map[string]any, after time.Duration) {
		rec := newEventRecord(dst, name, trace, span, at.Add(after))
		rec.Attributes().PutStr("gen_ai.system", "openai")
		mustFromRaw(rec.Body().SetEmptyMap(), body)
	}
	event("gen_ai.system.message", map[string]any{"content": "You are a weather assistant. Use the tool result."}, 0)
	event("gen_ai.user.message", map[string]any{"content": "What is the weather in Rome?"}, 0)
	event("gen_ai.assistant.message", map[string]any{"tool_calls": []any{map[string]any{"id": "call_r1", "type": "function",
		"function": map[string]any{"name": "get_weather", "arguments": `{"city":"Rome"}`}}}}, 0)
	event("gen_ai.tool.message", map[string]any{"id": "call_r1", "content": "Rome: sunny, 24°C"}, 0)
	event("gen_ai.choice", map[string]any{"index": int64(0), "finish_reason": "stop",
		"message": map[string]any{"role": "assistant", "content": "It is rainy in Rome today, take an umbrella."}}, 800*time.Millisecond)
}

func newEventRecord(dst plog.LogRecordSlice, name string, trace pcommon.TraceID, span pcommon.SpanID, at time.Time) plog.LogRecord {
	rec := dst.AppendEmpty()
	rec.SetEventName(name)
	rec.SetTraceID(trace)
	rec.SetSpanID(span)
	rec.SetFlags(plog.DefaultLogRecordFlags.WithIsSampled(true))
	rec.SetTimestamp(pcommon.NewTimestampFromTime(at))
	rec.SetObservedTimestamp(pcommon.NewTimestampFromTime(at))
	return rec
}

// mustFromRaw fills dst from literal values of this file, which pcommon
// always accepts.
func mustFromRaw[T interface{ FromRaw(R) error }, R any](dst T, raw R) {
	if err := dst.FromRaw(raw); err != nil {
		panic(fmt.Sprintf("sample traffic literal: %v", err))
	}
}

// sendLogTraffic posts every call's records rounds times, one OTLP/HTTP
// request per round, and returns the number of records sent. Each call
// gets fresh random trace and span ids.
func sendLogTraffic(ctx context.Context, logsURL string, calls []sampleLogCall, rounds int, out io.Writer) (int, error) {
	client := &http.Client{}
	sent := 0
	for range rounds {
		ld := plog.NewLogs()
		for _, c := range calls {
			rl := ld.ResourceLogs().AppendEmpty()
			rl.Resource().Attributes().PutStr("service.name", c.service)
			sl := rl.ScopeLogs().AppendEmpty()
			sl.Scope().SetName(c.scope)
			c.records(sl.LogRecords(), randomTraceID(), randomSpanID(), time.Now())
			fmt.Fprintf(out, "  %-16s %-14s %s\n", c.service, c.convention, c.story)
		}
		if err := postLogs(ctx, client, logsURL, ld); err != nil {
			return sent, err
		}
		sent += ld.LogRecordCount()
	}
	return sent, nil
}

// postLogs sends one OTLP/HTTP protobuf logs request.
func postLogs(ctx context.Context, client *http.Client, url string, ld plog.Logs) error {
	body, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		return fmt.Errorf("encoding logs: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("sending logs: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("sending logs: %w", err)
	}
	defer resp.Body.Close()
	respBody, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("sending logs to %s: HTTP %d %s", url, resp.StatusCode, bytes.TrimSpace(respBody))
	}
	er := plogotlp.NewExportResponse()
	if err := er.UnmarshalProto(respBody); err == nil {
		if ps := er.PartialSuccess(); ps.RejectedLogRecords() > 0 {
			return fmt.Errorf("sending logs to %s: %d records rejected: %s", url, ps.RejectedLogRecords(), ps.ErrorMessage())
		}
	}
	return nil
}

func randomTraceID() pcommon.TraceID {
	var id pcommon.TraceID
	for id.IsEmpty() {
		for i := range id {
			id[i] = byte(rand.Uint32())
		}
	}
	return id
}

func randomSpanID() pcommon.SpanID {
	var id pcommon.SpanID
	for id.IsEmpty() {
		for i := range id {
			id[i] = byte(rand.Uint32())
		}
	}
	return id
}
