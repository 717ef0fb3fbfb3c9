package llmevalprocessor

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadatatest"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// judgeHarness runs the processor with the real OpenAI judge construction.
func judgeHarness(t *testing.T, cfg *Config) (*harness, *llmEvalProcessor) {
	t.Helper()
	require.NoError(t, confmap.Validate(cfg))
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	sink := new(consumertest.TracesSink)
	p, proc, err := newTracesProcessor(context.Background(), metadatatest.NewSettings(tel), cfg, sink, newJudge)
	require.NoError(t, err)
	require.NoError(t, proc.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { _ = proc.Shutdown(context.Background()) })
	return &harness{t: t, p: p, proc: proc, sink: sink, tel: tel}, p
}

func TestWithFakeJudgeOverHTTP(t *testing.T) {
	judge := scoringtest.New(t)
	judge.Script(scoringtest.AnyStep, scoringtest.Status(http.StatusServiceUnavailable, `{"error":{"message":"busy"}}`))
	cfg := testConfig(scoring.Bias, scoring.PromptAlignment)
	cfg.Judge.ClientConfig.Endpoint = judge.URL
	cfg.Judge.APIKey = "sk-test-key"
	h, _ := judgeHarness(t, cfg)

	events := evaluateOne(h, "Who should we hire?", "Women are bad engineers.")
	require.Len(t, events, 2)
	assert.Equal(t, "fail", mustStr(t, events[scoring.Bias], evalconv.AttrScoreLabel), "the fake judge flags the generalisation")
	assert.Greater(t, mustDouble(t, events[scoring.Bias], evalconv.AttrScoreValue), 0.0)
	assert.Equal(t, "pass", mustStr(t, events[scoring.PromptAlignment], evalconv.AttrScoreLabel))
	assert.NotEmpty(t, judge.Calls())
	metadatatest.AssertEqualProcessorLlmEvalJudgeRetries(t, h.tel, []metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp())
}

func TestUnreachableJudgeStillPassesSpans(t *testing.T) {
	cfg := testConfig(scoring.Bias)
	cfg.Judge.ClientConfig.Endpoint = "http://127.0.0.1:1/v1" // nothing listens
	cfg.Judge.ClientConfig.Timeout = time.Second
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
	assert.Equal(t, string(scoring.ErrorJudgeUnavailable), mustStr(t, ev, evalconv.AttrErrorType))
}

func TestBadJudgeSettingsFailStart(t *testing.T) {
	cfg := testConfig(scoring.Bias)
	cfg.Judge.ClientConfig.Endpoint = "ftp://judge"
	sink := new(consumertest.TracesSink)
	_, proc, err := newTracesProcessor(context.Background(), testSettings(), cfg, sink, newJudge)
	require.NoError(t, err)
	err = proc.Start(context.Background(), componenttest.NewNopHost())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ftp://judge")
	require.NoError(t, proc.Shutdown(context.Background()))
}

func TestJudgeClientKeepsIdleConnsForEveryWorker(t *testing.T) {
	tests := []struct {
		name  string
		judge map[string]any
		want  int
	}{
		{name: "unset follows max_concurrency", judge: map[string]any{"max_concurrency": 12}, want: 12},
		{name: "keepalive section kept", judge: map[string]any{"keepalive": map[string]any{"max_idle_conns_per_host": 5}}, want: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(scoring.Bias)
			tt.judge["endpoint"], tt.judge["model"] = "http://judge/v1", "m"
			require.NoError(t, confmap.NewFromStringMap(map[string]any{"judge": tt.judge}).Unmarshal(cfg))
			assert.Equal(t, tt.want, idleConnsPerHost(judgeClientConfig(cfg.Judge)))
		})
	}
}

func TestJudgeClientProgrammaticKeepaliveFollowsMaxConcurrency(t *testing.T) {
	cfg := testConfig(scoring.Bias)
	cfg.Judge.MaxConcurrency = 16
	cfg.Judge.ClientConfig.Keepalive = configoptional.Some(confighttp.NewDefaultKeepaliveClientConfig())
	assert.Equal(t, 16, idleConnsPerHost(judgeClientConfig(cfg.Judge)))
	assert.Equal(t, 0, cfg.Judge.ClientConfig.Keepalive.Get().MaxIdleConnsPerHost, "the configuration itself is not modified")
}

// idleConnsPerHost is the value ToClient uses; zero when keep-alives are off.
func idleConnsPerHost(cc confighttp.ClientConfig) int {
	if ka := cc.Keepalive.Get(); ka != nil {
		return ka.MaxIdleConnsPerHost
	}
	return 0
}

func TestJudgeClientWriteBufferHoldsARequest(t *testing.T) {
	tests := []struct {
		name  string
		judge map[string]any
		want  int
	}{
		{name: "unset", judge: map[string]any{}, want: judgeWriteBufferSize},
		{name: "set by the user", judge: map[string]any{"write_buffer_size": 8192}, want: 8192},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(scoring.Bias)
			tt.judge["endpoint"], tt.judge["model"] = "http://judge/v1", "m"
			require.NoError(t, confmap.NewFromStringMap(map[string]any{"judge": tt.judge}).Unmarshal(cfg))
			assert.Equal(t, tt.want, judgeClientConfig(cfg.Judge).WriteBufferSize)
		})
	}
}

