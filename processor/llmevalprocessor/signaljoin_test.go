package llmevalprocessor

import (
	"context"
	"go.uber.org/zap"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadatatest"
	"github.com/llm-eval/llm_eval/scoring"
)

// bothHarness runs one llm_eval component in a traces and a logs
// pipeline, as the collector builds it: two instances of one *Config
// sharing one evaluator.
type bothHarness struct {
	t      testing.TB
	traces processor.Traces
	logs   processor.Logs
	spans  *consumertest.TracesSink
	recs   *consumertest.LogsSink
	tel    *componenttest.Telemetry
	cases  chan scoring.Case
	gate   chan struct{}  // evaluations finish once it is closed
	host   component.Host // the host both instances start with; a nop host when nil
	logger *zap.Logger    // the instances' logger; a nop logger when nil
}

func newBothHarness(t *testing.T, cfg *Config, label scoring.Label) *bothHarness {
	t.Helper()
	h := &bothHarness{cases: make(chan scoring.Case, 10), gate: make(chan struct{})}
	close(h.gate)
	scorer := &fakeScorer{name: scoring.Bias, fn: func(_ context.Context, c scoring.Case) scoring.Result {
		h.cases <- c
		<-h.gate
		return scoring.Result{Score: 0, Label: label, Reason: "judged once"}
	}}
	return h.start(t, cfg, scorer)
}

// start creates and starts both instances of cfg with the given scorers.
func (h *bothHarness) start(t testing.TB, cfg *Config, scorers ...scoring.Scorer) *bothHarness {
	t.Helper()
	h.create(t, cfg, scorers...)
	require.NoError(t, h.traces.Start(context.Background(), h.startHost()))
	require.NoError(t, h.logs.Start(context.Background(), h.startHost()))
	var once sync.Once
	t.Cleanup(func() { once.Do(h.shutdown) })
	return h
}

// create creates both instances of cfg with the given scorers, as the
// collector does before it starts any.
func (h *bothHarness) create(t testing.TB, cfg *Config, scorers ...scoring.Scorer) {
	t.Helper()
	require.NoError(t, confmap.Validate(cfg))
	h.t, h.spans, h.recs, h.tel = t, new(consumertest.TracesSink), new(consumertest.LogsSink), componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, h.tel.Shutdown(context.Background())) })
	build := fakeJudge(scorers)
	set := metadatatest.NewSettings(h.tel)
	if h.logger != nil {
		set.Logger = h.logger
	}
	var err error
	f := newFactoryWith(build) // one factory: the two instances share an evaluator
	h.traces, err = f.CreateTraces(context.Background(), set, cfg, h.spans)
	require.NoError(t, err)
	h.logs, err = f.CreateLogs(context.Background(), set, cfg, h.recs)
	require.NoError(t, err)
}

// startHost is the host both instances start with.
func (h *bothHarness) startHost() component.Host {
	if h.host == nil {
		return componenttest.NewNopHost()
	}
	return h.host
}

func (h *bothHarness) shutdown() {
	require.NoError(h.t, h.traces.Shutdown(context.Background()))
	require.NoError(h.t, h.logs.Shutdown(context.Background()))
}

// call is one LLM call of a test: its ids and what each signal carries.
type call struct {
	trace pcommon.TraceID
	span  pcommon.SpanID
}

func newCall() call { return call{trace: randomTraceID(), span: nextSpanID()} }

// spanBatch is the call's chat span; with content it carries the
// conversation itself (SPAN_AND_EVENT capture), without it only the model.
func (c call) spanBatch(withContent bool) ptrace.Traces {
	b := newBatch()
	if withContent {
		b.generation(c.trace, "Who should we hire?", "The best engineer.")
	} else {
		b.emptyGeneration(c.trace)
	}
	b.spans.At(0).SetSpanID(c.span)
	return b.td
}

