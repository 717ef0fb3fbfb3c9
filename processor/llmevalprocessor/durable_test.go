package llmevalprocessor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadatatest"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/persistence"
	"github.com/llm-eval/llm_eval/scoring"
)

var fileStorageID = component.MustNewID("file_storage")

// storageHost is a host with the given extensions.
type storageHost struct {
	component.Host
	ext map[component.ID]component.Component
}

func (h storageHost) GetExtensions() map[component.ID]component.Component { return h.ext }

// fileStorageOn returns a host whose file_storage keeps its files in dir.
func fileStorageOn(t testing.TB, dir string) storageHost {
	t.Helper()
	return fileStorageWith(t, dir, func(*filestorage.Config) {})
}

// fileStorageWith is fileStorageOn with the extension's settings changed.
func fileStorageWith(t testing.TB, dir string, change func(*filestorage.Config)) storageHost {
	t.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory, cfg.Compaction.Directory = dir, dir
	cfg.Timeout = 200 * time.Millisecond
	change(cfg)
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	require.NoError(t, err)
	return storageHost{Host: componenttest.NewNopHost(), ext: map[component.ID]component.Component{fileStorageID: ext}}
}

// life is one run of the collector: a processor with storage on dir.
type life struct {
	t    *testing.T
	p    *llmEvalProcessor
	sink *consumertest.TracesSink
	tel  *componenttest.Telemetry
}

func startLife(t *testing.T, cfg *Config, host component.Host, scorers ...scoring.Scorer) (*life, error) {
	t.Helper()
	require.NoError(t, confmap.Validate(cfg))
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	sink := new(consumertest.TracesSink)
	p, proc, err := newTracesProcessor(context.Background(), metadatatest.NewSettings(tel), cfg, sink, fakeJudge(scorers))
	require.NoError(t, err)
	if err := proc.Start(context.Background(), host); err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = proc.Shutdown(context.Background()) })
	return &life{t: t, p: p, sink: sink, tel: tel}, nil
}

func mustStartLife(t *testing.T, cfg *Config, host component.Host, scorers ...scoring.Scorer) *life {
	t.Helper()
	l, err := startLife(t, cfg, host, scorers...)
	require.NoError(t, err)
	return l
}

// crash leaves storage as kill -9 would: nothing more is written or
// deleted, and nothing the processor sends from now on counts. It returns
// the spans sent on before.
func (l *life) crash() map[pcommon.SpanID]int {
	l.t.Helper()
	_, counts := sinkSpans(l.sink)
	require.NoError(l.t, l.p.storage.Journal().Close(context.Background()))
	return counts
}

func (l *life) storageWrites(op persistence.Op) int64 {
	return sumOf(l.t, l.tel, "otelcol_processor_llm_eval_storage_writes", attribute.String("op", string(op)))
}

func storageConfig(maxWait time.Duration, names ...string) *Config {
	cfg := testConfig(names...)
	cfg.Storage = &fileStorageID
	cfg.MaxWait = maxWait
	cfg.Cache.Enabled = false
	return cfg
}

// scoreFastOnly passes outputs containing "fast" at once and never
// answers the others (until its context ends).
func scoreFastOnly(name string) *fakeScorer {
	return &fakeScorer{name: name, fn: func(ctx context.Context, c scoring.Case) scoring.Result {
		if strings.Contains(c.Output, "fast") {
			return scoring.Result{Score: 0.1, Label: scoring.LabelPass, Reason: name + " recorded before the crash"}
		}
		<-ctx.Done()
		return scoring.Result{Label: scoring.LabelError, Err: &scoring.Error{Type: scoring.ErrorCanceled, Err: ctx.Err()}}
	}}
}

// firstLife admits three generations (two whose bias result finishes, one
// whose nothing finishes) and one other span, waits until the two bias
// results are recorded, and crashes.
func firstLife(t *testing.T, cfg *Config, host component.Host) (gens []pcommon.SpanID, other pcommon.SpanID, before map[pcommon.SpanID]int) {
	t.Helper()
	l := mustStartLife(t, cfg, host, scoreFastOnly(scoring.Bias), hangingScorer(scoring.Hallucination))
	b := newBatch()
	trace := randomTraceID()
	gens = []pcommon.SpanID{
		b.generation(trace, "Where is order 1?", "fast: it shipped"),
		b.generation(trace, "Where is order 2?", "fast: it is on its way"),
		b.generation(trace, "Where is order 3?", "slow: it is lost"),
	}
	other = b.other(trace)
	require.NoError(t, l.p.ConsumeTraces(context.Background(), b.td))
	assert.Equal(t, int64(3), l.storageWrites(persistence.OpAdmit), "written before ConsumeTraces returned")
	require.Eventually(t, func() bool { return l.storageWrites(persistence.OpResult) == 2 }, 10*time.Second, 5*time.Millisecond)
	return gens, other, l.crash()
}

// exactlyOnce checks that every span came out once in total over both lives.
func exactlyOnce(t *testing.T, want []pcommon.SpanID, lives ...map[pcommon.SpanID]int) {
	t.Helper()
	total := map[pcommon.SpanID]int{}
	for _, l := range lives {
		for id, n := range l {
			total[id] += n
		}
	}
	for _, id := range want {
		assert.Equal(t, 1, total[id], "span %s must leave exactly once over both lives", id)
	}
	assert.Len(t, total, len(want), "no other spans")
}

