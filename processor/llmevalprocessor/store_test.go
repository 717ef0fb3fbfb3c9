package llmevalprocessor

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadatatest"
	"github.com/llm-eval/llm_eval/scoring"
)

// TestHungJudgeDoesNotMultiplyOutput sends many spans through judges that
// only answer after max_wait. Late results become child spans as
// late_results says; with the default, a late error never does, so a hung
// judge adds no span at all.
func TestHungJudgeDoesNotMultiplyOutput(t *testing.T) {
	const spans = 20
	tests := []struct {
		name        string
		lateResults string
		lateLabel   scoring.Label // what the judge answers, after max_wait
		wantLate    int           // child spans per held span (one scorer)
	}{
		{name: "default, late errors", lateResults: lateResultsVerdicts, lateLabel: scoring.LabelError, wantLate: 0},
		{name: "default, late verdicts", lateResults: lateResultsVerdicts, lateLabel: scoring.LabelPass, wantLate: 1},
		{name: "all, late errors", lateResults: lateResultsAll, lateLabel: scoring.LabelError, wantLate: 1},
		{name: "none, late verdicts", lateResults: lateResultsNone, lateLabel: scoring.LabelPass, wantLate: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gate := make(chan struct{})
			late := &fakeScorer{name: scoring.Bias, fn: func(context.Context, scoring.Case) scoring.Result {
				<-gate // answers only once every span has left on max_wait
				if tt.lateLabel == scoring.LabelError {
					return errorResult(scoring.ErrorJudgeTimeout, context.DeadlineExceeded)
				}
				return scoring.Result{Label: tt.lateLabel, Score: 0.1}
			}}
			cfg := testConfig(scoring.Bias)
			cfg.MaxWait = 5 * time.Millisecond
			cfg.LateResults = tt.lateResults
			cfg.Judge.MaxConcurrency = spans // every evaluation in flight at once
			h := newHarness(t, cfg, late)

			b := newBatch()
			for range spans {
				b.generation(randomTraceID(), "q", "a")
			}
			h.consume(b.td)
			h.waitSpans(spans)
			require.Eventually(t, func() bool { return h.p.store.HeldCount() == 0 }, 10*time.Second, time.Millisecond)
			close(gate)
			h.drain()

			assert.Equal(t, spans*(1+tt.wantLate), h.sink.SpanCount())
			dropped := int64(spans * (1 - tt.wantLate))
			if dropped > 0 {
				metadatatest.AssertEqualProcessorLlmEvalLateResultsDropped(t, h.tel, []metricdata.DataPoint[int64]{
					{Attributes: attribute.NewSet(attribute.String("scorer", scoring.Bias)), Value: dropped},
				}, metricdatatest.IgnoreTimestamp())
			}
			if tt.wantLate > 0 {
				metadatatest.AssertEqualProcessorLlmEvalLateResults(t, h.tel, []metricdata.DataPoint[int64]{
					{Attributes: attribute.NewSet(attribute.String("scorer", scoring.Bias)), Value: spans},
				}, metricdatatest.IgnoreTimestamp())
			}
		})
	}
}

// TestUnscoredMarkers checks the marker of each way a sampled span leaves
// without its results, and its count.
func TestUnscoredMarkers(t *testing.T) {
	tests := []struct {
		name     string
		run      func(h *harness)
		wantType scoring.ErrorType
		reason   string
	}{
		{name: "max_wait before any result", wantType: scoring.ErrorMaxWaitExceeded, reason: reasonMaxWait, run: func(h *harness) {
			h.waitSpans(1)
		}},
		{name: "shutdown", wantType: scoring.ErrorShutdown, reason: reasonShutdown, run: func(h *harness) {
			h.shutdown()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(scoring.Bias, scoring.Hallucination)
			if tt.wantType == scoring.ErrorMaxWaitExceeded {
				cfg.MaxWait = 5 * time.Millisecond
			}
			h := newHarness(t, cfg, hangingScorer(scoring.Bias), hangingScorer(scoring.Hallucination))
			b := newBatch()
			id := b.generation(randomTraceID(), "q", "a")
			h.consume(b.td)
			tt.run(h)

			byID, count := sinkSpans(h.sink)
			require.Equal(t, 1, count[id])
			span := byID[id].span
			events := evaluationEvents(span)
			require.Len(t, events, 2)
			for _, name := range []string{scoring.Bias, scoring.Hallucination} {
				assert.Equal(t, string(tt.wantType), mustStr(t, events[name], evalconv.AttrErrorType))
				_, hasLabel := events[name].Get(evalconv.AttrScoreLabel)
				assert.False(t, hasLabel)
				assert.Equal(t, "error", mustStr(t, span.Attributes(), evalconv.FlatLabel(name)))
				assert.NotEmpty(t, mustStr(t, span.Attributes(), evalconv.FlatReason(name)))
			}
			metadatatest.AssertEqualProcessorLlmEvalSpansUnscored(t, h.tel, []metricdata.DataPoint[int64]{
				{Attributes: attribute.NewSet(attribute.String("reason", tt.reason)), Value: 1},
			}, metricdatatest.IgnoreTimestamp())
		})
	}
}