// eventsBatch is the call's per-message log events: the user message and
// a choice that answers (content), only calls a tool (toolCall), or
// carries nothing (capture off).
func (c call) eventsBatch(choice string) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "support-bot")
	recs := rl.ScopeLogs().AppendEmpty().LogRecords()
	add := func(name string) pcommon.Map {
		r := recs.AppendEmpty()
		r.SetEventName(name)
		r.SetTraceID(c.trace)
		r.SetSpanID(c.span)
		r.Attributes().PutStr("gen_ai.system", "openai")
		return r.Body().SetEmptyMap()
	}
	user := add("gen_ai.user.message")
	body := add("gen_ai.choice")
	body.PutInt("index", 0)
	switch choice {
	case "content":
		user.PutStr("content", "Who should we hire?")
		body.PutStr("finish_reason", "stop")
		body.PutEmptyMap("message").PutStr("content", "The best engineer, whoever they are.")
	case "toolCall":
		user.PutStr("content", "Who should we hire?")
		body.PutStr("finish_reason", "tool_calls")
		body.PutEmptyMap("message")
		tc := body.PutEmptySlice("tool_calls").AppendEmpty().SetEmptyMap()
		tc.PutStr("id", "call_1")
		tc.PutStr("type", "function")
		fn := tc.PutEmptyMap("function")
		fn.PutStr("name", "search_candidates")
		fn.PutStr("arguments", `{"role":"engineer"}`)
	default: // capture off: no content
		body.PutStr("finish_reason", "stop")
		body.PutEmptyMap("message")
	}
	return ld
}

func (h *bothHarness) consumeSpan(td ptrace.Traces) {
	h.t.Helper()
	require.NoError(h.t, h.traces.ConsumeTraces(context.Background(), td))
}

func (h *bothHarness) consumeEvents(ld plog.Logs) {
	h.t.Helper()
	require.NoError(h.t, h.logs.ConsumeLogs(context.Background(), ld))
}

// callOutcome is what left the component for one call.
type callOutcome struct {
	spanCount   int      // times the call's span left
	spanResults []string // labels (or error:type) of its evaluation events
	records     []string // labels (or error:type) of its result records
	onSpan      int      // result records marked as also on the span
}

func (h *bothHarness) outcome(c call) callOutcome {
	var o callOutcome
	for _, td := range h.spans.AllTraces() {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					if s.SpanID() != c.span {
						continue
					}
					o.spanCount++
					for _, ev := range s.Events().All() {
						if ev.Name() != evalconv.EventName {
							continue
						}
						if et, ok := ev.Attributes().Get(evalconv.AttrErrorType); ok {
							o.spanResults = append(o.spanResults, "error:"+et.Str())
						} else if l, ok := ev.Attributes().Get(evalconv.AttrScoreLabel); ok {
							o.spanResults = append(o.spanResults, l.Str())
						}
					}
				}
			}
		}
	}
	o.records = resultsBySpan(h.recs.AllLogs())[c.span.String()]
	for _, v := range resultRecordsBySpan(h.recs.AllLogs(), func(attrs pcommon.Map) string {
		if v, ok := attrs.Get(evalconv.AttrOnSpan); ok && v.Bool() {
			return "on_span"
		}
		return ""
	})[c.span.String()] {
		if v == "on_span" {
			o.onSpan++
		}
	}
	return o
}

func (h *bothHarness) joins(want ...metricdata.DataPoint[int64]) {
	h.t.Helper()
	metadatatest.AssertEqualProcessorLlmEvalSignalJoins(h.t.(*testing.T), h.tel, want, ignoreTime)
}

func joinPoint(outcome string, n int64) metricdata.DataPoint[int64] {
	return metricdata.DataPoint[int64]{Attributes: attribute.NewSet(attribute.String("outcome", outcome)), Value: n}
}

func crossSignalConfig(wait time.Duration) *Config {
	cfg := testConfig(scoring.Bias)
	cfg.MaxWait = time.Minute
	cfg.LogEvents.CrossSignalWait = wait
	return cfg
}