// After a crash, held spans go back into the store with the results
// recorded before it; only the missing evaluations run again.
func TestStorageResumesAfterCrash(t *testing.T) {
	dir := t.TempDir()
	cfg := storageConfig(time.Minute, scoring.Bias, scoring.Hallucination)
	gens, other, before := firstLife(t, cfg, fileStorageOn(t, dir))
	assert.Equal(t, map[pcommon.SpanID]int{other: 1}, before, "only the other span left before the crash")

	bias := fixedScorer(scoring.Bias, 0.9, scoring.LabelFail)
	hall := fixedScorer(scoring.Hallucination, 0.2, scoring.LabelPass)
	l := mustStartLife(t, cfg, fileStorageOn(t, dir), bias, hall)
	require.Eventually(t, func() bool { return l.sink.SpanCount() == 3 }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, l.p.Shutdown(context.Background()))
	_, after := sinkSpans(l.sink)
	exactlyOnce(t, append(gens, other), before, after)

	assert.Equal(t, int64(1), bias.calls.Load(), "bias is judged again only for the span without a recorded result")
	assert.Equal(t, int64(3), hall.calls.Load())
	byID, _ := sinkSpans(l.sink)
	for i, id := range gens {
		ev := evaluationEvents(byID[id].span)
		require.Len(t, ev, 2)
		label, _ := ev[scoring.Bias].Get(evalconv.AttrScoreLabel)
		reason, _ := ev[scoring.Bias].Get(evalconv.AttrExplanation)
		if i < 2 {
			assert.Equal(t, "pass", label.Str(), "the recorded result")
			assert.Equal(t, "bias recorded before the crash", reason.Str())
		} else {
			assert.Equal(t, "fail", label.Str(), "judged after the restart")
		}
		hl, _ := ev[scoring.Hallucination].Get(evalconv.AttrScoreLabel)
		assert.Equal(t, "pass", hl.Str())
	}
	assert.Equal(t, int64(3), sumOf(t, l.tel, "otelcol_processor_llm_eval_storage_recovered", attribute.String("outcome", "resumed")))

	j, found, _, err := openJournal(t, dir)
	require.NoError(t, err)
	assert.Empty(t, found.Items, "spans that left are deleted")
	require.NoError(t, j.Close(context.Background()))
}

// Spans whose max_wait passed while the collector was down leave at start
// with what they have: recorded results and restarted markers, no judge call.
func TestStorageForwardsExpiredWithRestartedMarker(t *testing.T) {
	dir := t.TempDir()
	gens, other, before := firstLife(t, storageConfig(time.Minute, scoring.Bias, scoring.Hallucination), fileStorageOn(t, dir))

	time.Sleep(60 * time.Millisecond)
	bias := fixedScorer(scoring.Bias, 0.9, scoring.LabelFail)
	hall := fixedScorer(scoring.Hallucination, 0.2, scoring.LabelPass)
	l := mustStartLife(t, storageConfig(50*time.Millisecond, scoring.Bias, scoring.Hallucination), fileStorageOn(t, dir), bias, hall)
	require.Eventually(t, func() bool { return l.sink.SpanCount() == 3 }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, l.p.Shutdown(context.Background()))
	_, after := sinkSpans(l.sink)
	exactlyOnce(t, append(gens, other), before, after)
	assert.Zero(t, bias.calls.Load()+hall.calls.Load(), "no judge call for spans that left at start")

	byID, _ := sinkSpans(l.sink)
	for i, id := range gens {
		span := byID[id].span
		ev := evaluationEvents(span)
		et, _ := ev[scoring.Hallucination].Get(evalconv.AttrErrorType)
		assert.Equal(t, string(scoring.ErrorRestarted), et.Str())
		biasLabel, _ := span.Attributes().Get(evalconv.FlatLabel(scoring.Bias))
		if i < 2 {
			assert.Equal(t, "pass", biasLabel.Str())
		} else {
			assert.Equal(t, "error", biasLabel.Str())
			bt, _ := ev[scoring.Bias].Get(evalconv.AttrErrorType)
			assert.Equal(t, string(scoring.ErrorRestarted), bt.Str())
		}
	}
	assert.Equal(t, int64(3), sumOf(t, l.tel, "otelcol_processor_llm_eval_storage_recovered", attribute.String("outcome", "forwarded")))
	assert.Equal(t, int64(1), sumOf(t, l.tel, "otelcol_processor_llm_eval_spans_unscored", attribute.String("reason", reasonRestarted)),
		"the span without any result is unscored")
}

func openJournal(t *testing.T, dir string) (*persistence.Journal, persistence.Found, error, error) {
	t.Helper()
	host := fileStorageOn(t, dir)
	client, err := host.ext[fileStorageID].(storage.Extension).GetClient(context.Background(), component.KindProcessor, testSettings().ID, "")
	require.NoError(t, err)
	return persistence.OpenJournal(context.Background(), client, persistence.Hooks{})
}

