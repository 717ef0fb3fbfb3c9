package llmevalmetricsconnector

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/llm-eval/llm_eval/connector/llmevalmetricsconnector/internal/metadatatest"
	"github.com/llm-eval/llm_eval/internal/evalconv"
)

// newTelemetryConnector is newTestConnector with recorded own telemetry.
func newTelemetryConnector(t *testing.T, cfg *Config, sink *consumertest.MetricsSink) (*evalMetricsConnector, *componenttest.Telemetry) {
	t.Helper()
	require.NoError(t, cfg.Validate())
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	c, err := newConnector(metadatatest.NewSettings(tel), cfg, sink)
	require.NoError(t, err)
	return c, tel
}

// results returns traces with one evaluation event per name, on one span.
func results(names ...string) ptrace.Traces {
	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	for _, n := range names {
		ev := span.Events().AppendEmpty()
		ev.SetName(evalconv.EventName)
		ev.Attributes().PutStr(evalconv.AttrName, n)
		ev.Attributes().PutDouble(evalconv.AttrScoreValue, 0.5)
	}
	return td
}

func TestOverflowIsCountedInTelemetry(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.MaxSeries = 1
	sink := &consumertest.MetricsSink{}
	c, tel := newTelemetryConnector(t, cfg, sink)

	require.NoError(t, c.ConsumeTraces(context.Background(), results("a", "b", "c")))
	require.NoError(t, c.ConsumeTraces(context.Background(), results("a", "b")))
	require.NoError(t, c.Shutdown(context.Background()))

	metadatatest.AssertEqualConnectorLlmEvalMetricsOverflowResults(t, tel,
		[]metricdata.DataPoint[int64]{{Value: 3}}, metricdatatest.IgnoreTimestamp())
	md := sink.AllMetrics()[0]
	a, _ := findPoints(md, "a", "")
	require.Len(t, a, 1)
	assert.Equal(t, int64(2), a[0].IntValue())
	var overflow int64
	for _, rm := range md.ResourceMetrics().All() {
		for _, m := range rm.ScopeMetrics().At(0).Metrics().All() {
			if m.Name() != metricResults {
				continue
			}
			for _, dp := range m.Sum().DataPoints().All() {
				if v, ok := dp.Attributes().Get(attrOverflow); ok && v.Bool() {
					overflow += dp.IntValue()
				}
			}
		}
	}
	assert.Equal(t, int64(3), overflow, "b, c and b again are in the overflow series")
}

func TestMetricsExpiration(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	tests := []struct {
		name       string
		expiration time.Duration
		wantA      bool // series a is still sent at t0+70s
		wantReset  bool // a's start moves when it comes back
	}{
		{name: "never by default", expiration: 0, wantA: true},
		{name: "expired after a minute", expiration: time.Minute, wantA: false, wantReset: true},
		{name: "not yet expired", expiration: 2 * time.Minute, wantA: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig()
			cfg.MetricsExpiration = tt.expiration
			cfg.NewSeriesHold = 0 // expiration, not the hold, is under test
			sink := &consumertest.MetricsSink{}
			c, tel := newTelemetryConnector(t, cfg, sink)
			ctx := context.Background()

			c.now = func() time.Time { return t0 }
			require.NoError(t, c.ConsumeTraces(ctx, results("a")))
			c.now = func() time.Time { return t0.Add(30 * time.Second) }
			require.NoError(t, c.ConsumeTraces(ctx, results("b")))
			c.now = func() time.Time { return t0.Add(70 * time.Second) }
			require.NoError(t, c.flush(ctx, false))

			a, _ := findPoints(sink.AllMetrics()[0], "a", "")
			b, _ := findPoints(sink.AllMetrics()[0], "b", "")
			assert.Len(t, b, 1, "b was updated 40s ago")
			if tt.wantA {
				assert.Len(t, a, 1)
			} else {
				assert.Empty(t, a)
				metadatatest.AssertEqualConnectorLlmEvalMetricsSeriesExpired(t, tel,
					[]metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp())
			}

			c.now = func() time.Time { return t0.Add(80 * time.Second) }
			require.NoError(t, c.ConsumeTraces(ctx, results("a")))
			require.NoError(t, c.flush(ctx, false))
			a, _ = findPoints(sink.AllMetrics()[1], "a", "")
			require.Len(t, a, 1)
			if tt.wantReset {
				assert.Equal(t, int64(0), a[0].IntValue(), "an expired series starts afresh, from zero")
				assert.Equal(t, pcommon.NewTimestampFromTime(t0.Add(80*time.Second)), a[0].StartTimestamp())
			} else {
				assert.Equal(t, int64(2), a[0].IntValue())
				assert.Equal(t, pcommon.NewTimestampFromTime(t0), a[0].StartTimestamp())
			}
		})
	}
}

// A series is keyed by the content of its resource, not by the order in
// which the resource's attributes were written.
func TestSeriesKeyIgnoresAttributeOrder(t *testing.T) {
	sink := &consumertest.MetricsSink{}
	c := newTestConnector(t, createDefaultConfig(), sink)
	td := results("bias")
	results("bias").ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	first := td.ResourceSpans().At(0).Resource().Attributes()
	first.PutStr("service.name", "chat")
	first.PutInt("process.pid", 7)
	second := td.ResourceSpans().At(1).Resource().Attributes()
	second.PutInt("process.pid", 7)
	second.PutStr("service.name", "chat")
	// A different type is a different resource.
	results("bias").ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	third := td.ResourceSpans().At(2).Resource().Attributes()
	third.PutStr("service.name", "chat")
	third.PutStr("process.pid", "7")

	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	require.NoError(t, c.flush(context.Background(), true)) // no value held back
	md := sink.AllMetrics()[0]
	require.Equal(t, 2, md.ResourceMetrics().Len())
	got, _ := findPoints(md, "bias", "")
	require.Len(t, got, 2)
	counts := []int64{got[0].IntValue(), got[1].IntValue()}
	assert.ElementsMatch(t, []int64{2, 1}, counts)
}
