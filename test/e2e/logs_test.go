//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/plogtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
	"github.com/llm-eval/llm_eval/test/internal/collectortest"
)

// The logs signal: an OTLP/HTTP logs request with a
// gen_ai.client.inference.operation.details record leads to
// gen_ai.evaluation.result records with its trace and span id, and the
// request's records come out unchanged and once.
func TestLogsPipelineEvaluatesDetailsRecord(t *testing.T) {
	bin := collectortest.Binary(t)
	judge := scoringtest.New(t)
	dir := t.TempDir()
	p := ports{otlp: collectortest.FreePort(t), prom: collectortest.FreePort(t), health: collectortest.FreePort(t), telemetry: collectortest.FreePort(t)}
	cfg := writeConfig(t, dir, judge.URL, p)
	startCollector(t, bin, cfg, dir)

	ctx, cancel := context.WithTimeout(context.Background(), 3*waitLimit)
	defer cancel()
	waitHealthy(ctx, t, p)

	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "otlp", "logs", "details_structured.json"))
	require.NoError(t, err)
	sent, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(raw)
	require.NoError(t, err)
	rec := sent.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	require.Equal(t, "gen_ai.client.inference.operation.details", rec.EventName())
	require.False(t, rec.TraceID().IsEmpty())
	require.False(t, rec.SpanID().IsEmpty())
	body, err := (&plog.ProtoMarshaler{}).MarshalLogs(sent)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/v1/logs", p.otlp), bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)

	logsPath := filepath.Join(dir, "logs.jsonl")
	split := func() (inputs, results []resultRecord) {
		for _, r := range readResultRecords(t, logsPath) {
			if r.record.EventName() == evalconv.EventName {
				results = append(results, r)
			} else {
				inputs = append(inputs, r)
			}
		}
		return inputs, results
	}
	require.Eventually(t, func() bool {
		_, results := split()
		return len(results) >= len(scorers)
	}, waitLimit, 250*time.Millisecond, "result log records did not reach the file exporter")

	inputs, results := split()
	byScorer := map[string]int{}
	for _, r := range results {
		assert.Equal(t, rec.TraceID(), r.record.TraceID())
		assert.Equal(t, rec.SpanID(), r.record.SpanID())
		byScorer[attr(r.record.Attributes(), evalconv.AttrName)]++
		assert.Equal(t, attr(sent.ResourceLogs().At(0).Resource().Attributes(), "service.name"), attr(r.resource, "service.name"))
	}
	assert.Equal(t, map[string]int{"bias": 1, "hallucination": 1, "prompt_alignment": 1}, byScorer, "one record per scorer, once")

	require.Len(t, inputs, sent.LogRecordCount(), "input records come out exactly once")
	got := plog.NewLogs()
	dst := got.ResourceLogs().AppendEmpty()
	sent.ResourceLogs().At(0).Resource().CopyTo(dst.Resource())
	sl := dst.ScopeLogs().AppendEmpty()
	sent.ResourceLogs().At(0).ScopeLogs().At(0).Scope().CopyTo(sl.Scope())
	for _, in := range inputs {
		in.record.CopyTo(sl.LogRecords().AppendEmpty())
	}
	want := plog.NewLogs()
	sent.CopyTo(want)
	assert.NoError(t, plogtest.CompareLogs(want, got, plogtest.IgnoreLogRecordsOrder()), "input records unchanged")
}
