package llmevalprocessor

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/plogtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadata"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadatatest"
	"github.com/llm-eval/llm_eval/scoring"
)

// logsHarness runs a logs instance made by the factory path, with fake
// scorers, into a sink.
type logsHarness struct {
	t    *testing.T
	p    *logsProcessor
	sink *consumertest.LogsSink
	tel  *componenttest.Telemetry
}

func newLogsHarness(t *testing.T, cfg *Config, scorers ...scoring.Scorer) *logsHarness {
	t.Helper()
	require.NoError(t, confmap.Validate(cfg))
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	sink := new(consumertest.LogsSink)
	lp, err := createLogsWith(fakeJudge(scorers))(context.Background(), metadatatest.NewSettings(tel), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, lp.Start(context.Background(), componenttest.NewNopHost()))
	h := &logsHarness{t: t, p: lp.(*logsProcessor), sink: sink, tel: tel}
	t.Cleanup(func() { _ = lp.Shutdown(context.Background()) })
	return h
}

func fakeJudge(scorers []scoring.Scorer) judgeBuilder {
	return func(context.Context, *Config, component.Host, component.TelemetrySettings, judgeHooks) (judgeSet, error) {
		return judgeSet{scorers: scorers}, nil
	}
}

// consume sends ld and checks that the same, unchanged batch was forwarded
// before any evaluation.
func (h *logsHarness) consume(ld plog.Logs) {
	h.t.Helper()
	want := plog.NewLogs()
	ld.CopyTo(want)
	before := len(h.sink.AllLogs())
	require.NoError(h.t, h.p.ConsumeLogs(context.Background(), ld))
	all := h.sink.AllLogs()
	require.Greater(h.t, len(all), before)
	require.NoError(h.t, plogtest.CompareLogs(want, all[before]), "the input batch is forwarded at once and unchanged")
}

// split separates the sink's output into the forwarded input records and
// the result records.
func (h *logsHarness) split() (inputs, results []plog.Logs) {
	for _, ld := range h.sink.AllLogs() {
		if isResultBatch(ld) {
			results = append(results, ld)
		} else {
			inputs = append(inputs, ld)
		}
	}
	return inputs, results
}

func isResultBatch(ld plog.Logs) bool {
	n, res := 0, 0
	for _, rl := range ld.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, rec := range sl.LogRecords().All() {
				n++
				if rec.EventName() == evalconv.EventName {
					res++
				}
			}
		}
	}
	return n > 0 && res == n
}

// waitIdle waits until no call is being joined or has unfinished evaluations.
func (h *logsHarness) waitIdle() {
	h.t.Helper()
	require.Eventually(h.t, func() bool {
		return h.p.joiner.Stats().Calls == 0 && unfinishedCount(h.p.core.store) == 0
	}, 10*time.Second, 5*time.Millisecond)
}

// mergeLogs puts every batch's resource logs into one Logs, timestamps of
// result records zeroed. Batches are taken in the order of their first
// record's trace and span id: calls finish in any order.
func mergeLogs(batches []plog.Logs) plog.Logs {
	key := func(ld plog.Logs) string {
		rec := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
		return rec.TraceID().String() + rec.SpanID().String()
	}
	batches = slices.Clone(batches)
	slices.SortStableFunc(batches, func(a, b plog.Logs) int { return cmp.Compare(key(a), key(b)) })
	out := plog.NewLogs()
	for _, ld := range batches {
		for _, rl := range ld.ResourceLogs().All() {
			dst := out.ResourceLogs().AppendEmpty()
			rl.CopyTo(dst)
			for _, sl := range dst.ScopeLogs().All() {
				for _, rec := range sl.LogRecords().All() {
					rec.SetTimestamp(pcommon.Timestamp(0))
					rec.SetObservedTimestamp(pcommon.Timestamp(0))
				}
			}
		}
	}
	return out
}

func readLogsFile(t *testing.T, name string) plog.Logs {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(otlpTestdata, "logs", name))
	require.NoError(t, err)
	ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(raw)
	require.NoError(t, err)
	return ld
}

