package llmevalprocessor

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadatatest"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// judgeHarness runs the processor with the real OpenAI judge construction.
func judgeHarness(t *testing.T, cfg *Config) (*harness, *llmEvalProcessor) {
	t.Helper()
	require.NoError(t, cfg.Validate())
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	sink := new(consumertest.TracesSink)
	p, proc, err := newTracesProcessor(context.Background(), metadatatest.NewSettings(tel), cfg, sink, newJudgeScorers)
	require.NoError(t, err)
	require.NoError(t, proc.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { _ = proc.Shutdown(context.Background()) })
	return &harness{t: t, p: p, proc: proc, sink: sink, tel: tel}, p
}

func TestWithFakeJudgeOverHTTP(t *testing.T) {
	judge := scoringtest.New(t)
	judge.Script(scoringtest.AnyStep, scoringtest.Status(http.StatusServiceUnavailable, `{"error":{"message":"busy"}}`))
	cfg := testConfig(scoring.Bias, scoring.PromptAlignment)
	cfg.Judge.Endpoint = judge.URL
	cfg.Judge.APIKey = "sk-test-key"
	h, _ := judgeHarness(t, cfg)

	b := newBatch()
	id := b.generation(randomTraceID(), "Who should we hire?", "Women are bad engineers.")
	h.consume(b.td)
	h.waitSpans(1)

	byID, _ := sinkSpans(h.sink)
	events := evaluationEvents(byID[id].span)
	require.Len(t, events, 2)
	assert.Equal(t, "fail", mustStr(t, events[scoring.Bias], attrScoreLabel), "the fake judge flags the generalisation")
	assert.Greater(t, mustDouble(t, events[scoring.Bias], attrScoreValue), 0.0)
	assert.Equal(t, "pass", mustStr(t, events[scoring.PromptAlignment], attrScoreLabel))
	assert.NotEmpty(t, judge.Calls())
	metadatatest.AssertEqualProcessorLlmEvalJudgeRetries(t, h.tel, []metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp())
}

func TestUnreachableJudgeStillPassesSpans(t *testing.T) {
	cfg := testConfig(scoring.Bias)
	cfg.Judge.Endpoint = "http://127.0.0.1:1/v1" // nothing listens
	cfg.Judge.Timeout = time.Second
	h, _ := judgeHarness(t, cfg)
	b := newBatch()
	tid := randomTraceID()
	other := b.other(tid)
	id := b.generation(tid, "q", "a")
	h.consume(b.td)
	h.waitSpans(2)
	byID, count := sinkSpans(h.sink)
	assert.Equal(t, 1, count[other])
	assert.Equal(t, 1, count[id])
	ev := evaluationEvents(byID[id].span)[scoring.Bias]
	assert.Equal(t, string(scoring.ErrorJudgeUnavailable), mustStr(t, ev, attrErrorType))
}

func TestBadJudgeSettingsFailStart(t *testing.T) {
	cfg := testConfig(scoring.Bias)
	cfg.Judge.Endpoint = "ftp://judge"
	sink := new(consumertest.TracesSink)
	_, proc, err := newTracesProcessor(context.Background(), testSettings(), cfg, sink, newJudgeScorers)
	require.NoError(t, err)
	err = proc.Start(context.Background(), componenttest.NewNopHost())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ftp://judge")
	require.NoError(t, proc.Shutdown(context.Background()))
}

type countingJudge struct{ calls chan struct{} }

func (j countingJudge) Complete(context.Context, scoring.Request) (scoring.Response, error) {
	j.calls <- struct{}{}
	return scoring.Response{Content: "{}"}, nil
}

func TestPacedJudgeWaitsForItsSlot(t *testing.T) {
	inner := countingJudge{calls: make(chan struct{}, 2)}
	j := newPacedJudge(inner, time.Hour)
	_, err := j.Complete(context.Background(), scoring.Request{})
	require.NoError(t, err)

	// The next slot is an hour away: the call gives up when its context ends.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = j.Complete(ctx, scoring.Request{})
	var se *scoring.Error
	require.True(t, errors.As(err, &se))
	assert.Equal(t, scoring.ErrorJudgeTimeout, se.Type)
	assert.Len(t, inner.calls, 1, "the second call never reached the judge")
}