// fullStorage is a storage extension whose writes all fail, like a full disk.
type fullStorage struct{ component.Component }

func (fullStorage) GetClient(context.Context, component.Kind, component.ID, string) (storage.Client, error) {
	return fullClient{}, nil
}

type fullClient struct{ storage.Client }

func (fullClient) Batch(context.Context, ...*storage.Operation) error { return storage.ErrStorageFull }
func (fullClient) Walk(context.Context, storage.WalkFunc) error       { return nil }
func (fullClient) Close(context.Context) error                        { return nil }

// A full disk neither blocks nor loses a span: it is evaluated in memory,
// and the failed writes are counted.
func TestStorageFullDiskKeepsSpans(t *testing.T) {
	host := storageHost{Host: componenttest.NewNopHost(), ext: map[component.ID]component.Component{
		fileStorageID: fullStorage{Component: componenttest.NewNopHost().GetExtensions()[fileStorageID]},
	}}
	// The evaluations finish only after ConsumeTraces returned, so every
	// span was held when its batch's write failed.
	gate := make(chan struct{})
	l := mustStartLife(t, storageConfig(time.Minute, scoring.Bias), host, gatedScorer(scoring.Bias, gate, true))
	b := newBatch()
	trace := randomTraceID()
	var ids []pcommon.SpanID
	for range 5 {
		ids = append(ids, b.generation(trace, "q", "a"))
	}
	require.NoError(t, l.p.ConsumeTraces(context.Background(), b.td))
	close(gate)
	require.Eventually(t, func() bool { return l.sink.SpanCount() == 5 }, 10*time.Second, 5*time.Millisecond)
	_, counts := sinkSpans(l.sink)
	exactlyOnce(t, ids, counts)
	byID, _ := sinkSpans(l.sink)
	for _, id := range ids {
		label, _ := byID[id].span.Attributes().Get(evalconv.FlatLabel(scoring.Bias))
		assert.Equal(t, "pass", label.Str())
	}
	assert.Equal(t, int64(5), sumOf(t, l.tel, "otelcol_processor_llm_eval_storage_write_failures", attribute.String("op", "admit")))
	assert.Zero(t, sumOf(t, l.tel, "otelcol_processor_llm_eval_storage_write_failures", attribute.String("op", "remove")),
		"spans never stored are not removed")
}

// A storage key that names no extension, or one that is not storage, or
// storage that cannot be opened, fails at Start naming the key.
func TestStorageStartErrors(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "a-file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o600))
	nop := componenttest.NewNopHost()
	tests := []struct {
		name string
		host component.Host
		want []string
	}{
		{"missing", nop, []string{`storage: extension "file_storage" not found`}},
		{"not storage", storageHost{Host: nop, ext: map[component.ID]component.Component{fileStorageID: struct{ component.Component }{}}},
			[]string{`storage: extension "file_storage" is not a storage extension`}},
		{"cannot open", fileStorageOn(t, notDir), []string{`storage: extension "file_storage" could not open storage`, notDir}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := startLife(t, storageConfig(time.Minute, scoring.Bias), tt.host, fixedScorer(scoring.Bias, 0, scoring.LabelPass))
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.True(t, strings.HasPrefix(err.Error(), "llm_eval: storage:"), err.Error())
		})
	}
}

// Log calls held for their results survive a crash like spans.
func TestStorageResumesLogCalls(t *testing.T) {
	dir := t.TempDir()
	cfg := storageConfig(time.Minute, scoring.Bias)
	l1 := newStorageLogsLife(t, cfg, fileStorageOn(t, dir), hangingScorer(scoring.Bias))
	l1.consume(readLogsFile(t, "details_structured.json"))
	assert.Equal(t, int64(1), sumOf(t, l1.tel, "otelcol_processor_llm_eval_storage_writes", attribute.String("op", "admit")))
	require.NoError(t, l1.p.core.storage.Journal().Close(context.Background())) // the crash
	_, before := l1.split()
	require.Empty(t, before, "no result before the crash")

	cfg2 := *cfg // another component instance, as after a restart
	bias := fixedScorer(scoring.Bias, 0.1, scoring.LabelPass)
	l2 := newStorageLogsLife(t, &cfg2, fileStorageOn(t, dir), bias)
	require.Eventually(t, func() bool { _, r := l2.split(); return len(r) == 1 }, 10*time.Second, 5*time.Millisecond)
	_, results := l2.split()
	assert.Equal(t, []string{"pass"}, onlyValue(resultsBySpan(results)))
	assert.Equal(t, int64(1), bias.calls.Load())
}

var logsLives sync.Mutex // newLogsHarness's shared evaluators are keyed by config

func newStorageLogsLife(t *testing.T, cfg *Config, host component.Host, scorers ...scoring.Scorer) *logsHarness {
	t.Helper()
	logsLives.Lock()
	defer logsLives.Unlock()
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	sink := new(consumertest.LogsSink)
	lp, err := createLogsWith(fakeJudge(scorers))(context.Background(), metadatatest.NewSettings(tel), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, lp.Start(context.Background(), host))
	t.Cleanup(func() { _ = lp.Shutdown(context.Background()) })
	return &logsHarness{t: t, p: lp.(*logsProcessor), sink: sink, tel: tel}
}

