package llmevalmetricsconnector

import (
	"context"
	"flag"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/connector/llmevalmetricsconnector/internal/metadata"
	"github.com/llm-eval/llm_eval/internal/evalconv"
)

var update = flag.Bool("update", false, "rewrite the expected golden files")

var (
	seriesStart = time.Unix(1700000100, 0)
	flushTime   = time.Unix(1700000200, 0)
)

// newTestConnector returns a connector whose clock reads start until the
// traces are consumed and flush afterwards.
func newTestConnector(t *testing.T, cfg *Config, sink *consumertest.MetricsSink) *evalMetricsConnector {
	t.Helper()
	require.NoError(t, cfg.Validate())
	c, err := newConnector(connectortest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(t, err)
	c.now = func() time.Time { return seriesStart }
	return c
}

func TestGolden(t *testing.T) {
	tests := []struct {
		name   string
		input  string
		logs   bool // input is log records, not spans
		config func(*Config)
	}{
		{name: "mixed", input: "mixed/input.yaml", config: func(*Config) {}},
		{name: "overflow", input: "mixed/input.yaml", config: func(c *Config) { c.MaxSeries = 3 }},
		{name: "resource_filter", input: "mixed/input.yaml", config: func(c *Config) {
			c.ResourceAttributes = []string{"service.name", "not.present"}
		}},
		{name: "no_exemplars", input: "mixed/input.yaml", config: func(c *Config) {
			c.Exemplars.Enabled = false
			c.Buckets = []float64{0.5, 1}
		}},
		{name: "logs", input: "logs/input.yaml", logs: true, config: func(*Config) {}},
		{name: "agents", input: "agents/input.yaml", config: func(*Config) {}},
		{name: "rag", input: "rag/input.yaml", config: func(*Config) {}},
		{name: "conversations", input: "conversations/input.yaml", config: func(*Config) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig()
			tt.config(cfg)
			sink := &consumertest.MetricsSink{}
			c := newTestConnector(t, cfg, sink)

			if tt.logs {
				ld, err := golden.ReadLogs(filepath.Join("testdata", tt.input))
				require.NoError(t, err)
				require.NoError(t, c.ConsumeLogs(context.Background(), ld))
			} else {
				td, err := golden.ReadTraces(filepath.Join("testdata", tt.input))
				require.NoError(t, err)
				require.NoError(t, c.ConsumeTraces(context.Background(), td))
			}
			c.now = func() time.Time { return flushTime }
			require.NoError(t, c.Shutdown(context.Background()))

			require.Len(t, sink.AllMetrics(), 1)
			actual := sink.AllMetrics()[0]
			assertTimestamps(t, actual)
			expectedPath := filepath.Join("testdata", tt.name, "expected.yaml")
			if *update {
				require.NoError(t, golden.WriteMetrics(t, expectedPath, actual))
			}
			expected, err := golden.ReadMetrics(expectedPath)
			require.NoError(t, err)
			// The golden writer normalizes timestamps and order; timestamps
			// are checked by assertTimestamps.
			require.NoError(t, pmetrictest.CompareMetrics(expected, actual,
				pmetrictest.IgnoreTimestamp(), pmetrictest.IgnoreStartTimestamp(),
				pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreMetricDataPointsOrder()))
		})
	}
}

// assertTimestamps checks that every point starts when its series was
// first seen and is stamped with the flush time.
func assertTimestamps(t *testing.T, md pmetric.Metrics) {
	t.Helper()
	start, ts := pcommon.NewTimestampFromTime(seriesStart), pcommon.NewTimestampFromTime(flushTime)
	for _, rm := range md.ResourceMetrics().All() {
		for _, m := range rm.ScopeMetrics().At(0).Metrics().All() {
			switch m.Type() {
			case pmetric.MetricTypeSum:
				for _, dp := range m.Sum().DataPoints().All() {
					assert.Equal(t, start, dp.StartTimestamp())
					assert.Equal(t, ts, dp.Timestamp())
				}
			case pmetric.MetricTypeHistogram:
				for _, dp := range m.Histogram().DataPoints().All() {
					assert.Equal(t, start, dp.StartTimestamp())
					assert.Equal(t, ts, dp.Timestamp())
				}
			default:
				t.Errorf("unexpected metric type %s", m.Type())
			}
		}
	}
}