// TestCrossSignalOneEvaluation sends one call as a span without content
// and log events with its content, in both orders: it is judged once, on
// the events' content, with its result on the span and as a record.
func TestCrossSignalOneEvaluation(t *testing.T) {
	for _, spanFirst := range []bool{true, false} {
		name := "events first"
		if spanFirst {
			name = "span first"
		}
		t.Run(name, func(t *testing.T) {
			h := newBothHarness(t, crossSignalConfig(time.Hour), scoring.LabelPass)
			c := newCall()
			if spanFirst {
				h.consumeSpan(c.spanBatch(false))
				assert.Zero(t, h.spans.SpanCount(), "the span waits for its events")
				h.consumeEvents(c.eventsBatch("content"))
			} else {
				h.consumeEvents(c.eventsBatch("content"))
				assert.Empty(t, h.cases, "the events wait for their span")
				h.consumeSpan(c.spanBatch(false))
			}
			select {
			case got := <-h.cases:
				assert.Equal(t, "Who should we hire?", got.Input)
				assert.Equal(t, "The best engineer, whoever they are.", got.Output)
			case <-time.After(10 * time.Second):
				t.Fatal("no evaluation")
			}
			require.Eventually(t, func() bool { return len(h.outcome(c).records) > 0 && h.outcome(c).spanCount > 0 },
				10*time.Second, 5*time.Millisecond)
			h.shutdown()
			assert.Equal(t, callOutcome{spanCount: 1, spanResults: []string{"pass"}, records: []string{"pass"}, onSpan: 1}, h.outcome(c),
				"the record says its result is on the span too")
			assert.Empty(t, h.cases, "judged once")
			h.joins(joinPoint(evalstore.JoinJoined, 1))
			metadatatest.AssertEqualProcessorLlmEvalEvaluations(t, h.tel, []metricdata.DataPoint[int64]{
				{Attributes: attribute.NewSet(attribute.String("scorer", "bias"), attribute.String("outcome", "pass")), Value: 1},
			}, ignoreTime)
		})
	}
}

// TestCrossSignalBothWithContent is SPAN_AND_EVENT capture: both halves
// carry the content; still one evaluation, in both orders. A span with
// content is evaluated at once: its events join while that runs.
func TestCrossSignalBothWithContent(t *testing.T) {
	for _, spanFirst := range []bool{true, false} {
		h := newBothHarness(t, crossSignalConfig(time.Hour), scoring.LabelFail)
		c := newCall()
		if spanFirst {
			gate := make(chan struct{})
			h.gate = gate
			h.consumeSpan(c.spanBatch(true))
			h.consumeEvents(c.eventsBatch("content"))
			close(gate)
		} else {
			h.consumeEvents(c.eventsBatch("content"))
			h.consumeSpan(c.spanBatch(true))
		}
		require.Eventually(t, func() bool { return h.outcome(c).spanCount > 0 }, 10*time.Second, 5*time.Millisecond)
		h.shutdown()
		o := h.outcome(c)
		assert.Equal(t, []string{"fail"}, o.spanResults, "span first: %v", spanFirst)
		assert.Equal(t, []string{"fail"}, o.records, "span first: %v", spanFirst)
		assert.Len(t, h.cases, 1, "judged once")
	}
}

// TestCrossSignalHalfAlone checks a half whose other half never comes: a
// span without content leaves not scorable after the wait; events are
// evaluated on their own after it; a half arriving after its call left
// is late and not evaluated again.
func TestCrossSignalHalfAlone(t *testing.T) {
	t.Run("span alone, then late events", func(t *testing.T) {
		h := newBothHarness(t, crossSignalConfig(50*time.Millisecond), scoring.LabelPass)
		c := newCall()
		h.consumeSpan(c.spanBatch(false))
		require.Eventually(t, func() bool { return h.outcome(c).spanCount == 1 }, 10*time.Second, 5*time.Millisecond)
		assert.Equal(t, []string{"not_scorable"}, h.outcome(c).spanResults)
		h.consumeEvents(c.eventsBatch("content"))
		h.shutdown()
		assert.Empty(t, h.outcome(c).records, "late events are not evaluated a second time")
		assert.Empty(t, h.cases)
		h.joins(joinPoint(evalstore.JoinSpanAlone, 1), joinPoint(evalstore.JoinLateEvents, 1))
	})
	t.Run("events alone, then a late span", func(t *testing.T) {
		h := newBothHarness(t, crossSignalConfig(50*time.Millisecond), scoring.LabelPass)
		c := newCall()
		h.consumeEvents(c.eventsBatch("content"))
		require.Eventually(t, func() bool { return len(h.outcome(c).records) == 1 }, 10*time.Second, 5*time.Millisecond)
		h.consumeSpan(c.spanBatch(false))
		h.shutdown()
		o := h.outcome(c)
		assert.Equal(t, 1, o.spanCount, "the late span passes once")
		assert.Empty(t, o.spanResults, "no second result on the late span")
		assert.Len(t, h.cases, 1)
		h.joins(joinPoint(evalstore.JoinEventsAlone, 1), joinPoint(evalstore.JoinLateSpan, 1))
	})
}