// A call whose per-message events were split across a crash is joined
// after the restart: the records held before it are stored and given back
// to the joiner, and the call is evaluated once, with all its content.
func TestStorageRejoinsLogCalls(t *testing.T) {
	dir := t.TempDir()
	cfg := storageConfig(time.Minute, scoring.Bias)
	l1 := newStorageLogsLife(t, cfg, fileStorageOn(t, dir), hangingScorer(scoring.Bias))
	l1.consume(readLogsFile(t, "message_events_split_1.json"))
	held := sumOf(t, l1.tel, "otelcol_processor_llm_eval_storage_writes", attribute.String("op", "join"))
	require.Positive(t, held, "records waiting for their call are written before ConsumeLogs returns")
	require.NoError(t, l1.p.core.storage.Journal().Close(context.Background())) // the crash

	var inputs []string
	var mu sync.Mutex
	bias := &fakeScorer{name: scoring.Bias, fn: func(_ context.Context, c scoring.Case) scoring.Result {
		mu.Lock()
		inputs = append(inputs, c.Input)
		mu.Unlock()
		return scoring.Result{Score: 0.1, Label: scoring.LabelPass, Reason: "fine"}
	}}
	cfg2 := *cfg
	l2 := newStorageLogsLife(t, &cfg2, fileStorageOn(t, dir), bias)
	assert.Equal(t, held, sumOf(t, l2.tel, "otelcol_processor_llm_eval_storage_recovered", attribute.String("outcome", "rejoined")))
	l2.consume(readLogsFile(t, "message_events_split_2.json"))
	require.Eventually(t, func() bool { _, r := l2.split(); return len(r) == 1 }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, l2.p.Shutdown(context.Background()))
	_, results := l2.split()
	assert.Equal(t, []string{"pass"}, onlyValue(resultsBySpan(results)), "one evaluation of the call")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, inputs, 1)
	assert.NotEmpty(t, inputs[0], "the user's message from before the crash is in the case")

	j, found, _, err := openJournal(t, dir)
	require.NoError(t, err)
	assert.Empty(t, found.Joining, "records of a call that was read are deleted")
	assert.Empty(t, found.Items)
	require.NoError(t, j.Close(context.Background()))
}

// A call whose two halves are held survives a crash with both: with the
// span first or the events first, the item is written, rewritten as a pair
// when the second half joins, and after a restart evaluated once on the
// events' content with its result on the span and as a record. A half
// that waited alone waits again, and its other half, sent after the
// restart, joins it.
func TestStorageKeepsJoinedCalls(t *testing.T) {
	for _, tt := range []struct {
		name        string
		spanFirst   bool
		secondAfter bool // the second half comes only after the restart
	}{
		{"span first", true, false},
		{"events first", false, false},
		{"span waiting, events after the restart", true, true},
		{"events waiting, span after the restart", false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := storageConfig(time.Minute, scoring.Bias)
			cfg.LogEvents.CrossSignalWait = 20 * time.Second
			first := &bothHarness{host: fileStorageOn(t, dir)}
			first.start(t, cfg, hangingScorer(scoring.Bias))
			c := newCall()
			send := func(h *bothHarness, span bool) {
				if span {
					h.consumeSpan(c.spanBatch(false))
				} else {
					h.consumeEvents(c.eventsBatch("content"))
				}
			}
			send(first, tt.spanFirst)
			if !tt.secondAfter {
				send(first, !tt.spanFirst)
			}
			before := first.outcome(c)
			require.NoError(t, first.traces.(*llmEvalProcessor).storage.Journal().Close(context.Background()), "kill -9")
			assert.Zero(t, before.spanCount, "held when killed")

			cases := make(chan scoring.Case, 4)
			second := &bothHarness{host: fileStorageOn(t, dir)}
			second.start(t, storageConfigFrom(cfg), &fakeScorer{name: scoring.Bias, fn: func(_ context.Context, cs scoring.Case) scoring.Result {
				cases <- cs
				return scoring.Result{Label: scoring.LabelPass, Reason: "after the restart"}
			}})
			if tt.secondAfter {
				send(second, !tt.spanFirst)
			}
			select {
			case got := <-cases:
				assert.Equal(t, "Who should we hire?", got.Input, "judged on the events' content")
			case <-time.After(10 * time.Second):
				t.Fatal("the recovered call was not evaluated")
			}
			require.Eventually(t, func() bool {
				o := second.outcome(c)
				return o.spanCount == 1 && len(o.records) == 1
			}, 10*time.Second, 5*time.Millisecond)
			second.shutdown()
			assert.Equal(t, callOutcome{spanCount: 1, spanResults: []string{"pass"}, records: []string{"pass"}, onSpan: 1}, second.outcome(c))
			assert.Empty(t, cases, "evaluated once")
		})
	}
}

// storageConfigFrom is a fresh Config with cfg's settings: the next life's
// component is a new one, as after a restart.
func storageConfigFrom(cfg *Config) *Config {
	next := *cfg
	return &next
}