// TestOutgoingItemsCountHeldSpans checks that the processor's outgoing
// item count includes spans forwarded after their batch.
func TestOutgoingItemsCountHeldSpans(t *testing.T) {
	gate := make(chan struct{})
	h := newHarness(t, testConfig(scoring.Bias), gatedScorer(scoring.Bias, gate, false))
	b := newBatch()
	for range 3 {
		tid := randomTraceID()
		b.other(tid)
		b.generation(tid, "q", "a")
	}
	h.consume(b.td)
	b2 := newBatch()
	b2.generation(randomTraceID(), "q", "a") // a batch taken whole
	h.consume(b2.td)
	close(gate)
	h.waitSpans(7)
	h.waitIdle()

	items := []metricdata.DataPoint[int64]{{Attributes: attribute.NewSet(
		attribute.String("processor", "llm_eval"), attribute.String("otel.signal", "traces")), Value: 7}}
	metadatatest.AssertEqualProcessorIncomingItems(t, h.tel, items, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorOutgoingItems(t, h.tel, items, metricdatatest.IgnoreTimestamp())
}

// clientSink records the client.Info each span id was forwarded with.
type clientSink struct {
	mu    sync.Mutex
	addrs map[pcommon.SpanID]string
}

func (*clientSink) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (s *clientSink) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	info := client.FromContext(ctx)
	addr := ""
	if info.Addr != nil {
		addr = info.Addr.String()
	}
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, span := range ss.Spans().All() {
				s.addrs[span.SpanID()] = addr + "|" + firstOf(info.Metadata.Get("tenant"))
			}
		}
	}
	return nil
}

func firstOf(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// TestHeldSpansKeepClientInfo checks that spans forwarded later carry the
// client.Info of the request they came with.
func TestHeldSpansKeepClientInfo(t *testing.T) {
	cs := &clientSink{addrs: map[pcommon.SpanID]string{}}
	sink := new(consumertest.TracesSink)
	h := newHarnessTo(t, testConfig(scoring.Bias), sink, fixedScorer(scoring.Bias, 0.1, scoring.LabelPass))
	h.p.out.Next = cs // before any span: no race

	for _, tenant := range []string{"acme", "globex"} {
		b := newBatch()
		tid := randomTraceID()
		other := b.other(tid)
		gen := b.generation(tid, "q", "a")
		ctx := client.NewContext(context.Background(), client.Info{
			Addr:     &fakeAddr{"10.0.0.1:4317"},
			Metadata: client.NewMetadata(map[string][]string{"tenant": {tenant}}),
		})
		require.NoError(t, h.proc.ConsumeTraces(ctx, b.td))
		require.Eventually(t, func() bool {
			cs.mu.Lock()
			defer cs.mu.Unlock()
			_, ok := cs.addrs[gen]
			return ok
		}, 10*time.Second, time.Millisecond)
		cs.mu.Lock()
		assert.Equal(t, "10.0.0.1:4317|"+tenant, cs.addrs[other])
		assert.Equal(t, "10.0.0.1:4317|"+tenant, cs.addrs[gen], "the held span keeps its request's client.Info")
		cs.mu.Unlock()
	}
}

type fakeAddr struct{ s string }

func (a *fakeAddr) Network() string { return "tcp" }
func (a *fakeAddr) String() string  { return a.s }