// TestGoldenLogs feeds GenAI log events of both styles through the logs
// instance and compares the result records with testdata/golden/logs_*.yaml.
func TestGoldenLogs(t *testing.T) {
	tests := []struct {
		name    string
		batches []string // testdata/otlp/logs files, one batch each
	}{
		{name: "details_structured", batches: []string{"details_structured.json"}},
		{name: "details_string_body", batches: []string{"details_string_body.json"}},
		{name: "message_events_one_batch", batches: []string{"message_events_one_batch.json"}},
		{name: "message_events_split", batches: []string{"message_events_split_1.json", "message_events_split_2.json"}},
		{name: "capture_off", batches: []string{"capture_off.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newLogsHarness(t, testConfig(scoring.Bias, scoring.Hallucination, scoring.PromptAlignment),
				echoScorer(scoring.Bias), echoScorer(scoring.Hallucination), echoScorer(scoring.PromptAlignment))
			inputRecords := 0
			var sent []plog.Logs
			for _, f := range tt.batches {
				ld := readLogsFile(t, f)
				inputRecords += ld.LogRecordCount()
				pristine := plog.NewLogs()
				ld.CopyTo(pristine)
				sent = append(sent, pristine)
				h.consume(ld)
			}
			h.waitIdle()
			require.NoError(t, h.p.Shutdown(context.Background()))

			inputs, results := h.split()
			require.Len(t, inputs, len(sent), "each input batch forwarded exactly once")
			for i := range sent {
				require.NoError(t, plogtest.CompareLogs(sent[i], inputs[i]))
			}
			require.NotEmpty(t, results)

			actual := mergeLogs(results)
			path := filepath.Join("testdata", "golden", "logs_"+tt.name+".yaml")
			if *update {
				require.NoError(t, golden.WriteLogs(t, path, actual))
			}
			expected, err := golden.ReadLogs(path)
			require.NoError(t, err)
			require.NoError(t, plogtest.CompareLogs(expected, actual,
				plogtest.IgnoreResourceLogsOrder(), plogtest.IgnoreScopeLogsOrder(), plogtest.IgnoreLogRecordsOrder()))
		})
	}
}

// TestLogsSharesEvaluatorWithTraces checks that the traces and logs
// instances of one component use one store, started once; the first
// Shutdown stops it, so a logs call after the traces instance stopped
// passes with shutdown markers, delivered to the still running consumer.
func TestLogsSharesEvaluatorWithTraces(t *testing.T) {
	cfg := testConfig(scoring.Bias)
	set := testSettingsFor(t)
	build := fakeJudge([]scoring.Scorer{fixedScorer(scoring.Bias, 0.1, scoring.LabelPass)})
	evs := newEvaluators(build)
	f := processor.NewFactory(metadata.Type, createDefaultConfig,
		processor.WithTraces(evs.createTraces, metadata.TracesStability),
		processor.WithLogs(evs.createLogs, metadata.LogsStability))
	tp, err := f.CreateTraces(context.Background(), set, cfg, new(consumertest.TracesSink))
	require.NoError(t, err)
	logSink := new(consumertest.LogsSink)
	lp, err := f.CreateLogs(context.Background(), set, cfg, logSink)
	require.NoError(t, err)
	other, err := f.CreateLogs(context.Background(), set, testConfig(scoring.Bias), new(consumertest.LogsSink))
	require.NoError(t, err)

	traces, logs := tp.(*llmEvalProcessor), lp.(*logsProcessor)
	assert.Same(t, traces.store, logs.core.store, "one store per component config")
	assert.NotSame(t, traces.store, other.(*logsProcessor).core.store, "another config has its own")

	host := componenttest.NewNopHost()
	require.NoError(t, tp.Start(context.Background(), host))
	require.NoError(t, lp.Start(context.Background(), host))
	require.NoError(t, other.Start(context.Background(), host))

	require.NoError(t, lp.ConsumeLogs(context.Background(), readLogsFile(t, "details_structured.json")))
	require.Eventually(t, func() bool {
		_, results := (&logsHarness{sink: logSink}).split()
		return len(results) == 1
	}, 10*time.Second, 5*time.Millisecond, "the shared store evaluates the logs call")
	_, results := (&logsHarness{sink: logSink}).split()
	assert.Equal(t, []string{"pass"}, onlyValue(resultsBySpan(results)))

	require.NoError(t, tp.Shutdown(context.Background()))
	assert.Equal(t, evalstore.RejectedClosed, traces.store.Admit(context.Background(), nil), "the first Shutdown stops the store")
	require.NoError(t, lp.ConsumeLogs(context.Background(), readLogsFile(t, "details_structured.json")))
	_, results = (&logsHarness{sink: logSink}).split()
	require.Len(t, results, 2)
	assert.Equal(t, []string{"error:" + string(scoring.ErrorShutdown)}, onlyValue(resultsBySpan(results[1:])))
	require.NoError(t, lp.Shutdown(context.Background()))

	assert.Equal(t, evalstore.Admitted, other.(*logsProcessor).core.store.Admit(context.Background(), func() evalstore.Subject {
		return &fakeSubject{}
	}), "another component's store is not stopped")
	require.NoError(t, other.Shutdown(context.Background()))
	assert.False(t, evs.has(cfg), "forgotten after the last Shutdown")
}

// onlyValue is the results of the one call in m.
func onlyValue(m map[string][]string) []string {
	for _, v := range m {
		if len(m) == 1 {
			return v
		}
	}
	return nil
}

// fakeSubject is a subject that discards its results.
type fakeSubject struct{}

func (*fakeSubject) Case(evalstore.Scorer) scoring.Case  { return scoring.Case{} }
func (*fakeSubject) Skips(evalstore.Scorer) bool         { return false }
func (*fakeSubject) Leave(context.Context, []evalResult) {}
func (*fakeSubject) Late(context.Context, evalResult)    {}

func testSettingsFor(t *testing.T) processor.Settings {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := metadatatest.NewSettings(tel)
	set.ID = component.NewID(metadata.Type)
	return set
}