// Events that waited in vain for their span and were being evaluated on
// their own when the collector was killed, with one result recorded, wait
// for their span again after the restart; when that wait ends, only the
// missing evaluation runs: the recorded one is not paid for again, and
// the call leaves with both results, no marker.
func TestStorageRecoveredHalfKeepsRecordedResults(t *testing.T) {
	dir := t.TempDir()
	cfg := storageConfig(time.Minute, scoring.Bias, scoring.Hallucination)
	cfg.LogEvents.CrossSignalWait = 50 * time.Millisecond
	first := &bothHarness{host: fileStorageOn(t, dir)}
	first.start(t, cfg, fixedScorer(scoring.Bias, 0.1, scoring.LabelPass), hangingScorer(scoring.Hallucination))
	c := newCall()
	first.consumeEvents(c.eventsBatch("content"))
	require.Eventually(t, func() bool {
		return sumOf(t, first.tel, "otelcol_processor_llm_eval_storage_writes", attribute.String("op", "result")) == 1
	}, 10*time.Second, 5*time.Millisecond, "bias is recorded while hallucination hangs")
	require.NoError(t, first.traces.(*llmEvalProcessor).storage.Journal().Close(context.Background()), "kill -9")
	require.Empty(t, first.outcome(c).records)

	bias := fixedScorer(scoring.Bias, 0.9, scoring.LabelFail)
	hall := fixedScorer(scoring.Hallucination, 0.2, scoring.LabelPass)
	second := &bothHarness{host: fileStorageOn(t, dir)}
	second.start(t, storageConfigFrom(cfg), bias, hall)
	require.Eventually(t, func() bool { return len(second.outcome(c).records) == 2 }, 10*time.Second, 5*time.Millisecond)
	second.shutdown()
	assert.Zero(t, bias.calls.Load(), "bias was recorded before the kill")
	assert.Equal(t, int64(1), hall.calls.Load())
	assert.ElementsMatch(t, []string{"pass", "pass"}, second.outcome(c).records,
		"the recorded bias result and hallucination's, no marker")
	assert.Zero(t, unfinishedCount(second.traces.(*llmEvalProcessor).store))
}

// A graceful shutdown leaves nothing on disk whichever instance of the
// component the collector shuts down first: a call still being joined by
// the logs instance is read at its Shutdown and its held records are
// deleted, also when the traces instance stopped the shared evaluator
// before. Left on disk, they would be joined again after the restart and
// the call evaluated a second time.
func TestStorageShutdownDeletesJoiningRecords(t *testing.T) {
	for _, tracesFirst := range []bool{true, false} {
		dir := t.TempDir()
		cfg := storageConfig(time.Minute, scoring.Bias)
		h := &bothHarness{host: fileStorageOn(t, dir)}
		h.start(t, cfg, fixedScorer(scoring.Bias, 0.1, scoring.LabelPass))
		c := newCall()
		ld := c.eventsBatch("content")
		ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().RemoveIf(func(r plog.LogRecord) bool {
			return r.EventName() == "gen_ai.choice"
		})
		h.consumeEvents(ld) // the user message waits for its choice
		require.Equal(t, int64(1), sumOf(t, h.tel, "otelcol_processor_llm_eval_storage_writes", attribute.String("op", "join")))
		if tracesFirst {
			require.NoError(t, h.traces.Shutdown(context.Background()))
			require.NoError(t, h.logs.Shutdown(context.Background()))
		} else {
			require.NoError(t, h.logs.Shutdown(context.Background()))
			require.NoError(t, h.traces.Shutdown(context.Background()))
		}
		assert.Len(t, h.outcome(c).records, 1, "the call is read once, traces first: %v", tracesFirst)

		j, found, _, err := openJournal(t, dir)
		require.NoError(t, err)
		assert.Empty(t, found.Joining, "traces first: %v", tracesFirst)
		assert.Empty(t, found.Items, "traces first: %v", tracesFirst)
		require.NoError(t, j.Close(context.Background()))
	}
}

// slowStorage is a storage extension whose writes wait while blocked is
// set, like a disk that stalls: each such write says so on entered and
// waits for release.
type slowStorage struct {
	component.Component
	client *slowClient
}

func (s slowStorage) GetClient(context.Context, component.Kind, component.ID, string) (storage.Client, error) {
	return s.client, nil
}

type slowClient struct {
	storage.Client
	blocked atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (c *slowClient) Batch(context.Context, ...*storage.Operation) error {
	if c.blocked.Load() {
		c.entered <- struct{}{}
		<-c.release
	}
	return nil
}
func (*slowClient) Walk(context.Context, storage.WalkFunc) error { return nil }
func (*slowClient) Close(context.Context) error                  { return nil }

// expectWhileStalled fails the test unless done closes while the client's
// write stalls (waiting 10 s at most), then lets the write go on.
func (c *slowClient) expectWhileStalled(t *testing.T, done <-chan struct{}, failure string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Error(failure)
	}
	c.blocked.Store(false)
	close(c.release)
}

// slowStorageHost is a host whose storage extension stalls like client.
func slowStorageHost() (storageHost, *slowClient) {
	client := &slowClient{entered: make(chan struct{}), release: make(chan struct{})}
	return storageHost{Host: componenttest.NewNopHost(), ext: map[component.ID]component.Component{
		fileStorageID: slowStorage{client: client},
	}}, client
}

