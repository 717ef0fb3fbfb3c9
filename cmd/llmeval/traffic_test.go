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
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// otlpSink is a minimal OTLP/HTTP traces endpoint.
type otlpSink struct {
	mu    sync.Mutex
	spans map[string]ptrace.Span // by span name + service
	count int
}

func (s *otlpSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.URL.Path != "/v1/traces" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
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
}
