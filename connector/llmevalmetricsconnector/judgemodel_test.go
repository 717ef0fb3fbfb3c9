package llmevalmetricsconnector

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/internal/evalconv"
)

// TestJudgeModelIsALabel: results of two judge models on one evaluated
// model are two series, each labelled with its judge; the evaluated model
// stays gen_ai.request.model.
func TestJudgeModelIsALabel(t *testing.T) {
	sink := &consumertest.MetricsSink{}
	c := newTestConnector(t, createDefaultConfig(), sink)
	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.Attributes().PutStr(evalconv.AttrRequestModel, "app-model")
	for _, judge := range []string{"gpt-4o-mini", "gpt-4o-mini", "gpt-4o", ""} {
		ev := span.Events().AppendEmpty()
		ev.SetName(evalconv.EventName)
		ev.Attributes().PutStr(evalconv.AttrName, "bias")
		ev.Attributes().PutStr(evalconv.AttrScoreLabel, "pass")
		ev.Attributes().PutDouble(evalconv.AttrScoreValue, 0.1)
		if judge != "" {
			ev.Attributes().PutStr(evalconv.AttrJudgeModel, judge)
		}
	}
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	// New series are held at zero for new_series_hold first.
	for _, at := range []time.Time{seriesStart, flushTime, flushTime.Add(createDefaultConfig().NewSeriesHold)} {
		c.now = func() time.Time { return at }
		require.NoError(t, c.flush(context.Background(), false))
	}
	all := sink.AllMetrics()
	results, _ := findPoints(all[len(all)-1], "bias", "pass")
	byJudge := map[string]int64{}
	for _, dp := range results {
		model, _ := stringAttr(dp.Attributes(), evalconv.AttrRequestModel)
		assert.Equal(t, "app-model", model)
		judge, _ := stringAttr(dp.Attributes(), evalconv.AttrJudgeModel)
		byJudge[judge] += dp.IntValue()
	}
	assert.Equal(t, map[string]int64{"gpt-4o-mini": 2, "gpt-4o": 1, "": 1}, byJudge)
}