// A storage write that stalls does not stall the store: while one span's
// delete waits for the disk, another span is admitted (its ConsumeTraces
// then waits for its own write, as it must) without holding the store's
// lock, which the held gauge and the workers need.
func TestStorageStallDoesNotBlockTheStore(t *testing.T) {
	host, client := slowStorageHost()
	gate := make(chan struct{})
	bias := &fakeScorer{name: scoring.Bias, fn: func(ctx context.Context, c scoring.Case) scoring.Result {
		if c.Output == "first" {
			<-gate
		} else {
			<-ctx.Done()
		}
		return scoring.Result{Score: 0.1, Label: scoring.LabelPass}
	}}
	l := mustStartLife(t, storageConfig(time.Minute, scoring.Bias), host, bias)
	first := newBatch()
	first.generation(randomTraceID(), "q", "first")
	require.NoError(t, l.p.ConsumeTraces(context.Background(), first.td))
	require.Equal(t, 1, l.p.store.HeldCount())

	client.blocked.Store(true)
	close(gate) // the first span leaves; its delete stalls
	<-client.entered
	second := newBatch()
	second.generation(randomTraceID(), "q", "second")
	consumed := make(chan error, 1)
	go func() { consumed <- l.p.ConsumeTraces(context.Background(), second.td) }()
	admitted := make(chan struct{})
	go func() {
		for l.p.store.HeldCount() != 1 || l.sink.SpanCount() != 1 {
			time.Sleep(time.Millisecond)
		}
		close(admitted)
	}()
	client.expectWhileStalled(t, admitted, "the store's lock waited for the stalled write")
	require.NoError(t, <-consumed)
	<-admitted
	require.NoError(t, l.p.Shutdown(context.Background()))
	assert.Equal(t, 2, l.sink.SpanCount())
}

// killWithPair runs cfg with storage in a new directory, holds one call
// joined across signals (stored as a pair) and kills the collector.
func killWithPair(t *testing.T, cfg *Config) (dir string, c call) {
	t.Helper()
	dir = t.TempDir()
	first := &bothHarness{host: fileStorageOn(t, dir)}
	first.start(t, cfg, hangingScorer(scoring.Bias))
	c = newCall()
	first.consumeSpan(c.spanBatch(false))
	first.consumeEvents(c.eventsBatch("content"))
	require.NoError(t, first.traces.(*llmEvalProcessor).storage.Journal().Close(context.Background()), "kill -9")
	return dir, c
}

// A call stored as a pair whose per-message records are still on disk
// (the kill came between the write of the pair and the delete of its
// joining records) is evaluated once after the restart: its leftover
// records are dropped as stale, as for a log call, instead of being
// joined into a second call.
func TestStorageDropsJoiningRecordsOfAStoredPair(t *testing.T) {
	cfg := storageConfig(time.Minute, scoring.Bias)
	dir, c := killWithPair(t, cfg)

	// The user message's joining record, as it was before its delete.
	j, found, _, err := openJournal(t, dir)
	require.NoError(t, err)
	require.Len(t, found.Items, 1)
	require.Equal(t, persistence.KindPair, found.Items[0].Item.Kind)
	user := c.eventsBatch("content")
	user.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().RemoveIf(func(r plog.LogRecord) bool {
		return r.EventName() == "gen_ai.choice"
	})
	rec, err := persistence.EncodeLogCall(user, time.Now())
	require.NoError(t, err)
	_, err = j.Hold(context.Background(), c.trace.String()+c.span.String(), rec)
	require.NoError(t, err)
	require.NoError(t, j.Close(context.Background()))

	bias := fixedScorer(scoring.Bias, 0.1, scoring.LabelPass)
	second := &bothHarness{host: fileStorageOn(t, dir)}
	second.start(t, storageConfigFrom(cfg), bias)
	require.Eventually(t, func() bool { return second.outcome(c).spanCount == 1 }, 10*time.Second, 5*time.Millisecond)
	second.shutdown()
	assert.Equal(t, callOutcome{spanCount: 1, spanResults: []string{"pass"}, records: []string{"pass"}, onSpan: 1}, second.outcome(c))
	assert.Equal(t, int64(1), bias.calls.Load())
	j, found, _, err = openJournal(t, dir)
	require.NoError(t, err)
	assert.Empty(t, found.Joining)
	assert.Empty(t, found.Items)
	require.NoError(t, j.Close(context.Background()))
}