// TestJudgeClientIsNotInstrumented checks that judge calls make no otelhttp
// client spans or http.client metrics, while the processor's own judge
// metrics count them.
func TestJudgeClientIsNotInstrumented(t *testing.T) {
	judge := scoringtest.New(t)
	cfg := testConfig(scoring.PromptAlignment)
	cfg.Judge.ClientConfig.Endpoint = judge.URL
	h, _ := judgeHarness(t, cfg)

	b := newBatch()
	b.generation(randomTraceID(), "Say hi.", "Hi!")
	h.consume(b.td)
	h.waitSpans(1)

	require.NotEmpty(t, judge.Calls())
	calls, err := h.tel.GetMetric("otelcol_processor_llm_eval_judge_calls")
	require.NoError(t, err)
	var sent int64
	for _, dp := range calls.Data.(metricdata.Sum[int64]).DataPoints {
		sent += dp.Value
	}
	assert.Equal(t, int64(len(judge.Calls())), sent)
	for _, name := range []string{"http.client.request.duration", "http.client.request.body.size"} {
		_, err := h.tel.GetMetric(name)
		assert.Error(t, err, "%s is recorded", name)
	}
	assert.Empty(t, h.tel.SpanRecorder.Ended(), "judge calls made client spans")
}

// TestJudgeTransportFollowsForceAttemptHTTP2 checks the "Judge transport"
// section of docs/sizing.md: against an HTTPS judge the client speaks HTTP/1.1
// by default (unlike confighttp's default) and HTTP/2 with
// judge.force_attempt_http2: true.
func TestJudgeTransportFollowsForceAttemptHTTP2(t *testing.T) {
	judge := scoringtest.NewTLSServer()
	t.Cleanup(judge.Close)
	caFile := filepath.Join(t.TempDir(), "judge.pem")
	require.NoError(t, os.WriteFile(caFile, judge.CertificatePEM(), 0o600))

	tests := []struct {
		name  string
		judge map[string]any
		want  string
	}{
		{name: "default", judge: map[string]any{}, want: "HTTP/1.1"},
		{name: "force_attempt_http2 true", judge: map[string]any{"force_attempt_http2": true}, want: "HTTP/2.0"},
		{name: "force_attempt_http2 false", judge: map[string]any{"force_attempt_http2": false}, want: "HTTP/1.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(judge.Calls())
			cfg := testConfig(scoring.PromptAlignment)
			tt.judge["endpoint"], tt.judge["model"] = judge.URL, "m"
			tt.judge["tls"] = map[string]any{"ca_file": caFile}
			require.NoError(t, confmap.NewFromStringMap(map[string]any{"judge": tt.judge}).Unmarshal(cfg))
			h, _ := judgeHarness(t, cfg)

			b := newBatch()
			b.generation(randomTraceID(), "Say hi.", "Hi!")
			h.consume(b.td)
			h.waitSpans(1)

			calls := judge.Calls()[before:]
			require.NotEmpty(t, calls)
			for _, c := range calls {
				assert.Equal(t, tt.want, c.Proto)
			}
		})
	}
}

// The result cache keys a scorer's case on what the scorer sends to the
// judge: a call seen with two different sets of trace documents (as a copy
// delivered again after a restart and its held twin, back from storage
// without the trace context index, may be) is judged once by bias, which
// never sends context, and twice by hallucination, which judges against it.
func TestCacheKeyLeavesOutContextTheScorerDoesNotSend(t *testing.T) {
	judge := scoringtest.New(t)
	cfg := testConfig(scoring.Bias, scoring.Hallucination)
	cfg.Judge.ClientConfig.Endpoint = judge.URL
	cfg.Cache.Enabled = true
	js, err := newJudge(context.Background(), cfg, componenttest.NewNopHost(), componenttest.NewNopTelemetrySettings(), judgeHooks{})
	require.NoError(t, err)
	require.Len(t, js.scorers, 2)

	withDocs := scoring.Case{Input: "Where is order 7?", Output: "Order 7 shipped; careless customers always ask.",
		Context: []string{"Order 7 shipped on Monday."}}
	otherDocs := withDocs
	otherDocs.Context = []string{"Order 7 is still in the warehouse."}
	for i, want := range []struct {
		scorer     string
		secondPaid bool
	}{{scoring.Bias, false}, {scoring.Hallucination, true}} {
		s := js.scorers[i]
		require.Equal(t, want.scorer, s.Name())
		first := s.Score(context.Background(), withDocs)
		require.NotEqual(t, scoring.LabelError, first.Label, "%s: %v", want.scorer, first.Err)
		require.Positive(t, first.Usage.LLMCalls, "%s: the first case calls the judge", want.scorer)
		second := s.Score(context.Background(), otherDocs)
		assert.Equal(t, want.secondPaid, second.Usage.LLMCalls > 0, "%s: the case with other documents paid %d calls", want.scorer, second.Usage.LLMCalls)
		if !want.secondPaid {
			assert.Equal(t, first.Label, second.Label)
			assert.Equal(t, first.Score, second.Score)
		}
	}
	assert.Equal(t, uint64(1), js.cache.Stats().Hits, "bias's second case is a hit")
}