// findPoints returns the results counter and score histogram points of the
// series with the given evaluation name and label.
func findPoints(md pmetric.Metrics, name, label string) (results []pmetric.NumberDataPoint, scores []pmetric.HistogramDataPoint) {
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		ms := md.ResourceMetrics().At(i).ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			match := func(attrs pcommon.Map) bool {
				n, _ := stringAttr(attrs, evalconv.AttrName)
				l, _ := stringAttr(attrs, evalconv.AttrScoreLabel)
				return n == name && l == label
			}
			switch m.Type() {
			case pmetric.MetricTypeSum:
				for k := 0; k < m.Sum().DataPoints().Len(); k++ {
					if dp := m.Sum().DataPoints().At(k); match(dp.Attributes()) {
						results = append(results, dp)
					}
				}
			case pmetric.MetricTypeHistogram:
				for k := 0; k < m.Histogram().DataPoints().Len(); k++ {
					if dp := m.Histogram().DataPoints().At(k); match(dp.Attributes()) {
						scores = append(scores, dp)
					}
				}
			}
		}
	}
	return results, scores
}

func TestCumulativeAcrossBatchesAndFlushes(t *testing.T) {
	sink := &consumertest.MetricsSink{}
	c := newTestConnector(t, createDefaultConfig(), sink)
	td, err := golden.ReadTraces("testdata/mixed/input.yaml")
	require.NoError(t, err)

	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	require.NoError(t, c.flush(context.Background(), false))
	c.now = func() time.Time { return flushTime }
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	require.NoError(t, c.flush(context.Background(), false))
	require.NoError(t, c.flush(context.Background(), false)) // nothing new: same totals, no exemplars

	all := sink.AllMetrics()
	require.Len(t, all, 3)
	for i, want := range []struct {
		count     int64
		exemplars int
	}{{0, 0}, {4, 4}, {4, 0}} { // a new series is sent at zero first; exemplars go with the values they were seen with
		results, scores := findPoints(all[i], "hallucination", "fail")
		require.Len(t, results, 1, "flush %d", i)
		require.Len(t, scores, 1, "flush %d", i)
		assert.Equal(t, want.count, results[0].IntValue(), "flush %d", i)
		assert.Equal(t, uint64(want.count), scores[0].Count(), "flush %d", i)
		assert.InDelta(t, 1.75*float64(want.count/2), scores[0].Sum(), 1e-9, "flush %d", i)
		assert.Equal(t, want.exemplars, scores[0].Exemplars().Len(), "flush %d", i)
		// The series start never moves: every flush is cumulative.
		assert.Equal(t, pcommon.NewTimestampFromTime(seriesStart), results[0].StartTimestamp())
		assert.Equal(t, pmetric.AggregationTemporalityCumulative, all[i].ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0).Histogram().AggregationTemporality())
	}
}

func TestExemplarsKeepMostRecent(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.Exemplars.MaxPerDataPoint = 2
	sink := &consumertest.MetricsSink{}
	c := newTestConnector(t, cfg, sink)

	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i := range 5 {
		span := spans.AppendEmpty()
		span.SetTraceID(pcommon.TraceID{byte(i + 1)})
		span.SetSpanID(pcommon.SpanID{byte(i + 1)})
		ev := span.Events().AppendEmpty()
		ev.SetName(evalconv.EventName)
		ev.Attributes().PutStr(evalconv.AttrName, "bias")
		ev.Attributes().PutDouble(evalconv.AttrScoreValue, float64(i)/10)
	}
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	require.NoError(t, c.flush(context.Background(), true)) // no value held back

	_, scores := findPoints(sink.AllMetrics()[0], "bias", "")
	require.Len(t, scores, 1)
	ex := scores[0].Exemplars()
	require.Equal(t, 2, ex.Len())
	assert.Equal(t, pcommon.TraceID{4}, ex.At(0).TraceID())
	assert.Equal(t, pcommon.SpanID{5}, ex.At(1).SpanID())
	assert.InDelta(t, 0.4, ex.At(1).DoubleValue(), 1e-9)
}