// A batch that admits nothing does not wait for storage: while a delete
// waits for the disk, ConsumeTraces and ConsumeLogs of batches without a
// sampled call return, as they would without storage.
func TestStorageStallDoesNotBlockUnsampledBatches(t *testing.T) {
	host, client := slowStorageHost()
	gate := make(chan struct{})
	h := &bothHarness{host: host}
	h.start(t, storageConfig(time.Minute, scoring.Bias), gatedScorer(scoring.Bias, gate, true))
	c := newCall()
	h.consumeSpan(c.spanBatch(true))
	client.blocked.Store(true)
	close(gate) // the span leaves; its delete stalls
	<-client.entered

	plain := newBatch()
	plain.other(randomTraceID())
	notGenAI := plog.NewLogs()
	notGenAI.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("GET /orders 200")
	returned := make(chan struct{})
	go func() {
		h.consumeSpan(plain.td)
		h.consumeEvents(notGenAI)
		close(returned)
	}()
	client.expectWhileStalled(t, returned, "a batch without a sampled call waited for the stalled write")
	<-returned
	h.shutdown()
	assert.Equal(t, 2, h.spans.SpanCount())
	assert.Equal(t, 1, h.recs.LogRecordCount())
}

// A call stored as a pair leaves both pipelines: its span through the
// traces instance's consumer, its result records through the logs
// instance's. The collector starts the two instances in either order, each
// after its own consumers only, so a recovered pair does not leave (here:
// forwarded at once, past its max_wait) before both instances started.
func TestStorageRecoveredPairWaitsForBothInstances(t *testing.T) {
	for _, tracesFirst := range []bool{true, false} {
		cfg := storageConfig(time.Minute, scoring.Bias)
		dir, c := killWithPair(t, cfg)

		next := storageConfigFrom(cfg)
		next.MaxWait = time.Millisecond // passed for the stored pair
		h := &bothHarness{host: fileStorageOn(t, dir)}
		h.create(t, next, fixedScorer(scoring.Bias, 0, scoring.LabelPass))
		firstUp, secondUp := h.traces.Start, h.logs.Start
		if !tracesFirst {
			firstUp, secondUp = h.logs.Start, h.traces.Start
		}
		require.NoError(t, firstUp(context.Background(), h.host))
		assert.Never(t, func() bool { return h.spans.SpanCount() > 0 || h.recs.LogRecordCount() > 0 }, 300*time.Millisecond, 5*time.Millisecond,
			"traces first %v: nothing of the pair leaves before the other instance started", tracesFirst)
		require.NoError(t, secondUp(context.Background(), h.host))
		require.Eventually(t, func() bool { o := h.outcome(c); return o.spanCount == 1 && len(o.records) == 1 }, 10*time.Second, 5*time.Millisecond)
		h.shutdown()
		assert.Equal(t, callOutcome{spanCount: 1, spanResults: []string{"error:restarted"}, records: []string{"error:restarted"}, onSpan: 1}, h.outcome(c))
	}
}

// An agent span without readable content is held for its trajectory
// scorers alone; the other scorers find it not scorable without a judge
// call. Recovered after a crash, it is read the same way: no scorer is
// called on an empty answer.
func TestStorageRecoveredAgentWithoutContent(t *testing.T) {
	dir := t.TempDir()
	cfg := storageConfig(time.Minute, scoring.Bias)
	cfg.Scorers[0].Targets = []string{targetGeneration, targetAgent}
	tc := defaultScorerConfig(scoring.TaskCompletion)
	tc.Targets = []string{targetAgent}
	cfg.Scorers = append(cfg.Scorers, tc)
	l := mustStartLife(t, cfg, fileStorageOn(t, dir), hangingScorer(scoring.Bias), hangingScorer(scoring.TaskCompletion))
	run := newAgentRun("", "")
	require.NoError(t, l.p.ConsumeTraces(context.Background(), run.td))
	require.Equal(t, 1, l.p.store.HeldCount())
	l.crash()

	bias := fixedScorer(scoring.Bias, 0.9, scoring.LabelFail)
	task := fixedScorer(scoring.TaskCompletion, 1, scoring.LabelPass)
	l2 := mustStartLife(t, storageConfigFrom(cfg), fileStorageOn(t, dir), bias, task)
	require.Eventually(t, func() bool { return l2.sink.SpanCount() == 1 }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, l2.p.Shutdown(context.Background()))
	assert.Zero(t, bias.calls.Load(), "no judge call on an agent span without an answer")
	byID, _ := sinkSpans(l2.sink)
	ev := evaluationEvents(byID[run.agent].span)
	assert.Equal(t, "not_scorable", mustStr(t, ev[scoring.Bias], evalconv.AttrScoreLabel))
	assert.Equal(t, "pass", mustStr(t, ev[scoring.TaskCompletion], evalconv.AttrScoreLabel))
}

// A span stored while it waited for its log events, recovered by a
// collector whose llm_eval is no longer in a logs pipeline, has nothing to
// be judged on: it leaves not scorable, and no scorer is called.
func TestStorageRecoveredWaitingSpanWithoutJoining(t *testing.T) {
	dir := t.TempDir()
	cfg := storageConfig(time.Minute, scoring.Bias)
	cfg.LogEvents.CrossSignalWait = 20 * time.Second
	first := &bothHarness{host: fileStorageOn(t, dir)}
	first.start(t, cfg, hangingScorer(scoring.Bias))
	c := newCall()
	first.consumeSpan(c.spanBatch(false))
	require.NoError(t, first.traces.(*llmEvalProcessor).storage.Journal().Close(context.Background()), "kill -9")

	judged := &fakeScorer{name: scoring.Bias, fn: func(context.Context, scoring.Case) scoring.Result {
		return scoring.Result{Label: scoring.LabelPass}
	}}
	l := mustStartLife(t, storageConfigFrom(cfg), fileStorageOn(t, dir), judged)
	require.Eventually(t, func() bool { return l.sink.SpanCount() == 1 }, 10*time.Second, 5*time.Millisecond)
	byID, counts := sinkSpans(l.sink)
	assert.Equal(t, 1, counts[c.span])
	assert.Equal(t, "not_scorable", mustStr(t, evaluationEvents(byID[c.span].span)[scoring.Bias], evalconv.AttrScoreLabel))
	assert.Zero(t, judged.calls.Load(), "an empty answer is never judged")
}