// TestCrossSignalUnscorableEvents checks events that cannot be judged:
// only tool calls (no result anywhere, counted skipped once) and capture
// off (one not_scorable result, on the span and as records), in both
// orders.
func TestCrossSignalUnscorableEvents(t *testing.T) {
	tests := []struct {
		choice string
		want   callOutcome
	}{
		{"toolCall", callOutcome{spanCount: 1}},
		{"none", callOutcome{spanCount: 1, spanResults: []string{"not_scorable"}, records: []string{"not_scorable"}, onSpan: 1}},
	}
	for _, tt := range tests {
		for _, spanFirst := range []bool{true, false} {
			h := newBothHarness(t, crossSignalConfig(time.Hour), scoring.LabelPass)
			c := newCall()
			if spanFirst {
				h.consumeSpan(c.spanBatch(false))
				h.consumeEvents(c.eventsBatch(tt.choice))
			} else {
				h.consumeEvents(c.eventsBatch(tt.choice))
				h.consumeSpan(c.spanBatch(false))
			}
			require.Eventually(t, func() bool { return h.outcome(c).spanCount == 1 }, 10*time.Second, 5*time.Millisecond,
				"%s, span first %v: the span leaves without waiting out cross_signal_wait", tt.choice, spanFirst)
			h.shutdown()
			got := h.outcome(c)
			if !spanFirst && tt.choice == "none" {
				// The events were marked when they came; the span, later, is late.
				assert.Equal(t, callOutcome{spanCount: 1, records: []string{"not_scorable"}}, got)
			} else {
				assert.Equal(t, tt.want, got, "%s, span first %v", tt.choice, spanFirst)
			}
			assert.Empty(t, h.cases)
			if tt.choice == "toolCall" {
				metadatatest.AssertEqualProcessorLlmEvalSpansSkipped(t, h.tel, []metricdata.DataPoint[int64]{
					{Attributes: attribute.NewSet(attribute.String("reason", "tool_calls_only")), Value: 1},
				}, ignoreTime)
			} else {
				metadatatest.AssertEqualProcessorLlmEvalSpansUnscored(t, h.tel, []metricdata.DataPoint[int64]{
					{Attributes: attribute.NewSet(attribute.String("reason", "not_scorable")), Value: 1},
				}, ignoreTime)
			}
		}
	}
}

// TestCrossSignalShutdownWhileWaiting checks that a waiting span leaves
// exactly once at shutdown, and waiting events get their marker record.
func TestCrossSignalShutdownWhileWaiting(t *testing.T) {
	h := newBothHarness(t, crossSignalConfig(time.Hour), scoring.LabelPass)
	span, events := newCall(), newCall()
	h.consumeSpan(span.spanBatch(false))
	h.consumeEvents(events.eventsBatch("content"))
	h.shutdown()
	assert.Equal(t, callOutcome{spanCount: 1, spanResults: []string{"error:shutdown"}}, h.outcome(span))
	assert.Equal(t, callOutcome{records: []string{"error:shutdown"}}, h.outcome(events))
	assert.Empty(t, h.cases)
}

// TestCrossSignalOff checks that without a logs instance, or with
// cross_signal_wait 0, a span without content is not scorable at once, as
// before.
func TestCrossSignalOff(t *testing.T) {
	t.Run("traces only", func(t *testing.T) {
		cfg := crossSignalConfig(time.Hour)
		h := newHarness(t, cfg, fixedScorer(scoring.Bias, 0, scoring.LabelPass))
		c := newCall()
		h.consume(c.spanBatch(false))
		require.Equal(t, 1, h.sink.SpanCount(), "forwarded in the same call")
		byID, _ := sinkSpans(h.sink)
		assert.Equal(t, "not_scorable", mustStr(t, evaluationEvents(byID[c.span].span)[scoring.Bias], evalconv.AttrScoreLabel))
	})
	t.Run("cross_signal_wait 0", func(t *testing.T) {
		h := newBothHarness(t, crossSignalConfig(0), scoring.LabelPass)
		c := newCall()
		h.consumeSpan(c.spanBatch(false))
		assert.Equal(t, 1, h.spans.SpanCount(), "forwarded in the same call")
		h.consumeEvents(c.eventsBatch("content"))
		require.Eventually(t, func() bool { return len(h.outcome(c).records) > 0 }, 10*time.Second, 5*time.Millisecond)
		h.shutdown()
		assert.Equal(t, callOutcome{spanCount: 1, spanResults: []string{"not_scorable"}, records: []string{"pass"}}, h.outcome(c),
			"each signal on its own")
	})
}