func TestMalformedEventsAreSkippedWithoutPanic(t *testing.T) {
	sink := &consumertest.MetricsSink{}
	c := newTestConnector(t, createDefaultConfig(), sink)

	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	add := func(f func(pcommon.Map)) {
		ev := span.Events().AppendEmpty()
		ev.SetName(evalconv.EventName)
		f(ev.Attributes())
	}
	add(func(m pcommon.Map) {}) // no name: skipped
	add(func(m pcommon.Map) { m.PutStr(evalconv.AttrName, "") })
	add(func(m pcommon.Map) { m.PutEmptyMap(evalconv.AttrName) }) // odd type: stringified
	add(func(m pcommon.Map) {
		m.PutStr(evalconv.AttrName, "x")
		m.PutDouble(evalconv.AttrScoreValue, math.NaN())
	})
	add(func(m pcommon.Map) {
		m.PutStr(evalconv.AttrName, "x")
		m.PutDouble(evalconv.AttrScoreValue, math.Inf(1))
	})
	add(func(m pcommon.Map) { m.PutStr(evalconv.AttrName, "x"); m.PutEmptySlice(evalconv.AttrScoreValue) })
	add(func(m pcommon.Map) { m.PutStr(evalconv.AttrName, "x"); m.PutStr(evalconv.AttrScoreValue, " 0.25 ") })

	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	require.NoError(t, c.flush(context.Background(), true)) // no value held back
	md := sink.AllMetrics()[0]
	results, scores := findPoints(md, "x", "")
	require.Len(t, results, 1)
	assert.Equal(t, int64(4), results[0].IntValue())
	require.Len(t, scores, 1)
	assert.Equal(t, uint64(1), scores[0].Count()) // only the numeric string
	assert.InDelta(t, 0.25, scores[0].Sum(), 1e-9)
	results, _ = findPoints(md, "{}", "")
	assert.Len(t, results, 1)
}

func TestNoEventsSendsNothing(t *testing.T) {
	sink := &consumertest.MetricsSink{}
	c := newTestConnector(t, createDefaultConfig(), sink)
	td := ptrace.NewTraces()
	td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("plain")
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	require.NoError(t, c.Shutdown(context.Background()))
	require.NoError(t, c.Shutdown(context.Background()))
	assert.Empty(t, sink.AllMetrics())
}

func TestFlushLoopSendsOnInterval(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.MetricsFlushInterval = 10 * time.Millisecond
	cfg.NewSeriesHold = 0 // one flush at zero, then the counts
	sink := &consumertest.MetricsSink{}
	c := newTestConnector(t, cfg, sink)
	require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))

	td, err := golden.ReadTraces("testdata/mixed/input.yaml")
	require.NoError(t, err)
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	require.Eventually(t, func() bool { return len(sink.AllMetrics()) >= 2 }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, c.Shutdown(context.Background()))

	// From the second flush on, the passes of chatbot/gpt-4o and
	// support-agent/llama3.1 (a third set has only failures: its pass
	// series stays at zero).
	var passed []int64
	results, _ := findPoints(sink.AllMetrics()[1], "bias", "pass")
	for _, dp := range results {
		if dp.IntValue() > 0 {
			passed = append(passed, dp.IntValue())
		}
	}
	assert.Len(t, results, 3)
	assert.Len(t, passed, 2)
}
