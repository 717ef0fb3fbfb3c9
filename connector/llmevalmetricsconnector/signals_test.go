package llmevalmetricsconnector

import (
	"context"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/connector/llmevaleventsconnector"
	"github.com/llm-eval/llm_eval/connector/llmevalmetricsconnector/internal/metadata"
	"github.com/llm-eval/llm_eval/internal/evalconv"
)

// resultsAsLogs turns the evaluation span events of td into log records
// with the llm_eval_events connector, the way a Collector pipeline would.
func resultsAsLogs(t *testing.T, td ptrace.Traces) plog.Logs {
	t.Helper()
	factory := llmevaleventsconnector.NewFactory()
	sink := &consumertest.LogsSink{}
	c, err := factory.CreateTracesToLogs(context.Background(), connectortest.NewNopSettings(factory.Type()), factory.CreateDefaultConfig(), sink)
	require.NoError(t, err)
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	require.Len(t, sink.AllLogs(), 1)
	return sink.AllLogs()[0]
}

// Results made into log records by llm_eval_events give exactly the metrics
// their span events give.
func TestLogRecordsGiveTheSameMetricsAsSpanEvents(t *testing.T) {
	td, err := golden.ReadTraces("testdata/mixed/input.yaml")
	require.NoError(t, err)
	ld := resultsAsLogs(t, td)
	require.Positive(t, ld.LogRecordCount())

	fromTraces, fromLogs := &consumertest.MetricsSink{}, &consumertest.MetricsSink{}
	ct := newTestConnector(t, createDefaultConfig(), fromTraces)
	cl := newTestConnector(t, createDefaultConfig(), fromLogs)
	require.NoError(t, ct.ConsumeTraces(context.Background(), td))
	require.NoError(t, cl.ConsumeLogs(context.Background(), ld))
	require.NoError(t, ct.Shutdown(context.Background()))
	require.NoError(t, cl.Shutdown(context.Background()))

	require.Len(t, fromTraces.AllMetrics(), 1)
	require.Len(t, fromLogs.AllMetrics(), 1)
	require.NoError(t, pmetrictest.CompareMetrics(fromTraces.AllMetrics()[0], fromLogs.AllMetrics()[0],
		pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreMetricDataPointsOrder()))
}

// The traces and logs sides of one configured connector share its series:
// a result counts once whichever signal brought it, and the state is sent
// by one instance, when the last side shuts down.
func TestTracesAndLogsSidesShareOneConnector(t *testing.T) {
	factory := NewFactory()
	cfg := factory.CreateDefaultConfig()
	set := connectortest.NewNopSettings(metadata.Type)
	sink := &consumertest.MetricsSink{}
	ctx := context.Background()

	tracesSide, err := factory.CreateTracesToMetrics(ctx, set, cfg, sink)
	require.NoError(t, err)
	logsSide, err := factory.CreateLogsToMetrics(ctx, set, cfg, sink)
	require.NoError(t, err)
	assert.Same(t, tracesSide.(*evalMetricsConnector), logsSide.(*evalMetricsConnector))
	otherCfg := factory.CreateDefaultConfig()
	other, err := factory.CreateLogsToMetrics(ctx, set, otherCfg, sink)
	require.NoError(t, err)
	assert.NotSame(t, logsSide.(*evalMetricsConnector), other.(*evalMetricsConnector), "another component id gets its own connector")
	require.NoError(t, other.Shutdown(ctx))

	host := componenttest.NewNopHost()
	require.NoError(t, tracesSide.Start(ctx, host))
	require.NoError(t, logsSide.Start(ctx, host))

	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "chat")
	span := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.Attributes().PutStr(evalconv.AttrRequestModel, "gpt-4o")
	ev := span.Events().AppendEmpty()
	ev.SetName(evalconv.EventName)
	ev.Attributes().PutStr(evalconv.AttrName, "bias")
	ev.Attributes().PutStr(evalconv.AttrScoreLabel, "pass")
	ev.Attributes().PutDouble(evalconv.AttrScoreValue, 0.1)
	ld := resultsAsLogs(t, td)

	require.NoError(t, tracesSide.ConsumeTraces(ctx, td))
	require.NoError(t, logsSide.ConsumeLogs(ctx, ld))
	require.NoError(t, tracesSide.Shutdown(ctx))
	assert.Empty(t, sink.AllMetrics(), "the logs side still runs: nothing is flushed yet")
	require.NoError(t, logsSide.ConsumeLogs(ctx, ld))
	require.NoError(t, logsSide.Shutdown(ctx))

	require.Len(t, sink.AllMetrics(), 1)
	results, scores := findPoints(sink.AllMetrics()[0], "bias", "pass")
	require.Len(t, results, 1, "one series for both signals")
	assert.Equal(t, int64(3), results[0].IntValue())
	require.Len(t, scores, 1)
	assert.Equal(t, uint64(3), scores[0].Count())

	again, err := factory.CreateTracesToMetrics(ctx, set, cfg, sink)
	require.NoError(t, err)
	assert.NotSame(t, logsSide.(*evalMetricsConnector), again.(*evalMetricsConnector), "a shut down connector is not handed out again")
	require.NoError(t, again.Shutdown(ctx))
}

