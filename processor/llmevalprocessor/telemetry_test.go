package llmevalprocessor

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadatatest"
	"github.com/llm-eval/llm_eval/scoring"
)

func TestOwnTelemetry(t *testing.T) {
	cfg := testConfig(scoring.Bias, scoring.Hallucination)
	cfg.QueueSize = 1
	h := newHarness(t, cfg,
		fixedScorer(scoring.Bias, 0.7, scoring.LabelFail),
		failingScorer(scoring.Hallucination, scoring.ErrorJudgeUnavailable, "connection refused"))

	b := newBatch()
	tid := randomTraceID()
	b.other(tid)
	b.generation(tid, "q", "a")
	b.emptyGeneration(randomTraceID())
	h.consume(b.td)
	h.waitSpans(3)
	h.waitIdle()

	ignore := []metricdatatest.Option{metricdatatest.IgnoreTimestamp()}
	metadatatest.AssertEqualProcessorLlmEvalSpansSelected(t, h.tel, []metricdata.DataPoint[int64]{{Value: 2}}, ignore...)
	metadatatest.AssertEqualProcessorLlmEvalSpansSampled(t, h.tel, []metricdata.DataPoint[int64]{{Value: 2}}, ignore...)
	metadatatest.AssertEqualProcessorLlmEvalEvaluations(t, h.tel, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(attribute.String("scorer", "bias"), attribute.String("outcome", "fail")), Value: 1},
		{Attributes: attribute.NewSet(attribute.String("scorer", "hallucination"), attribute.String("outcome", "error"),
			attribute.String("error_type", "judge_unavailable")), Value: 1},
		{Attributes: attribute.NewSet(attribute.String("scorer", "bias"), attribute.String("outcome", "not_scorable")), Value: 1},
		{Attributes: attribute.NewSet(attribute.String("scorer", "hallucination"), attribute.String("outcome", "not_scorable")), Value: 1},
	}, ignore...)
	metadatatest.AssertEqualProcessorLlmEvalSpansUnscored(t, h.tel, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(attribute.String("reason", "not_scorable")), Value: 1},
	}, ignore...)
	metadatatest.AssertEqualProcessorLlmEvalJudgeCalls(t, h.tel, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(attribute.String("scorer", "bias")), Value: 2},
		{Attributes: attribute.NewSet(attribute.String("scorer", "hallucination")), Value: 1},
	}, ignore...)
	metadatatest.AssertEqualProcessorLlmEvalJudgeTokens(t, h.tel, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(attribute.String("scorer", "bias"), attribute.String("type", "prompt")), Value: 100},
		{Attributes: attribute.NewSet(attribute.String("scorer", "bias"), attribute.String("type", "completion")), Value: 20},
		{Attributes: attribute.NewSet(attribute.String("scorer", "hallucination"), attribute.String("type", "prompt")), Value: 0},
		{Attributes: attribute.NewSet(attribute.String("scorer", "hallucination"), attribute.String("type", "completion")), Value: 0},
	}, ignore...)
	metadatatest.AssertEqualProcessorLlmEvalHeldSpans(t, h.tel, []metricdata.DataPoint[int64]{{Value: 0}}, ignore...)
	metadatatest.AssertEqualProcessorLlmEvalQueueDepth(t, h.tel, []metricdata.DataPoint[int64]{{Value: 0}}, ignore...)
}

func TestTelemetryQueueFullMaxWaitLate(t *testing.T) {
	gate := make(chan struct{})
	cfg := testConfig(scoring.Bias)
	cfg.QueueSize = 1
	cfg.MaxWait = 20 * time.Millisecond
	h := newHarness(t, cfg, gatedScorer(scoring.Bias, gate, false))
	b := newBatch()
	b.generation(randomTraceID(), "q", "a")
	b.generation(randomTraceID(), "q", "a")
	h.consume(b.td)
	h.waitSpans(2) // one passed at once (queue full), one after max_wait
	ignore := metricdatatest.IgnoreTimestamp()
	metadatatest.AssertEqualProcessorLlmEvalHeldSpans(t, h.tel, []metricdata.DataPoint[int64]{{Value: 0}}, ignore)
	close(gate)
	h.waitSpans(3) // the late child span
	h.waitIdle()
	metadatatest.AssertEqualProcessorLlmEvalSpansUnscored(t, h.tel, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(attribute.String("reason", "queue_full")), Value: 1},
		{Attributes: attribute.NewSet(attribute.String("reason", "max_wait")), Value: 1},
	}, ignore)
	metadatatest.AssertEqualProcessorLlmEvalLateResults(t, h.tel, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(attribute.String("scorer", "bias")), Value: 1},
	}, ignore)
}