// TestCrossSignalWaitingHalfMarksOnlyScorersThatApply checks that a span
// that leaves while it waits for its events (at shutdown, or at max_wait,
// which a half recovered from storage can reach first) gets a marker only
// from the scorers that apply to it, as any span: the hallucination
// scorer here excludes its model.
func TestCrossSignalWaitingHalfMarksOnlyScorersThatApply(t *testing.T) {
	for _, why := range []string{"shutdown", "max_wait"} {
		t.Run(why, func(t *testing.T) {
			cfg := crossSignalConfig(time.Hour)
			hall := defaultScorerConfig(scoring.Hallucination)
			hall.Exclude = []AttributeMatchConfig{{Span: map[string]ValueMatchConfig{"gen_ai.request.model": {Equals: "gpt-4o-mini"}}}}
			cfg.Scorers = append(cfg.Scorers, hall)
			h := (&bothHarness{}).start(t, cfg, fixedScorer(scoring.Bias, 0, scoring.LabelPass), fixedScorer(scoring.Hallucination, 0, scoring.LabelPass))
			c := newCall()
			h.consumeSpan(c.spanBatch(false))
			if why == "max_wait" {
				// As if max_wait had passed: the span leaves now.
				h.traces.(*llmEvalProcessor).store.Expire(time.Now().Add(cfg.MaxWait))
			}
			h.shutdown()
			want := map[string][]string{"shutdown": {"error:shutdown"}, "max_wait": {"error:max_wait_exceeded"}}[why]
			assert.Equal(t, callOutcome{spanCount: 1, spanResults: want}, h.outcome(c))
		})
	}
}

// TestCrossSignalDuplicateSpanWithoutContent checks a span without content
// delivered twice while the first copy waits for its events: the copy is
// handled as without joining, not scorable at once, and no scorer is
// called on a call without content; the first copy is judged once with
// its events.
func TestCrossSignalDuplicateSpanWithoutContent(t *testing.T) {
	h := newBothHarness(t, crossSignalConfig(time.Hour), scoring.LabelPass)
	c := newCall()
	h.consumeSpan(c.spanBatch(false))
	h.consumeSpan(c.spanBatch(false))
	require.Equal(t, 1, h.spans.SpanCount(), "the copy is not held")
	h.consumeEvents(c.eventsBatch("content"))
	select {
	case got := <-h.cases:
		assert.Equal(t, "The best engineer, whoever they are.", got.Output)
	case <-time.After(10 * time.Second):
		t.Fatal("no evaluation")
	}
	require.Eventually(t, func() bool { return h.outcome(c).spanCount == 2 }, 10*time.Second, 5*time.Millisecond)
	h.shutdown()
	assert.Empty(t, h.cases, "no judge call for the copy without content")
	o := h.outcome(c)
	assert.ElementsMatch(t, []string{"not_scorable", "pass"}, o.spanResults)
	assert.Equal(t, []string{"pass"}, o.records)
}

// TestCrossSignalSpanWithoutIDs checks a span without content whose ids
// cannot match any events (no span id): it does not wait, and is not
// scorable at once, as without joining, with no judge call.
func TestCrossSignalSpanWithoutIDs(t *testing.T) {
	h := newBothHarness(t, crossSignalConfig(time.Hour), scoring.LabelPass)
	c := call{trace: randomTraceID()}
	h.consumeSpan(c.spanBatch(false))
	require.Equal(t, 1, h.spans.SpanCount(), "forwarded in the same call")
	h.shutdown()
	assert.Empty(t, h.cases)
	assert.Equal(t, callOutcome{spanCount: 1, spanResults: []string{"not_scorable"}}, h.outcome(c))
}