// recordLabel sends one evaluation log record with the given record and
// resource attributes and returns the data point attribute key of its
// series, if any.
func recordLabel(t *testing.T, record, resource map[string]any, key string) (string, bool) {
	t.Helper()
	sink := &consumertest.MetricsSink{}
	c := newTestConnector(t, createDefaultConfig(), sink)
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	require.NoError(t, rl.Resource().Attributes().FromRaw(resource))
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	require.NoError(t, lr.Attributes().FromRaw(record))
	lr.SetEventName(evalconv.EventName)
	lr.Attributes().PutStr(evalconv.AttrName, "bias")
	require.NoError(t, c.ConsumeLogs(context.Background(), ld))
	require.NoError(t, c.flush(context.Background(), false))

	results, _ := findPoints(sink.AllMetrics()[0], "bias", "")
	require.Len(t, results, 1)
	v, ok := results[0].Attributes().Get(key)
	return v.Str(), ok
}

func TestLogRecordModelAndAgentName(t *testing.T) {
	tests := []struct {
		name     string
		key      string
		record   map[string]any
		resource map[string]any
		want     string // "" means no such attribute
	}{
		{name: "request model on the record", key: evalconv.AttrRequestModel, record: map[string]any{evalconv.AttrRequestModel: "gpt-4o"}, resource: map[string]any{evalconv.AttrRequestModel: "other"}, want: "gpt-4o"},
		{name: "response model on the record", key: evalconv.AttrRequestModel, record: map[string]any{evalconv.AttrResponseModel: "gpt-4o-2024"}, want: "gpt-4o-2024"},
		{name: "resource model", key: evalconv.AttrRequestModel, resource: map[string]any{evalconv.AttrRequestModel: "llama3.1"}, want: "llama3.1"},
		{name: "empty record model falls back", key: evalconv.AttrRequestModel, record: map[string]any{evalconv.AttrRequestModel: ""}, resource: map[string]any{evalconv.AttrRequestModel: "llama3.1"}, want: "llama3.1"},
		{name: "no model", key: evalconv.AttrRequestModel},
		{name: "agent on the record", key: evalconv.AttrAgentName, record: map[string]any{evalconv.AttrAgentName: "refunds"}, resource: map[string]any{evalconv.AttrAgentName: "other"}, want: "refunds"},
		{name: "agent on the resource", key: evalconv.AttrAgentName, resource: map[string]any{evalconv.AttrAgentName: "triage"}, want: "triage"},
		{name: "empty agent on the record falls back", key: evalconv.AttrAgentName, record: map[string]any{evalconv.AttrAgentName: ""}, resource: map[string]any{evalconv.AttrAgentName: "triage"}, want: "triage"},
		{name: "agent not a string", key: evalconv.AttrAgentName, record: map[string]any{evalconv.AttrAgentName: 42}},
		{name: "no agent", key: evalconv.AttrAgentName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := recordLabel(t, tt.record, tt.resource, tt.key)
			if tt.want == "" {
				assert.False(t, ok, "no %s attribute expected", tt.key)
				return
			}
			require.True(t, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

// A result record that llm_eval also wrote on its span (llm_eval.on_span)
// is counted from the span only: one call evaluated for a traces and a
// logs pipeline counts once.
func TestRecordsOfResultsOnSpansCountedOnce(t *testing.T) {
	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	ev := span.Events().AppendEmpty()
	ev.SetName(evalconv.EventName)
	ev.Attributes().PutStr(evalconv.AttrName, "bias")
	ev.Attributes().PutStr(evalconv.AttrScoreLabel, "fail")
	ev.Attributes().PutDouble(evalconv.AttrScoreValue, 1)
	onSpan := resultsAsLogs(t, td)
	onSpan.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes().PutBool(evalconv.AttrOnSpan, true)
	alone := resultsAsLogs(t, td)

	sink := &consumertest.MetricsSink{}
	c := newTestConnector(t, createDefaultConfig(), sink)
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	require.NoError(t, c.ConsumeLogs(context.Background(), onSpan))
	require.NoError(t, c.flush(context.Background(), true)) // no value held back
	results, _ := findPoints(sink.AllMetrics()[0], "bias", "fail")
	require.Len(t, results, 1)
	assert.Equal(t, int64(1), results[0].IntValue(), "the record of a result on its span is not counted again")

	require.NoError(t, c.ConsumeLogs(context.Background(), alone))
	require.NoError(t, c.flush(context.Background(), true)) // no value held back
	results, _ = findPoints(sink.AllMetrics()[len(sink.AllMetrics())-1], "bias", "fail")
	assert.Equal(t, int64(2), results[0].IntValue(), "a record of its own counts")
}