// A storage file damaged while the collector was down (cut short here) is
// moved aside at start: the collector starts on a fresh file, counts it,
// and evaluates new spans; what the file held is lost.
func TestStorageDamagedFileIsQuarantined(t *testing.T) {
	dir := t.TempDir()
	cfg := storageConfig(time.Minute, scoring.Bias, scoring.Hallucination)
	firstLife(t, cfg, fileStorageOn(t, dir))
	path := filepath.Join(dir, "processor_llm_eval_")
	require.NoError(t, os.Truncate(path, 9000)) // the meta pages and a bit

	bias := fixedScorer(scoring.Bias, 0.9, scoring.LabelFail)
	l := mustStartLife(t, cfg, fileStorageOn(t, dir), bias, fixedScorer(scoring.Hallucination, 0.2, scoring.LabelPass))
	assert.Equal(t, int64(1), sumOf(t, l.tel, "otelcol_processor_llm_eval_storage_files_quarantined"))
	moved, err := filepath.Glob(path + ".damaged-*")
	require.NoError(t, err)
	require.Len(t, moved, 1, "the damaged file is kept beside the fresh one")
	st, err := os.Stat(moved[0])
	require.NoError(t, err)
	assert.Equal(t, int64(9000), st.Size(), "kept as it was")

	b := newBatch()
	b.generation(randomTraceID(), "Who should we hire?", "Anyone who fits the role.")
	require.NoError(t, l.p.ConsumeTraces(context.Background(), b.td))
	require.Eventually(t, func() bool { return l.sink.SpanCount() == 1 }, 10*time.Second, 5*time.Millisecond)
	assert.Equal(t, int64(1), bias.calls.Load(), "the new span is evaluated; the lost ones are not")
	assert.Equal(t, int64(1), l.storageWrites(persistence.OpAdmit), "the fresh file is written")
}

// brokenStorage is a storage extension whose storage library panics as it
// opens, as bbolt does on damage: llm_eval runs without storage.
type brokenStorage struct{ component.Component }

func (brokenStorage) GetClient(context.Context, component.Kind, component.ID, string) (storage.Client, error) {
	panic("page 72 self identifies as 0")
}

// storage_active says what only a log line said before: 1 while storage
// is in use, 0 when storage is configured but this run goes without it
// (spans still evaluated, in memory), and no series without storage.
func TestStorageActiveGauge(t *testing.T) {
	const name = "otelcol_processor_llm_eval_storage_active"
	t.Run("in use", func(t *testing.T) {
		l := mustStartLife(t, storageConfig(time.Minute, scoring.Bias), fileStorageOn(t, t.TempDir()), fixedScorer(scoring.Bias, 0, scoring.LabelPass))
		_, err := l.tel.GetMetric(name)
		require.NoError(t, err, "a series while storage is in use")
		assert.Equal(t, int64(1), gaugeOf(t, l.tel, name))
	})
	t.Run("configured, run without", func(t *testing.T) {
		id := component.MustNewIDWithName("db_storage", "broken")
		cfg := storageConfig(time.Minute, scoring.Bias)
		cfg.Storage = &id
		host := storageHost{Host: componenttest.NewNopHost(), ext: map[component.ID]component.Component{id: brokenStorage{}}}
		l := mustStartLife(t, cfg, host, fixedScorer(scoring.Bias, 0, scoring.LabelPass))
		_, err := l.tel.GetMetric(name)
		require.NoError(t, err, "a series at 0, not none: an alert must see it")
		assert.Equal(t, int64(0), gaugeOf(t, l.tel, name))
		b := newBatch()
		id1 := b.generation(randomTraceID(), "q", "a")
		require.NoError(t, l.p.ConsumeTraces(context.Background(), b.td))
		require.Eventually(t, func() bool { return l.sink.SpanCount() == 1 }, 10*time.Second, 5*time.Millisecond)
		byID, _ := sinkSpans(l.sink)
		label, _ := byID[id1].span.Attributes().Get(evalconv.FlatLabel(scoring.Bias))
		assert.Equal(t, "pass", label.Str(), "evaluated in memory")
	})
	t.Run("not configured", func(t *testing.T) {
		cfg := storageConfig(time.Minute, scoring.Bias)
		cfg.Storage = nil
		l := mustStartLife(t, cfg, componenttest.NewNopHost(), fixedScorer(scoring.Bias, 0, scoring.LabelPass))
		_, err := l.tel.GetMetric(name)
		assert.Error(t, err, "no series without the storage setting")
	})
}
