package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// otlpSink is a minimal OTLP/HTTP traces and logs endpoint.
type otlpSink struct {
	mu       sync.Mutex
	spans    map[string]ptrace.Span // by span name + service
	count    int
	logs     []plog.Logs // one per request
	requests []string    // paths, in order
}

func (s *otlpSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, r.URL.Path)
	s.mu.Unlock()
	switch r.URL.Path {
	case "/v1/traces":
		s.serveTraces(w, body)
	case "/v1/logs":
		s.serveLogs(w, r, body)
	default:
		http.Error(w, "not found", http.StatusNotFound)
	}
}

func (s *otlpSink) serveLogs(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "unsupported content type", http.StatusUnsupportedMediaType)
		return
	}
	req := plogotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.logs = append(s.logs, req.Logs())
	s.mu.Unlock()
	resp, _ := plogotlp.NewExportResponse().MarshalProto()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(resp)
}

func (s *otlpSink) serveTraces(w http.ResponseWriter, body []byte) {
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	for _, rs := range req.Traces().ResourceSpans().All() {
		svc, _ := rs.Resource().Attributes().Get("service.name")
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				s.count++
				s.spans[svc.Str()+"|"+sp.Name()] = sp
			}
		}
	}
	s.mu.Unlock()
	resp, _ := ptraceotlp.NewExportResponse().MarshalProto()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(resp)
}

func TestTrafficSendsEveryConvention(t *testing.T) {
	sink := &otlpSink{spans: map[string]ptrace.Span{}}
	srv := httptest.NewServer(sink)
	t.Cleanup(srv.Close)

	var stdout, stderr bytes.Buffer
	code := run([]string{"traffic", "-endpoint", srv.URL, "-rounds", "2"}, nil, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	assert.Contains(t, stdout.String(), "sent 22 spans")

	sink.mu.Lock()
	defer sink.mu.Unlock()
	assert.Equal(t, 22, sink.count)

	tests := []struct {
		key      string // service|span name
		attr     string // the convention's marker attribute
		want     string
		hasEvent bool
	}{
		{"order-assistant|chat gpt-4o", "gen_ai.operation.name", "chat", false},
		{"hiring-helper|chat gpt-4o-mini", "gen_ai.request.model", "gpt-4o-mini", false},
		{"support-bot|ChatCompletion", "openinference.span.kind", "LLM", false},
		{"trip-planner|openai.chat", "llm.request.type", "chat", false},
		{"recipe-bot|ai.generateText.doGenerate", "ai.operationId", "ai.generateText.doGenerate", false},
		{"order-assistant|SELECT orders", "db.operation.name", "SELECT", false},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			sp, ok := sink.spans[tt.key]
			require.True(t, ok, "span %s not received", tt.key)
			v, ok := sp.Attributes().Get(tt.attr)
			require.True(t, ok)
			assert.Equal(t, tt.want, v.AsString())
		})
	}
	// Chat spans are children of their HTTP server span.
	chat, parent := sink.spans["hiring-helper|chat gpt-4o-mini"], sink.spans["hiring-helper|POST /advice"]
	assert.Equal(t, parent.SpanID(), chat.ParentSpanID())
	assert.Equal(t, parent.TraceID(), chat.TraceID())
}

func TestTrafficReportsUnreachableCollector(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	var stdout, stderr bytes.Buffer
	code := run([]string{"traffic", "-endpoint", url, "-timeout", "5s"}, nil, &stdout, &stderr)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr.String(), "llmeval traffic:")
}

func TestTrafficRejectsBadFlags(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, exitUsage, run([]string{"traffic", "-rounds", "0"}, nil, &stdout, &stderr))
	assert.Equal(t, exitUsage, run([]string{"traffic", "extra"}, nil, &stdout, &stderr))
	assert.Equal(t, exitUsage, run([]string{"traffic", "-signals", "metrics"}, nil, &stdout, &stderr))
	assert.Contains(t, stderr.String(), `"metrics" is not traces or logs`)
}

