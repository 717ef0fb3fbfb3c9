package llmevalprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadatatest"
	"github.com/llm-eval/llm_eval/scoring"
)

// With a traces and a logs pipeline, spans without content waiting for
// their events take no queue_size slot: a span with content arriving
// behind more of them than queue_size is scored, not refused queue_full.
func TestCrossSignalWaitingSpansTakeNoQueueSlot(t *testing.T) {
	cfg := crossSignalConfig(time.Hour)
	cfg.QueueSize = 2
	h := newBothHarness(t, cfg, scoring.LabelPass)
	for range 5 {
		h.consumeSpan(newCall().spanBatch(false))
	}
	c := newCall()
	h.consumeSpan(c.spanBatch(true))
	require.Eventually(t, func() bool { return h.outcome(c).spanCount == 1 }, 10*time.Second, 5*time.Millisecond)
	assert.Equal(t, []string{"pass"}, h.outcome(c).spanResults, "scored, not queue_full")
	assert.Equal(t, 5, h.traces.(*llmEvalProcessor).store.EventWaitStats().Spans)
}

// A span without content that finds the waiting area full leaves at once,
// not scorable with the reason, counted.
func TestCrossSignalWaitingAreaFull(t *testing.T) {
	cfg := crossSignalConfig(time.Hour)
	cfg.LogEvents.MaxWaitingSpans = 1
	h := newBothHarness(t, cfg, scoring.LabelPass)
	h.consumeSpan(newCall().spanBatch(false))
	c := newCall()
	h.consumeSpan(c.spanBatch(false))
	assert.Equal(t, callOutcome{spanCount: 1, spanResults: []string{"not_scorable"}}, h.outcome(c), "left at once")
	h.joins(joinPoint("waiting_area_full", 1))
}

// The processor learns that a service sends no events: after
// content_capture_off_after spans waited in vain, its next span without
// content leaves at once, "content capture is off" with the variable for
// its library, counted by service and library; one warning is logged for
// the service and library. An event of the service makes its spans wait
// again.
func TestCrossSignalLearnsContentCaptureOff(t *testing.T) {
	cfg := crossSignalConfig(5 * time.Millisecond)
	cfg.LogEvents.ContentCaptureOffAfter = 2
	core, logs := observer.New(zapcore.WarnLevel)
	h := &bothHarness{cases: make(chan scoring.Case, 10), gate: make(chan struct{}), logger: zap.New(core)}
	close(h.gate)
	h.start(t, cfg, &fakeScorer{name: scoring.Bias, fn: func(context.Context, scoring.Case) scoring.Result {
		return scoring.Result{Label: scoring.LabelPass, Reason: "judged"}
	}})
	for range 2 {
		c := newCall()
		h.consumeSpan(c.spanBatch(false))
		require.Eventually(t, func() bool { return h.outcome(c).spanCount == 1 }, 10*time.Second, time.Millisecond)
	}
	metadatatest.AssertEqualProcessorLlmEvalContentCaptureOff(t, h.tel, []metricdata.DataPoint[int64]{{
		Attributes: attribute.NewSet(attribute.String("library", "opentelemetry.instrumentation.openai_v2"), attribute.String("service", "support-bot")),
		Value:      1,
	}}, ignoreTime)

	off := newCall()
	h.consumeSpan(off.spanBatch(false))
	require.Equal(t, 1, h.outcome(off).spanCount, "left at once")
	reason := spanReason(t, h, off)
	assert.Contains(t, reason, "content capture is off")
	assert.Contains(t, reason, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true")

	warnings := logs.FilterMessageSnippet("content capture is off").All()
	require.Len(t, warnings, 1, "one warning per service and library")
	assert.Contains(t, warnings[0].Message, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true")

	// Content capture turned on: an event of the service arrives, and the
	// next span without content waits for its events again.
	h.consumeEvents(newCall().eventsBatch("content"))
	again := newCall()
	h.consumeSpan(again.spanBatch(false))
	assert.Zero(t, h.outcome(again).spanCount, "waits for its events")
	h.consumeEvents(again.eventsBatch("content"))
	require.Eventually(t, func() bool { return h.outcome(again).spanCount == 1 }, 10*time.Second, time.Millisecond)
	assert.Equal(t, []string{"pass"}, h.outcome(again).spanResults)
}

// spanReason is the bias reason written on the call's span.
func spanReason(t *testing.T, h *bothHarness, c call) string {
	t.Helper()
	for _, td := range h.spans.AllTraces() {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					if s.SpanID() != c.span {
						continue
					}
					for _, ev := range s.Events().All() {
						if ev.Name() == evalconv.EventName {
							if v, ok := ev.Attributes().Get(evalconv.AttrExplanation); ok {
								return v.Str()
							}
						}
					}
				}
			}
		}
	}
	return ""
}
