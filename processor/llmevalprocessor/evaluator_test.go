package llmevalprocessor

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadata"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadatatest"
	"github.com/llm-eval/llm_eval/scoring"
)

// countingStorage is a storage extension whose one client counts the
// times it is opened and closed. llm_eval also asks file_storage for a
// one-time client, under a name of its own, to find its file
// (internal/persistence): that one is not counted.
type countingStorage struct {
	component.Component
	opened atomic.Int32
	closed atomic.Int32
}

func (s *countingStorage) GetClient(_ context.Context, _ component.Kind, _ component.ID, name string) (storage.Client, error) {
	if name != "" {
		return countingClient{}, nil
	}
	s.opened.Add(1)
	return countingClient{s}, nil
}

type countingClient struct{ s *countingStorage }

func (countingClient) Get(context.Context, string) ([]byte, error)        { return nil, nil }
func (countingClient) Set(context.Context, string, []byte) error          { return nil }
func (countingClient) Delete(context.Context, string) error               { return nil }
func (countingClient) Batch(context.Context, ...*storage.Operation) error { return nil }
func (countingClient) Walk(context.Context, storage.WalkFunc) error       { return nil }
func (c countingClient) Close(context.Context) error {
	if c.s != nil {
		c.s.closed.Add(1)
	}
	return nil
}

// The traces and logs instances of one component share one evaluator,
// whichever order the collector starts and stops them in: the judge is
// built and the storage opened once; the store stops at the first
// Shutdown, so the consumers of both instances still take the items it
// sends on; the storage closes at the last, and the evaluator is
// forgotten then.
func TestEvaluatorLifecycle(t *testing.T) {
	for _, tracesFirst := range []bool{true, false} {
		t.Run(map[bool]string{true: "traces first", false: "logs first"}[tracesFirst], func(t *testing.T) {
			cfg := testConfig(scoring.Bias)
			cfg.Storage = &fileStorageID
			st := &countingStorage{}
			host := storageHost{Host: componenttest.NewNopHost(), ext: map[component.ID]component.Component{fileStorageID: st}}
			var builds atomic.Int32
			build := func(context.Context, *Config, component.Host, component.TelemetrySettings, judgeHooks) (judgeSet, error) {
				builds.Add(1)
				return judgeSet{scorers: []scoring.Scorer{fixedScorer(scoring.Bias, 0.1, scoring.LabelPass)}}, nil
			}
			evs := newEvaluators(build)
			f := processor.NewFactory(metadata.Type, createDefaultConfig,
				processor.WithTraces(evs.createTraces, metadata.TracesStability),
				processor.WithLogs(evs.createLogs, metadata.LogsStability))
			set := metadatatest.NewSettings(componenttest.NewTelemetry())
			tp, err := f.CreateTraces(context.Background(), set, cfg, new(consumertest.TracesSink))
			require.NoError(t, err)
			lp, err := f.CreateLogs(context.Background(), set, cfg, new(consumertest.LogsSink))
			require.NoError(t, err)
			first, second := component.Component(tp), component.Component(lp)
			if !tracesFirst {
				first, second = second, first
			}
			store := tp.(*llmEvalProcessor).store
			require.Same(t, store, lp.(*logsProcessor).core.store, "one store for both instances")

			require.NoError(t, first.Start(context.Background(), host))
			require.NoError(t, second.Start(context.Background(), host))
			assert.Equal(t, int32(1), builds.Load(), "one judge")
			assert.Equal(t, int32(1), st.opened.Load(), "one storage client")

			require.NoError(t, first.Shutdown(context.Background()))
			assert.Equal(t, evalstore.RejectedClosed, store.Admit(context.Background(), nil), "the first Shutdown stops the store")
			assert.Zero(t, st.closed.Load(), "the storage stays open for the instance still running")
			assert.True(t, evs.has(cfg))

			require.NoError(t, second.Shutdown(context.Background()))
			assert.Equal(t, int32(1), st.closed.Load(), "the last Shutdown closes the storage")
			assert.False(t, evs.has(cfg), "forgotten after the last Shutdown")
			require.NoError(t, second.Shutdown(context.Background()), "a second Shutdown is harmless")
			assert.Equal(t, int32(1), st.closed.Load())
		})
	}
}

// Recovery runs once per evaluator, in the Start that completes the set of
// instances: a pair stored before a crash is resumed once, whichever
// instance starts first, and neither instance's Start recovers it again.
func TestEvaluatorRecoversOnce(t *testing.T) {
	for _, tracesFirst := range []bool{true, false} {
		cfg := storageConfig(time.Minute, scoring.Bias)
		dir, c := killWithPair(t, cfg)

		h := &bothHarness{host: fileStorageOn(t, dir)}
		h.create(t, storageConfigFrom(cfg), fixedScorer(scoring.Bias, 0.1, scoring.LabelPass))
		first, second := h.traces.Start, h.logs.Start
		if !tracesFirst {
			first, second = second, first
		}
		require.NoError(t, first(context.Background(), h.host))
		assert.Zero(t, sumOf(t, h.tel, "otelcol_processor_llm_eval_storage_recovered", attribute.String("outcome", "resumed")),
			"traces first %v: nothing recovered before both instances started", tracesFirst)
		require.NoError(t, second(context.Background(), h.host))
		require.Eventually(t, func() bool { o := h.outcome(c); return o.spanCount == 1 && len(o.records) == 1 }, 10*time.Second, 5*time.Millisecond)
		h.shutdown()
		assert.Equal(t, int64(1), sumOf(t, h.tel, "otelcol_processor_llm_eval_storage_recovered", attribute.String("outcome", "resumed")),
			"traces first %v", tracesFirst)
		assert.Equal(t, callOutcome{spanCount: 1, spanResults: []string{"pass"}, records: []string{"pass"}, onSpan: 1}, h.outcome(c))
	}
}
