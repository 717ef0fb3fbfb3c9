//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
	"github.com/llm-eval/llm_eval/test/internal/collectortest"
)

// resultRecord is one log record of the results file with its resource.
type resultRecord struct {
	resource pcommon.Map
	record   plog.LogRecord
}

// readResultRecords returns every log record of the file exporter output.
func readResultRecords(t *testing.T, path string) []resultRecord {
	t.Helper()
	var out []resultRecord
	var um plog.JSONUnmarshaler
	for _, line := range completeLines(t, path) {
		ld, err := um.UnmarshalLogs(line)
		require.NoError(t, err, "file exporter line is not OTLP/JSON logs")
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					out = append(out, resultRecord{resource: rl.Resource().Attributes(), record: lr})
				}
			}
		}
	}
	return out
}

func attr(m pcommon.Map, key string) string {
	if v, ok := m.Get(key); ok {
		return v.AsString()
	}
	return ""
}

// Results-as-logs from the traces side: the llm_eval_events connector turns
// the evaluation events of an evaluated span into gen_ai.evaluation.result
// log records carrying that span's trace and span id.
func TestEvaluationResultsAsLogRecords(t *testing.T) {
	bin := collectortest.Binary(t)
	judge := scoringtest.New(t)
	dir := t.TempDir()
	p := ports{otlp: collectortest.FreePort(t), prom: collectortest.FreePort(t), health: collectortest.FreePort(t), telemetry: collectortest.FreePort(t)}
	cfg := writeConfig(t, dir, judge.URL, p)
	startCollector(t, bin, cfg, dir)

	ctx, cancel := context.WithTimeout(context.Background(), 3*waitLimit)
	defer cancel()
	waitHealthy(ctx, t, p)

	chat, server := sendSpans(t, p.otlp)
	resultsPath := filepath.Join(dir, "results.jsonl")
	ofChat := func(records []resultRecord) map[string]int {
		byScorer := map[string]int{}
		for _, r := range records {
			if r.record.TraceID() == pcommon.TraceID(chat.TraceID()) && r.record.SpanID() == pcommon.SpanID(chat.SpanID()) {
				byScorer[attr(r.record.Attributes(), evalconv.AttrName)]++
			}
		}
		return byScorer
	}
	require.Eventually(t, func() bool {
		return len(ofChat(readResultRecords(t, resultsPath))) >= len(scorers)
	}, waitLimit, 250*time.Millisecond, "evaluation log records did not reach the file exporter")
	// The spans are written by the same pipeline; once they are there, every
	// record of this batch is too.
	tracesPath := filepath.Join(dir, "traces.jsonl")
	require.Eventually(t, func() bool {
		spans := readSpans(t, tracesPath)
		return len(spans[chat.SpanID().String()]) > 0 && len(spans[server.SpanID().String()]) > 0
	}, waitLimit, 250*time.Millisecond, "evaluated spans did not reach the file exporter")

	records := readResultRecords(t, resultsPath)
	assert.Equal(t, map[string]int{"bias": 1, "hallucination": 1, "prompt_alignment": 1}, ofChat(records),
		"one record per scorer, exactly once")
	require.Len(t, records, len(scorers), "no records for the server span or anything else")
	for _, r := range records {
		lr := r.record
		name := attr(lr.Attributes(), evalconv.AttrName)
		assert.Equal(t, evalconv.EventName, lr.EventName(), "%s event name", name)
		assert.Contains(t, []string{"pass", "fail"}, attr(lr.Attributes(), evalconv.AttrScoreLabel), "%s label", name)
		_, hasScore := lr.Attributes().Get(evalconv.AttrScoreValue)
		assert.True(t, hasScore, "%s record has no score", name)
		assert.Equal(t, model, attr(lr.Attributes(), evalconv.AttrRequestModel), "%s model", name)
		assert.NotZero(t, lr.Timestamp(), "%s time", name)
		assert.Equal(t, service, attr(r.resource, "service.name"), "%s resource", name)
	}
}
