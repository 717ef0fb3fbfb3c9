//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
	"github.com/llm-eval/llm_eval/test/internal/collectortest"
)

// postOTLPJSON sends an OTLP/JSON traces file to the collector's OTLP/HTTP
// receiver in one request.
func postOTLPJSON(t *testing.T, otlpPort int, path string) (spanIDs []string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
	require.NoError(t, err)
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				spanIDs = append(spanIDs, s.SpanID().String())
			}
		}
	}
	resp, err := http.Post(fmt.Sprintf("http://127.0.0.1:%d/v1/traces", otlpPort), "application/json", bytes.NewReader(raw))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return spanIDs
}

// TestTraceContextJoinEndToEnd sends the OpenInference RAG shape in two
// OTLP/HTTP requests, the LLM span first and its sibling retriever span
// second: the generation waits (context_wait) for the retriever's documents,
// the hallucination judge call carries them and the span is scored.
func TestTraceContextJoinEndToEnd(t *testing.T) {
	const doc = "Refunds for card payments are issued within 5 business days after the returned item reaches our warehouse."
	bin := collectortest.Binary(t)
	judge := scoringtest.New(t)
	dir := t.TempDir()
	p := ports{otlp: collectortest.FreePort(t), prom: collectortest.FreePort(t), health: collectortest.FreePort(t), telemetry: collectortest.FreePort(t)}
	startCollector(t, bin, writeConfig(t, dir, judge.URL, p), dir)

	ctx, cancel := context.WithTimeout(context.Background(), 3*waitLimit)
	defer cancel()
	waitHealthy(ctx, t, p)

	fixtures := filepath.Join("..", "..", "testdata", "otlp", "tracecontext")
	genIDs := postOTLPJSON(t, p.otlp, filepath.Join(fixtures, "openinference_rag_generation.json"))
	ctxIDs := postOTLPJSON(t, p.otlp, filepath.Join(fixtures, "openinference_rag_context.json"))

	tracesPath := filepath.Join(dir, "traces.jsonl")
	all := append(append([]string(nil), genIDs...), ctxIDs...)
	spans := waitForSpans(t, tracesPath, all)
	for _, id := range all {
		assert.Len(t, spans[id], 1, "span %s leaves exactly once", id)
	}

	var label string
	for _, id := range genIDs {
		if v, ok := spans[id][0].Attributes().Get(evalconv.FlatLabel("hallucination")); ok {
			label = v.Str()
		}
	}
	assert.Contains(t, []string{"pass", "fail"}, label, "the LLM span is scored by hallucination, not not_scorable")
	sent := false
	for _, c := range judge.Calls() {
		sent = sent || strings.Contains(c.Text(), doc)
	}
	assert.True(t, sent, "a judge call carries the retriever's document")
}
