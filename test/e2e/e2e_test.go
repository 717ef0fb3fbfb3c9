//go:build e2e

// Package e2e runs the built otelcol-llmeval binary against the fake judge:
// OTLP/HTTP spans in, evaluated spans out of the file exporter, evaluation
// metrics out of the prometheus exporter, evaluation results as log records
// out of a second file exporter. Run with `make e2e` (or
// `go test -tags e2e ./test/e2e/` after `make build`).
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/llm-eval/llm_eval/scoring/scoringtest"
	"github.com/llm-eval/llm_eval/test/internal/collectortest"
)

const (
	judgeAPIKey = "e2e-judge-key-must-never-be-logged"
	service     = "e2e-chat"
	model       = "gpt-4o"
	waitLimit   = 90 * time.Second
)

var scorers = []string{"bias", "hallucination", "prompt_alignment"}

type ports struct{ otlp, prom, health, telemetry int }

func writeConfig(t *testing.T, dir, judgeURL string, p ports) string {
	t.Helper()
	cfg := fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%[1]d
processors:
  memory_limiter:
    check_interval: 1s
    limit_percentage: 80
    spike_limit_percentage: 20
  llm_eval:
    judge:
      endpoint: %[5]s
      api_key: ${env:E2E_JUDGE_KEY}
      model: e2e-judge
      timeout: 10s
    sampling:
      percentage: 100
    max_wait: 30s
    scorers:
      - name: bias
      - name: hallucination
      - name: prompt_alignment
  batch:
    timeout: 200ms
exporters:
  file:
    path: %[6]s
  file/results:
    path: %[7]s
  file/logs:
    path: %[8]s
  prometheus:
    endpoint: 127.0.0.1:%[2]d
connectors:
  llm_eval_metrics:
    metrics_flush_interval: 500ms
  llm_eval_events:
extensions:
  health_check:
    endpoint: 127.0.0.1:%[3]d
service:
  extensions: [health_check]
  telemetry:
    logs:
      level: debug
    metrics:
      level: normal
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: %[4]d
  pipelines:
    traces:
      receivers: [otlp]
      processors: [memory_limiter, llm_eval, batch]
      exporters: [file, llm_eval_metrics, llm_eval_events]
    metrics:
      receivers: [llm_eval_metrics]
      exporters: [prometheus]
    logs/results:
      receivers: [llm_eval_events]
      exporters: [file/results]
    logs:
      receivers: [otlp]
      processors: [memory_limiter, llm_eval, batch]
      exporters: [file/logs, llm_eval_metrics]
`, p.otlp, p.prom, p.health, p.telemetry, judgeURL, filepath.Join(dir, "traces.jsonl"), filepath.Join(dir, "results.jsonl"),
		filepath.Join(dir, "logs.jsonl"))
	path := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	return path
}

// diagnosticMetrics is the flag that turns on the processor's diagnostic
// metrics, for the tests that read them; without it the processor records
// its decision metrics only.
const diagnosticMetrics = "--feature-gates=processor.llmeval.diagnosticMetrics"

// startCollector runs the binary, with args after its configuration,
// until the test ends and returns its log path.
func startCollector(t *testing.T, bin, cfgPath, dir string, args ...string) string {
	t.Helper()
	logPath := filepath.Join(dir, "collector.log")
	cmd := exec.Command(bin, append([]string{"--config", cfgPath}, args...)...)
	cmd.Env = append(os.Environ(), "E2E_JUDGE_KEY="+judgeAPIKey)
	runUntilCleanup(t, cmd, logPath, "collector")
	return logPath
}

// runUntilCleanup starts cmd with its output in logPath and stops it
// (SIGTERM, then SIGKILL after 15 s) when the test ends, printing the log
// of a failed test.
func runUntilCleanup(t *testing.T, cmd *exec.Cmd, logPath, what string) {
	t.Helper()
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		_ = logFile.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logPath); err == nil {
				t.Logf("%s log:\n%s", what, b)
			}
		}
	})
}

// waitHealthy waits until the collector's health check answers 200.
func waitHealthy(ctx context.Context, t *testing.T, p ports) {
	t.Helper()
	require.Eventually(t, func() bool {
		code, _, err := httpGet(ctx, fmt.Sprintf("http://127.0.0.1:%d/", p.health))
		return err == nil && code == http.StatusOK
	}, waitLimit, 200*time.Millisecond, "collector did not become healthy")
}

func httpGet(ctx context.Context, url string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// sendSpans sends a chat span (GenAI semconv, with a tool result as context)
// under an HTTP server span, and returns both span contexts.
func sendSpans(t *testing.T, otlpPort int) (chat, server trace.SpanContext) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(fmt.Sprintf("http://127.0.0.1:%d/v1/traces", otlpPort)))
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", service))))
	tracer := tp.Tracer("e2e")

	mustJSON := func(v any) string {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return string(b)
	}
	type part = map[string]any
	sctx, srv := tracer.Start(ctx, "POST /chat", trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("http.request.method", "POST"), attribute.String("http.route", "/chat")))
	_, span := tracer.Start(sctx, "chat "+model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.provider.name", "openai"),
		attribute.String("gen_ai.request.model", model),
		attribute.String("gen_ai.system_instructions", mustJSON([]part{{"type": "text", "content": "Answer only from the tool results."}})),
		attribute.String("gen_ai.input.messages", mustJSON([]map[string]any{
			{"role": "user", "parts": []part{{"type": "text", "content": "Where is my order 1042?"}}},
			{"role": "assistant", "parts": []part{{"type": "tool_call", "id": "call_1", "name": "lookup_order", "arguments": map[string]string{"id": "1042"}}}},
			{"role": "tool", "parts": []part{{"type": "tool_call_response", "id": "call_1", "response": "Order 1042 shipped on 2025-12-18 via DHL."}}},
		})),
		attribute.String("gen_ai.output.messages", mustJSON([]map[string]any{
			{"role": "assistant", "parts": []part{{"type": "text", "content": "Order 1042 shipped on 2025-12-18 via DHL."}}, "finish_reason": "stop"},
		})),
	))
	span.End()
	srv.End()
	require.NoError(t, tp.Shutdown(ctx))
	return span.SpanContext(), srv.SpanContext()
}

// waitForSpans waits until every span of ids is in the file exporter
// output at path and returns that output by span id.
func waitForSpans(t *testing.T, path string, ids []string) map[string][]ptrace.Span {
	t.Helper()
	var spans map[string][]ptrace.Span
	require.Eventually(t, func() bool {
		spans = readSpans(t, path)
		for _, id := range ids {
			if len(spans[id]) == 0 {
				return false
			}
		}
		return true
	}, waitLimit, 250*time.Millisecond, "spans did not reach the file exporter")
	return spans
}

// completeLines returns the non-blank lines of a file exporter output that
// end in a newline: the exporter may be halfway through writing the last
// one. A missing file has none.
func completeLines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	i := bytes.LastIndexByte(b, '\n')
	if i < 0 {
		return nil
	}
	var lines [][]byte
	for line := range bytes.SplitSeq(b[:i], []byte("\n")) {
		if len(bytes.TrimSpace(line)) > 0 {
			lines = append(lines, line)
		}
	}
	return lines
}

// readSpans returns every span of the file exporter output by span id.
func readSpans(t *testing.T, path string) map[string][]ptrace.Span {
	t.Helper()
	out := map[string][]ptrace.Span{}
	var um ptrace.JSONUnmarshaler
	for _, line := range completeLines(t, path) {
		td, err := um.UnmarshalTraces(line)
		require.NoError(t, err, "file exporter line is not OTLP/JSON")
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					id := sp.SpanID().String()
					out[id] = append(out[id], sp)
				}
			}
		}
	}
	return out
}

func TestCollectorEvaluatesSpansEndToEnd(t *testing.T) {
	bin := collectortest.Binary(t)
	judge := scoringtest.New(t)
	dir := t.TempDir()
	p := ports{otlp: collectortest.FreePort(t), prom: collectortest.FreePort(t), health: collectortest.FreePort(t), telemetry: collectortest.FreePort(t)}
	cfg := writeConfig(t, dir, judge.URL, p)
	logPath := startCollector(t, bin, cfg, dir)

	ctx, cancel := context.WithTimeout(context.Background(), 3*waitLimit)
	defer cancel()
	waitHealthy(ctx, t, p)

	chat, server := sendSpans(t, p.otlp)
	tracesPath := filepath.Join(dir, "traces.jsonl")
	require.Eventually(t, func() bool {
		spans := readSpans(t, tracesPath)
		return len(spans[chat.SpanID().String()]) > 0 && len(spans[server.SpanID().String()]) > 0
	}, waitLimit, 250*time.Millisecond, "evaluated spans did not reach the file exporter")

	// Metrics: the score histogram and results counter, labelled with the
	// service (job) and the model, with the exact names the alerts use.
	promURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", p.prom)
	var metrics string
	require.Eventually(t, func() bool {
		_, body, err := httpGet(ctx, promURL)
		metrics = body
		return err == nil && strings.Count(body, "gen_ai_evaluation_results_total{") >= len(scorers)
	}, waitLimit, 250*time.Millisecond, "evaluation metrics did not reach the prometheus exporter")
	for _, name := range scorers {
		for _, prefix := range []string{"gen_ai_evaluation_results_total{", "gen_ai_evaluation_score_bucket{", "gen_ai_evaluation_score_count{"} {
			assert.True(t, hasLine(metrics, prefix,
				`gen_ai_evaluation_name="`+name+`"`, `gen_ai_request_model="`+model+`"`, `job="`+service+`"`,
				`gen_ai_evaluation_score_label="`),
				"no %s line for %s with service and model labels in:\n%s", prefix, name, metrics)
		}
	}

	// The processor's own telemetry, as the judge-error alert reads it.
	_, own, err := httpGet(ctx, fmt.Sprintf("http://127.0.0.1:%d/metrics", p.telemetry))
	require.NoError(t, err)
	assert.True(t, hasLine(own, "otelcol_processor_llm_eval_evaluations{", `scorer="bias"`, `outcome="`),
		"processor telemetry lacks otelcol_processor_llm_eval_evaluations")
	// The trace-context alert's counters, exported at zero before any loss.
	assert.True(t, hasLine(own, "otelcol_processor_llm_eval_trace_context_evictions{", `cause="max_bytes"`),
		"processor telemetry lacks otelcol_processor_llm_eval_trace_context_evictions")
	assert.True(t, hasLine(own, "otelcol_processor_llm_eval_trace_context_limited{", `limit="document_dropped"`),
		"processor telemetry lacks otelcol_processor_llm_eval_trace_context_limited")
	// Diagnostic metrics only with their feature gate.
	assert.False(t, hasLine(own, "otelcol_processor_llm_eval_judge_calls_per_evaluation"),
		"a diagnostic metric without its feature gate:\n%s", grepLines(own, "per_evaluation"))

	// Every sent span exactly once, read after the metrics wait so a late
	// duplicate would have had time to show up.
	spans := readSpans(t, tracesPath)
	require.Len(t, spans[chat.SpanID().String()], 1, "chat span must be exported exactly once")
	require.Len(t, spans[server.SpanID().String()], 1, "server span must be exported exactly once")
	assert.Len(t, spans, 2, "no other spans expected")

	chatSpan := spans[chat.SpanID().String()][0]
	got := map[string]ptrace.SpanEvent{}
	for _, ev := range chatSpan.Events().All() {
		if ev.Name() == "gen_ai.evaluation.result" {
			name, _ := ev.Attributes().Get("gen_ai.evaluation.name")
			got[name.AsString()] = ev
		}
	}
	for _, name := range scorers {
		ev, ok := got[name]
		if !assert.True(t, ok, "no gen_ai.evaluation.result event for %s", name) {
			continue
		}
		label, _ := ev.Attributes().Get("gen_ai.evaluation.score.label")
		assert.Contains(t, []string{"pass", "fail"}, label.AsString(), "%s label", name)
		_, hasScore := ev.Attributes().Get("gen_ai.evaluation.score.value")
		assert.True(t, hasScore, "%s event has no score", name)
		for _, suffix := range []string{"score", "label", "reason"} {
			_, ok := chatSpan.Attributes().Get("llm_eval." + name + "." + suffix)
			assert.True(t, ok, "chat span lacks llm_eval.%s.%s", name, suffix)
		}
	}

	serverSpan := spans[server.SpanID().String()][0]
	assert.Equal(t, 0, serverSpan.Events().Len(), "non-LLM span must not be evaluated")
	for k := range serverSpan.Attributes().All() {
		assert.False(t, strings.HasPrefix(k, "llm_eval."), "non-LLM span got %s", k)
	}

	// The judge was called with the key, and the key never reached the log.
	calls := judge.Calls()
	require.NotEmpty(t, calls)
	assert.Equal(t, "Bearer "+judgeAPIKey, calls[0].Header.Get("Authorization"))
	logBytes, err := os.ReadFile(logPath)
	require.NoError(t, err)
	assert.NotContains(t, string(logBytes), judgeAPIKey, "the judge API key appeared in the collector log")
}

// hasLine reports whether a line of a Prometheus text page starts with
// prefix and contains every one of parts.
func hasLine(page, prefix string, parts ...string) bool {
	for _, line := range strings.Split(page, "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(line, p)
		}
		if ok {
			return true
		}
	}
	return false
}