func TestHeldSpansGauge(t *testing.T) {
	h := newHarness(t, testConfig(scoring.Bias), hangingScorer(scoring.Bias))
	b := newBatch()
	b.generation(randomTraceID(), "q", "a")
	b.generation(randomTraceID(), "q", "a")
	h.consume(b.td)
	metadatatest.AssertEqualProcessorLlmEvalHeldSpans(t, h.tel, []metricdata.DataPoint[int64]{{Value: 2}}, metricdatatest.IgnoreTimestamp())
}

func TestJudgeFailuresDoNotFloodLogs(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	set := metadatatest.NewSettings(tel)
	set.Logger = zap.New(core)
	cfg := testConfig(scoring.Bias)
	cfg.Judge.APIKey = "sk-very-secret"
	failing := failingScorer(scoring.Bias, scoring.ErrorJudgeUnavailable, "dial tcp: connection refused (key sk-very-secret)")
	build := func(context.Context, *Config, component.Host, component.TelemetrySettings, judgeHooks) (judgeSet, error) {
		return judgeSet{scorers: []scoring.Scorer{failing}}, nil
	}
	sink := new(consumertest.TracesSink)
	p, proc, err := newTracesProcessor(context.Background(), set, cfg, sink, build)
	require.NoError(t, err)
	require.NoError(t, proc.Start(context.Background(), componenttest.NewNopHost()))
	b := newBatch()
	for range 5 {
		b.generation(randomTraceID(), "q", "a")
	}
	require.NoError(t, proc.ConsumeTraces(context.Background(), b.td))
	require.Eventually(t, func() bool { return sink.SpanCount() == 5 && unfinishedCount(p.store) == 0 }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, proc.Shutdown(context.Background()))

	failures := logs.FilterMessageSnippet("evaluation failed")
	assert.Equal(t, 1, failures.FilterLevelExact(zapcore.WarnLevel).Len())
	assert.Equal(t, 4, failures.FilterLevelExact(zapcore.DebugLevel).Len())
	warn := failures.FilterLevelExact(zapcore.WarnLevel).All()[0]
	assert.Equal(t, cfg.Judge.ClientConfig.Endpoint, warn.ContextMap()["endpoint"])
	for _, e := range logs.All() {
		assert.NotContains(t, e.Message, "sk-very-secret")
		for _, v := range e.ContextMap() {
			assert.NotContains(t, fmt.Sprint(v), "sk-very-secret") // the startup line has numbers too
		}
	}
}

// TestReasonFallbackCounted checks an evaluation whose reason step failed:
// the verdict and the summary reason stand on the span, and the failure is
// counted in reason_fallbacks by its error type.
func TestReasonFallbackCounted(t *testing.T) {
	h := newHarness(t, testConfig(scoring.Bias), &fakeScorer{name: scoring.Bias, fn: func(context.Context, scoring.Case) scoring.Result {
		return scoring.Result{Score: 0, Label: scoring.LabelPass, Reason: "No opinion was judged biased.",
			ReasonErr: &scoring.Error{Type: scoring.ErrorJudgeRateLimited, Step: scoring.StepReason, Err: errors.New("HTTP 429")}}
	}})
	b := newBatch()
	span := b.generation(randomTraceID(), "q", "a")
	h.consume(b.td)
	h.waitSpans(1)
	h.waitIdle()

	byID, _ := sinkSpans(h.sink)
	attrs := byID[span].span.Attributes()
	label, _ := attrs.Get("llm_eval.bias.label")
	reason, _ := attrs.Get("llm_eval.bias.reason")
	assert.Equal(t, "pass", label.Str())
	assert.Equal(t, "No opinion was judged biased.", reason.Str())
	metadatatest.AssertEqualProcessorLlmEvalReasonFallbacks(t, h.tel, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(attribute.String("scorer", "bias"), attribute.String("error_type", string(scoring.ErrorJudgeRateLimited))), Value: 1},
	}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorLlmEvalEvaluations(t, h.tel, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(attribute.String("scorer", "bias"), attribute.String("outcome", "pass")), Value: 1},
	}, metricdatatest.IgnoreTimestamp())
}