func TestTrafficSendsLogEvents(t *testing.T) {
	sink := &otlpSink{spans: map[string]ptrace.Span{}}
	srv := httptest.NewServer(sink)
	t.Cleanup(srv.Close)

	var stdout, stderr bytes.Buffer
	code := run([]string{"traffic", "-endpoint", srv.URL + "/", "-signals", "logs", "-rounds", "2"}, nil, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	assert.Contains(t, stdout.String(), "sent 12 log records")
	assert.NotContains(t, stdout.String(), "spans")

	sink.mu.Lock()
	defer sink.mu.Unlock()
	assert.Equal(t, []string{"/v1/logs", "/v1/logs"}, sink.requests, "logs only, one request per round")
	require.Len(t, sink.logs, 2)
	seenTraces := map[pcommon.TraceID]bool{}
	for round, ld := range sink.logs {
		byService := map[string]plog.LogRecordSlice{}
		for _, rl := range ld.ResourceLogs().All() {
			svc, _ := rl.Resource().Attributes().Get("service.name")
			require.Equal(t, 1, rl.ScopeLogs().Len())
			byService[svc.Str()] = rl.ScopeLogs().At(0).LogRecords()
		}

		details := byService["order-assistant"]
		require.Equal(t, 1, details.Len(), "round %d", round)
		d := details.At(0)
		assert.Equal(t, "gen_ai.client.inference.operation.details", d.EventName())
		assert.False(t, d.TraceID().IsEmpty())
		assert.False(t, d.SpanID().IsEmpty())
		for _, key := range []string{"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions"} {
			v, ok := d.Attributes().Get(key)
			require.True(t, ok, key)
			assert.Equal(t, pcommon.ValueTypeSlice, v.Type(), "%s is structured", key)
		}
		out, _ := d.Attributes().Get("gen_ai.output.messages")
		assert.Contains(t, out.AsString(), "DE123456")

		events := byService["weather-agent"]
		var names []string
		for _, rec := range events.All() {
			names = append(names, rec.EventName())
			assert.Equal(t, events.At(0).TraceID(), rec.TraceID(), "one call: one trace id")
			assert.Equal(t, events.At(0).SpanID(), rec.SpanID(), "one call: one span id")
			assert.Equal(t, pcommon.ValueTypeMap, rec.Body().Type())
		}
		assert.Equal(t, []string{"gen_ai.system.message", "gen_ai.user.message", "gen_ai.assistant.message",
			"gen_ai.tool.message", "gen_ai.choice"}, names)
		msg, _ := events.At(4).Body().Map().Get("message")
		content, _ := msg.Map().Get("content")
		assert.Contains(t, content.Str(), "rainy")
		assert.NotEqual(t, d.TraceID(), events.At(0).TraceID())

		for _, id := range []pcommon.TraceID{d.TraceID(), events.At(0).TraceID()} {
			assert.False(t, seenTraces[id], "fresh trace id every round")
			seenTraces[id] = true
		}
	}
}

func TestTrafficSendsTracesAndLogs(t *testing.T) {
	sink := &otlpSink{spans: map[string]ptrace.Span{}}
	srv := httptest.NewServer(sink)
	t.Cleanup(srv.Close)

	var stdout, stderr bytes.Buffer
	code := run([]string{"traffic", "-endpoint", srv.URL, "-signals", "traces,logs"}, nil, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	assert.Contains(t, stdout.String(), "sent 11 spans")
	assert.Contains(t, stdout.String(), "sent 6 log records")
	sink.mu.Lock()
	defer sink.mu.Unlock()
	assert.Equal(t, 11, sink.count)
	assert.Len(t, sink.logs, 1)
}

func TestTrafficReportsRejectedLogs(t *testing.T) {
	// A Collector without a logs pipeline answers 404 on /v1/logs.
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	var stdout, stderr bytes.Buffer
	code := run([]string{"traffic", "-endpoint", srv.URL, "-signals", "logs"}, nil, &stdout, &stderr)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr.String(), "HTTP 404")
}
