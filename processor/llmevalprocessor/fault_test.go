package llmevalprocessor

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strings"
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
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadatatest"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/bias"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

const faultAPIKey = "sk-fault-test-key"

var ignoreTime = metricdatatest.IgnoreTimestamp()

// fakeClock is the circuit breaker's clock in these tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// faultRig runs the processor with the real judge construction against a
// fake judge over HTTP, with tiny retry backoff (judge.retry), a fake breaker clock and
// observed logs.
type faultRig struct {
	*harness
	judge *scoringtest.Server
	clock *fakeClock
	logs  *observer.ObservedLogs
}

// faultConfig is one bias scorer in summary mode (no reason call), pointed
// at judge.
func faultConfig(endpoint string) *Config {
	cfg := testConfig(scoring.Bias)
	cfg.Scorers[0].ReasonMode = string(scoring.ReasonSummary)
	cfg.Judge.ClientConfig.Endpoint = endpoint
	cfg.Judge.APIKey = faultAPIKey
	cfg.Judge.ClientConfig.Timeout = 2 * time.Second
	cfg.MaxWait = 10 * time.Second
	return cfg
}

func newFaultRig(t *testing.T, judge *scoringtest.Server, cfg *Config, attempts int) *faultRig {
	t.Helper()
	cfg.Judge.Retry.MaxAttempts = attempts
	cfg.Judge.Retry.InitialBackoff, cfg.Judge.Retry.MaxBackoff = time.Millisecond, time.Millisecond
	require.NoError(t, confmap.Validate(cfg))
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	core, logs := observer.New(zapcore.DebugLevel)
	set := metadatatest.NewSettings(tel)
	set.Logger = zap.New(core)
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	build := func(ctx context.Context, cfg *Config, host component.Host, ts component.TelemetrySettings, hooks judgeHooks) (judgeSet, error) {
		hooks.now = clock.Now
		return newJudge(ctx, cfg, host, ts, hooks)
	}
	sink := new(consumertest.TracesSink)
	p, proc, err := newTracesProcessor(context.Background(), set, cfg, sink, build)
	require.NoError(t, err)
	require.NoError(t, proc.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { _ = proc.Shutdown(context.Background()) })
	return &faultRig{harness: &harness{t: t, p: p, proc: proc, sink: sink, tel: tel}, judge: judge, clock: clock, logs: logs}
}

// send passes one batch with a non-LLM span and a generation span, waits
// until both are out and nothing is held, and returns the generation's
// evaluation event of the bias scorer. It checks that every span that went
// in came out exactly once.
func (r *faultRig) send(output string) pcommon.Map {
	r.t.Helper()
	return r.sendInput("Who should we hire?", output)
}

// sendInput is send with the user's input given.
func (r *faultRig) sendInput(input, output string) pcommon.Map {
	r.t.Helper()
	before := r.sink.SpanCount()
	b := newBatch()
	tid := randomTraceID()
	other := b.other(tid)
	id := b.generation(tid, input, output)
	r.consume(b.td)
	r.waitSpans(before + 2)
	r.waitIdle()
	byID, count := sinkSpans(r.sink)
	assert.Equal(r.t, 1, count[other], "the non-LLM span leaves once")
	assert.Equal(r.t, 1, count[id], "the generation span leaves once")
	assert.Equal(r.t, before+2, r.sink.SpanCount(), "spans in == spans out")
	ev, ok := evaluationEvents(byID[id].span)[scoring.Bias]
	require.True(r.t, ok, "the span carries its bias evaluation")
	return ev
}

func errorTypeOf(ev pcommon.Map) string {
	v, ok := ev.Get(evalconv.AttrErrorType)
	if !ok {
		return ""
	}
	return v.Str()
}

func labelOf(ev pcommon.Map) string {
	v, ok := ev.Get(evalconv.AttrScoreLabel)
	if !ok {
		return ""
	}
	return v.Str()
}

func evaluationErrors(errType string, n int64) []metricdata.DataPoint[int64] {
	return []metricdata.DataPoint[int64]{{Attributes: attribute.NewSet(attribute.String("scorer", scoring.Bias),
		attribute.String("outcome", "error"), attribute.String("error_type", errType)), Value: n}}
}

// biasReplies answers the two bias steps.
func biasReplies(opinions, results string) func(scoringtest.Call) scoringtest.Reply {
	return func(c scoringtest.Call) scoringtest.Reply {
		if c.Step == bias.SchemaOpinions {
			return scoringtest.JSON(opinions)
		}
		return scoringtest.JSON(results)
	}
}

func always(r scoringtest.Reply) func(scoringtest.Call) scoringtest.Reply {
	return func(scoringtest.Call) scoringtest.Reply { return r }
}

func TestJudgeFaults(t *testing.T) {
	tests := []struct {
		name     string
		noServer bool // connection refused
		reply    func(scoringtest.Call) scoringtest.Reply
		timeout  time.Duration
		attempts int
		wantType scoring.ErrorType
		// wantCalls, when set, is how many calls the judge must get.
		wantCalls   int
		wantRetries int64
	}{
		{name: "connection refused", noServer: true, wantType: scoring.ErrorJudgeUnavailable},
		{name: "5xx", reply: always(scoringtest.Status(http.StatusInternalServerError, "")), attempts: 2,
			wantType: scoring.ErrorJudgeUnavailable, wantCalls: 2, wantRetries: 1},
		{name: "429 without Retry-After", reply: always(scoringtest.Status(http.StatusTooManyRequests, "")), attempts: 2,
			wantType: scoring.ErrorJudgeRateLimited, wantCalls: 2, wantRetries: 1},
		{name: "429 with Retry-After past the deadline", reply: always(scoringtest.Status(http.StatusTooManyRequests, "").WithRetryAfter("3600")),
			attempts: 3, wantType: scoring.ErrorJudgeRateLimited, wantCalls: 1},
		{name: "hang", reply: always(scoringtest.JSON(`{"opinions":[]}`).WithDelay(time.Hour)), timeout: 300 * time.Millisecond,
			wantType: scoring.ErrorJudgeTimeout},
		{name: "slow body", reply: always(scoringtest.JSON(`{"opinions":[]}`).WithTrickle(1, 100*time.Millisecond)),
			timeout: 300 * time.Millisecond, wantType: scoring.ErrorJudgeTimeout},
		{name: "non-JSON body", reply: always(scoringtest.Garbage()), wantType: scoring.ErrorJudgeParse},
		{name: "non-JSON content", reply: always(scoringtest.Content("I think it is biased.")), wantType: scoring.ErrorJudgeParse},
		{name: "truncated JSON (finish_reason length)", reply: always(scoringtest.JSON(`{"opinions":["wom`).WithFinishReason("length")),
			wantType: scoring.ErrorJudgeTruncated},
		{name: "wrong verdict count", reply: biasReplies(`{"opinions":["Women are bad engineers.","Hire fast."]}`,
			`{"results":[{"result":"yes","reason":"generalises"}]}`), wantType: scoring.ErrorJudgeParse},
		// The library types a reply without choices as judge_unavailable (not retried).
		{name: "empty choices", reply: always(scoringtest.EmptyChoices()), wantType: scoring.ErrorJudgeUnavailable, wantCalls: 1},
		// A generous timeout: writing 2 MB under -race on a loaded machine
		// can take longer than the default 2s; the reply must still be
		// refused for its size, not for the time.
		{name: "oversized reply", reply: always(scoringtest.Oversized(`{"opinions":[]}`, 2<<20)), timeout: 30 * time.Second,
			wantType: scoring.ErrorJudgeParse},
		{name: "body cut short", reply: always(scoringtest.Truncated(`{"opinions":[]}`)), wantType: scoring.ErrorJudgeUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			endpoint := "http://127.0.0.1:1/v1"
			var judge *scoringtest.Server
			gate := make(chan struct{})
			if !tt.noServer {
				judge = scoringtest.New(t)
				endpoint = judge.URL
				judge.Handle(func(c scoringtest.Call) scoringtest.Reply {
					<-gate // the judge does not answer until ConsumeTraces has returned
					return tt.reply(c)
				})
			}
			var once sync.Once
			release := func() { once.Do(func() { close(gate) }) }
			t.Cleanup(release)
			cfg := faultConfig(endpoint)
			if tt.timeout > 0 {
				cfg.Judge.ClientConfig.Timeout = tt.timeout
			}
			r := newFaultRig(t, judge, cfg, max(tt.attempts, 1))

			b := newBatch()
			tid := randomTraceID()
			other := b.other(tid)
			id := b.generation(tid, "Who should we hire?", "Women are bad engineers.")
			done := make(chan error, 1)
			go func() { done <- r.proc.ConsumeTraces(context.Background(), b.td) }()
			require.Eventually(t, func() bool {
				select {
				case err := <-done:
					require.NoError(t, err)
					return true
				default:
					return false
				}
			}, 10*time.Second, time.Millisecond, "ConsumeTraces returns while the judge has not answered")
			_, early := sinkSpans(r.sink)
			assert.Equal(t, 1, early[other], "the non-LLM span went on at once")
			if !tt.noServer { // a refused connection fails at once: no gate holds the span
				assert.Zero(t, early[id], "the generation span waits for the judge")
			}
			release()

			r.waitSpans(2)
			r.waitIdle()
			byID, count := sinkSpans(r.sink)
			assert.Equal(t, 1, count[other])
			assert.Equal(t, 1, count[id])
			assert.Equal(t, 2, r.sink.SpanCount(), "spans in == spans out")
			ev := evaluationEvents(byID[id].span)[scoring.Bias]
			assert.Equal(t, string(tt.wantType), errorTypeOf(ev))
			metadatatest.AssertEqualProcessorLlmEvalEvaluations(t, r.tel, evaluationErrors(string(tt.wantType), 1), ignoreTime)
			if tt.wantCalls > 0 {
				assert.Len(t, judge.Calls(), tt.wantCalls)
			}
			if tt.wantRetries > 0 {
				metadatatest.AssertEqualProcessorLlmEvalJudgeRetries(t, r.tel, []metricdata.DataPoint[int64]{{Value: tt.wantRetries}}, ignoreTime)
			}
			assertKeyNeverLogged(t, r.logs)
		})
	}
}

func assertKeyNeverLogged(t *testing.T, logs *observer.ObservedLogs) {
	t.Helper()
	for _, e := range logs.All() {
		line := e.Message + fmt.Sprint(e.ContextMap())
		assert.False(t, strings.Contains(line, faultAPIKey), "the API key is logged: %s", line)
	}
}

// switchableJudge answers with the failure reply while one is set, else
// as the default responder.
type switchableJudge struct {
	mu      sync.Mutex
	failure *scoringtest.Reply
}

func (j *switchableJudge) set(r *scoringtest.Reply) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.failure = r
}

func (j *switchableJudge) reply(scoringtest.Call) scoringtest.Reply {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.failure != nil {
		return *j.failure
	}
	return scoringtest.Reply{}
}

func TestCircuitBreakerStopsCallingAFailingJudge(t *testing.T) {
	judge := scoringtest.New(t)
	var sw switchableJudge
	down := scoringtest.Status(http.StatusBadGateway, "")
	sw.set(&down)
	judge.Handle(sw.reply)
	cfg := faultConfig(judge.URL)
	cfg.Judge.CircuitBreaker.FailureThreshold = 2
	r := newFaultRig(t, judge, cfg, 1)

	for range 2 {
		assert.Equal(t, string(scoring.ErrorJudgeUnavailable), errorTypeOf(r.send("Women are bad engineers.")))
	}
	require.Len(t, judge.Calls(), 2)
	metadatatest.AssertEqualProcessorLlmEvalJudgeCircuitState(t, r.tel, []metricdata.DataPoint[int64]{{Attributes: sharedJudge, Value: 2}}, ignoreTime)

	// Open: spans pass, the judge gets nothing.
	for range 3 {
		assert.Equal(t, string(scoring.ErrorCircuitOpen), errorTypeOf(r.send("Women are bad engineers.")))
	}
	assert.Len(t, judge.Calls(), 2, "no call while the circuit is open")
	assert.Equal(t, 1, r.logs.FilterMessageSnippet("judge circuit opened").FilterLevelExact(zapcore.WarnLevel).Len())

	// After open_duration one probe goes through; the judge is back.
	sw.set(nil)
	r.clock.Advance(cfg.Judge.CircuitBreaker.OpenDuration)
	ev := r.send("Women are bad engineers.")
	assert.Empty(t, errorTypeOf(ev))
	assert.Equal(t, "fail", labelOf(ev))
	assert.Greater(t, len(judge.Calls()), 2)
	metadatatest.AssertEqualProcessorLlmEvalJudgeCircuitState(t, r.tel, []metricdata.DataPoint[int64]{{Attributes: sharedJudge, Value: 0}}, ignoreTime)
	metadatatest.AssertEqualProcessorLlmEvalJudgeCircuitTransitions(t, r.tel, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(attribute.String("judge", "judge"), attribute.String("state", "open")), Value: 1},
		{Attributes: attribute.NewSet(attribute.String("judge", "judge"), attribute.String("state", "half_open")), Value: 1},
		{Attributes: attribute.NewSet(attribute.String("judge", "judge"), attribute.String("state", "closed")), Value: 1},
	}, ignoreTime)
	assertKeyNeverLogged(t, r.logs)
}

// TestRejectedKeySuspendsEvaluation: a 401 suspends evaluation with one
// error line; with the default settings one call every few seconds probes
// the judge, quietly while the key is still refused, and the first probe
// after the key was fixed at the provider resumes evaluation.
func TestRejectedKeySuspendsEvaluation(t *testing.T) {
	judge := scoringtest.New(t)
	var sw switchableJudge
	denied := scoringtest.Status(http.StatusUnauthorized, `{"error":{"message":"Incorrect API key provided: sk-fau****-key"}}`)
	sw.set(&denied)
	judge.Handle(sw.reply)
	cfg := faultConfig(judge.URL)
	interval := cfg.Judge.CircuitBreaker.AuthRetryInterval
	require.LessOrEqual(t, interval, 10*time.Second, "a fixed key is used within seconds by default")
	r := newFaultRig(t, judge, cfg, 3)

	assert.Equal(t, string(scoring.ErrorJudgeAuth), errorTypeOf(r.send("Women are bad engineers.")))
	require.Len(t, judge.Calls(), 1, "a rejected key is not retried")
	errs := r.logs.FilterLevelExact(zapcore.ErrorLevel).All()
	require.Len(t, errs, 1, "one error line")
	assert.Equal(t, "judge rejected the API key (401): evaluation suspended, probing the judge with one call every "+
		interval.String()+" until it accepts the key; spans go on with judge_auth error results instead of scores", errs[0].Message)
	assert.Equal(t, judge.URL, errs[0].ContextMap()["endpoint"])
	metadatatest.AssertEqualProcessorLlmEvalJudgeCircuitState(t, r.tel, []metricdata.DataPoint[int64]{{Attributes: sharedJudge, Value: 3}}, ignoreTime)

	// Suspended: no calls until the interval has passed.
	r.clock.Advance(interval - time.Millisecond)
	for range 3 {
		assert.Equal(t, string(scoring.ErrorCircuitOpen), errorTypeOf(r.send("Women are bad engineers.")))
	}
	assert.Len(t, judge.Calls(), 1)

	// A probe the judge still refuses: suspended for another interval,
	// without another log line or transition.
	r.clock.Advance(time.Millisecond)
	assert.Equal(t, string(scoring.ErrorJudgeAuth), errorTypeOf(r.send("Women are bad engineers.")))
	assert.Len(t, judge.Calls(), 2)
	assert.Equal(t, string(scoring.ErrorCircuitOpen), errorTypeOf(r.send("Women are bad engineers.")))
	assert.Len(t, judge.Calls(), 2)
	assert.Equal(t, 1, r.logs.FilterLevelExact(zapcore.ErrorLevel).Len())

	// The key was fixed at the provider: the next probe is judged and
	// evaluation resumes.
	sw.set(nil)
	r.clock.Advance(interval)
	ev := r.send("Women are bad engineers.")
	assert.Equal(t, "fail", labelOf(ev))
	calls := judge.Calls()
	require.Greater(t, len(calls), 2)
	assert.Equal(t, bias.SchemaOpinions, calls[2].Step, "the probe is the next evaluation's first call")
	assert.Equal(t, "fail", labelOf(r.send("Women are bad engineers.")), "closed: every evaluation is judged again")
	metadatatest.AssertEqualProcessorLlmEvalJudgeCircuitState(t, r.tel, []metricdata.DataPoint[int64]{{Attributes: sharedJudge, Value: 0}}, ignoreTime)
	metadatatest.AssertEqualProcessorLlmEvalJudgeCircuitTransitions(t, r.tel, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(attribute.String("judge", "judge"), attribute.String("state", "suspended")), Value: 1},
		{Attributes: attribute.NewSet(attribute.String("judge", "judge"), attribute.String("state", "closed")), Value: 1},
	}, ignoreTime)
	assertKeyNeverLogged(t, r.logs)
}

func TestLimiterKeepsJudgeWithinBudget(t *testing.T) {
	tests := []struct {
		name      string
		rpm, tpm  int
		wantCalls int
		wantType  scoring.ErrorType // "" when the evaluation succeeds
	}{
		// One request a minute: the second step would start a minute
		// later, past the span's deadline, so it is never sent.
		{name: "requests_per_minute", rpm: 1, wantCalls: 1, wantType: scoring.ErrorBudgetExceeded},
		// A budget smaller than one request: nothing is sent.
		{name: "tokens_per_minute", tpm: 100, wantCalls: 0, wantType: scoring.ErrorBudgetExceeded},
		{name: "unlimited", wantCalls: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			judge := scoringtest.New(t)
			cfg := faultConfig(judge.URL)
			cfg.Judge.RequestsPerMinute, cfg.Judge.TokensPerMinute = tt.rpm, tt.tpm
			cfg.MaxWait = time.Second
			r := newFaultRig(t, judge, cfg, 1)
			ev := r.send("Women are bad engineers.")
			assert.Equal(t, string(tt.wantType), errorTypeOf(ev))
			assert.Len(t, judge.Calls(), tt.wantCalls)
			if tt.wantType != "" {
				metadatatest.AssertEqualProcessorLlmEvalEvaluations(t, r.tel, evaluationErrors(string(tt.wantType), 1), ignoreTime)
			}
		})
	}
}

func TestCacheJudgesRepeatedGenerationsOnce(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		t.Run(fmt.Sprintf("enabled=%t", enabled), func(t *testing.T) {
			judge := scoringtest.New(t)
			cfg := faultConfig(judge.URL)
			cfg.Cache.Enabled = enabled
			r := newFaultRig(t, judge, cfg, 1)

			first := r.send("Women are bad engineers.")
			require.Equal(t, "fail", labelOf(first))
			calls := len(judge.Calls())
			require.Positive(t, calls)

			second := r.send("Women are bad engineers.")
			assert.Equal(t, "fail", labelOf(second), "the repeated span still carries the result")
			score, _ := second.Get(evalconv.AttrScoreValue)
			firstScore, _ := first.Get(evalconv.AttrScoreValue)
			assert.Equal(t, firstScore.Double(), score.Double())
			if !enabled {
				assert.Len(t, judge.Calls(), 2*calls, "without the cache the judge is asked again")
				return
			}
			assert.Len(t, judge.Calls(), calls, "the judge is not called for the repeat")
			metadatatest.AssertEqualProcessorLlmEvalCacheHits(t, r.tel, []metricdata.DataPoint[int64]{{Value: 1}}, ignoreTime)
			metadatatest.AssertEqualProcessorLlmEvalCacheMisses(t, r.tel, []metricdata.DataPoint[int64]{{Value: 1}}, ignoreTime)
			scorer := attribute.NewSet(attribute.String("scorer", scoring.Bias))
			metadatatest.AssertEqualProcessorLlmEvalJudgeCallsPerEvaluation(t, r.tel, []metricdata.HistogramDataPoint[int64]{{
				Attributes: scorer, Count: 2, Sum: int64(calls),
				Bounds:       []float64{0, 1, 2, 3, 4, 5, 6, 8, 10},
				BucketCounts: bucketsOf([]float64{0, 1, 2, 3, 4, 5, 6, 8, 10}, 0, int64(calls)),
				Min:          metricdata.NewExtrema[int64](0), Max: metricdata.NewExtrema(int64(calls)),
			}}, ignoreTime)
		})
	}
}

// bucketsOf counts values into explicit histogram buckets.
func bucketsOf(bounds []float64, values ...int64) []uint64 {
	counts := make([]uint64, len(bounds)+1)
	for _, v := range values {
		i := 0
		for i < len(bounds) && float64(v) > bounds[i] {
			i++
		}
		counts[i]++
	}
	return counts
}

func TestMaxInputCharsTruncatesWhatTheJudgeSees(t *testing.T) {
	long := strings.Repeat("Women are bad engineers. ", 40) // 1000 characters
	for _, maxChars := range []int{0, 100} {
		t.Run(fmt.Sprintf("max_input_chars=%d", maxChars), func(t *testing.T) {
			judge := scoringtest.New(t)
			cfg := faultConfig(judge.URL)
			cfg.MaxInputChars = maxChars
			r := newFaultRig(t, judge, cfg, 1)
			r.send(long)
			sent := judge.Calls()[0].Text()
			if maxChars == 0 {
				assert.Contains(t, sent, strings.TrimSpace(long))
				assert.NotContains(t, sent, scoring.TruncationMarker)
				_, err := r.tel.GetMetric("otelcol_processor_llm_eval_inputs_truncated")
				assert.Error(t, err, "nothing was truncated, nothing counted")
				return
			}
			assert.Contains(t, sent, scoring.TruncationMarker)
			assert.NotContains(t, sent, long[:200])
			metadatatest.AssertEqualProcessorLlmEvalInputsTruncated(t, r.tel, []metricdata.DataPoint[int64]{
				{Attributes: attribute.NewSet(attribute.String("scorer", scoring.Bias)), Value: 1},
			}, ignoreTime)
		})
	}
}

func TestRedactionKeepsPersonalDataFromTheJudge(t *testing.T) {
	const (
		email = "jane.doe@example.com"
		card  = "4111 1111 1111 1111"
		phone = "+44 20 7946 0958"
	)
	output := "Women are bad engineers. Write to " + email + ", call " + phone + " or pay with " + card + "."
	for _, enabled := range []bool{true, false} {
		t.Run(fmt.Sprintf("enabled=%t", enabled), func(t *testing.T) {
			judge := scoringtest.New(t)
			cfg := faultConfig(judge.URL)
			cfg.Redaction.Enabled = enabled
			r := newFaultRig(t, judge, cfg, 1)
			ev := r.send(output)
			require.Empty(t, errorTypeOf(ev))
			calls := judge.Calls()
			require.NotEmpty(t, calls)
			for _, c := range calls {
				body := string(c.Body)
				for _, secret := range []string{email, card, phone} {
					if enabled {
						assert.NotContains(t, body, secret, "step %s", c.Step)
					}
				}
			}
			first := calls[0].Text()
			if enabled {
				assert.Contains(t, first, "[REDACTED:email]")
				assert.Contains(t, first, "[REDACTED:payment_card]")
				assert.Contains(t, first, "[REDACTED:phone]")
				return
			}
			for _, secret := range []string{email, card, phone} {
				assert.Contains(t, first, secret)
			}
		})
	}
}

// sharedJudge is the judge attribute of the shared judge's circuit metrics.
var sharedJudge = attribute.NewSet(attribute.String("judge", "judge"))

// sumOf is the sum of the int64 sum metric name's data points whose
// attributes hold every key-value pair of match (nil matches all); 0 when
// nothing was recorded.
func sumOf(t *testing.T, tel *componenttest.Telemetry, name string, match ...attribute.KeyValue) int64 {
	t.Helper()
	return pointsSum[int64](t, tel, name, match...)
}

// pointsSum is sumOf for a sum metric of values N.
func pointsSum[N int64 | float64](t *testing.T, tel *componenttest.Telemetry, name string, match ...attribute.KeyValue) N {
	t.Helper()
	m, err := tel.GetMetric(name)
	if err != nil {
		return 0 // never recorded
	}
	sum, ok := m.Data.(metricdata.Sum[N])
	require.True(t, ok, "%s is a sum of %T", name, N(0))
	var total N
	for _, dp := range sum.DataPoints {
		all := true
		for _, kv := range match {
			v, ok := dp.Attributes.Value(kv.Key)
			all = all && ok && v == kv.Value
		}
		if all {
			total += dp.Value
		}
	}
	return total
}

// TestFaultRunOutputBoundAndHonestCalls is the repeatable fault run of
// issue 12: in every fault mode of the fake judge, with the circuit
// breaker on, many spans go through the processor, and
//   - every input span leaves exactly once;
//   - output spans <= input spans + scorers × spans that left on max_wait
//     (the README's bound: only a late verdict becomes a child span);
//   - judge_calls equals the requests the fake judge received, and
//     judge_calls_refused counts the calls that never reached it.
//
// Nothing here is timed: short judge timeouts and max_wait values only
// pick which path a span takes, and the assertions hold on either path.
func TestFaultRunOutputBoundAndHonestCalls(t *testing.T) {
	const spans = 12 // generations; each batch also carries one non-LLM span
	// No opinion found, so bias judges the whole output as one (the same
	// reply answers both steps).
	ok := scoringtest.JSON(`{"opinions":[],"results":[{"result":"no","reason":"fine"}]}`)
	tests := []struct {
		name     string
		noServer bool // connection refused
		reply    func(scoringtest.Call) scoringtest.Reply
		timeout  time.Duration // judge.timeout; default 30s
		maxWait  time.Duration // default 30s
		// allAtOnce gives every evaluation its own worker, so that none
		// starts only when a hung call frees a worker, at its deadline.
		allAtOnce bool
		// refusedTypes are the error types whose evaluations made one
		// call that never reached the judge.
		refusedTypes []scoring.ErrorType
		// gated holds every judge reply until all input spans are out.
		gated bool
		// wantLate says late child spans must appear (slow judge).
		wantLate bool
	}{
		// A hung judge: spans leave on max_wait, the late results are
		// errors (timeouts) and become no spans. The timeout (10s) leaves a
		// loaded machine time to deliver each request before the client
		// gives up on it. (Queued behind hung calls, an evaluation would
		// start at its deadline and might end before its request is
		// written: not a judge call, yet its error type does not say so.)
		{name: "hang", reply: always(ok.WithDelay(time.Hour)), timeout: 10 * time.Second, maxWait: 20 * time.Millisecond, allAtOnce: true},
		{name: "5xx", reply: always(scoringtest.Status(http.StatusInternalServerError, ""))},
		{name: "429 without Retry-After", reply: always(scoringtest.Status(http.StatusTooManyRequests, ""))},
		{name: "429 with Retry-After", reply: always(scoringtest.Status(http.StatusTooManyRequests, "").WithRetryAfter("1"))},
		{name: "connection refused", noServer: true, refusedTypes: []scoring.ErrorType{scoring.ErrorJudgeUnavailable}},
		{name: "garbled", reply: always(scoringtest.Garbage())},
		{name: "truncated JSON", reply: always(scoringtest.JSON(`{"opinions":["wom`).WithFinishReason("length"))},
		{name: "body cut short", reply: always(scoringtest.Truncated(`{"opinions":[]}`))},
		{name: "oversized", reply: always(scoringtest.Oversized(`{"opinions":[]}`, 2<<20))},
		{name: "echoing", reply: scoringtest.Echo(http.StatusBadRequest)},
		// A slow but healthy judge: it answers only after every span has
		// left on max_wait, and every late verdict becomes one child
		// span, the bound's worst case.
		{name: "slow", reply: always(ok), gated: true, maxWait: 20 * time.Millisecond, wantLate: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			endpoint := "http://127.0.0.1:1/v1"
			var judge *scoringtest.Server
			gate := make(chan struct{})
			var once sync.Once
			release := func() { once.Do(func() { close(gate) }) }
			t.Cleanup(release)
			if !tt.noServer {
				judge = scoringtest.New(t)
				endpoint = judge.URL
				judge.Handle(func(c scoringtest.Call) scoringtest.Reply {
					if tt.gated {
						<-gate
					}
					return tt.reply(c)
				})
			}
			cfg := faultConfig(endpoint)
			cfg.Cache.Enabled = false // every evaluation asks the judge
			cfg.Judge.CircuitBreaker.FailureThreshold = 3
			cfg.Judge.ClientConfig.Timeout = cmp.Or(tt.timeout, 30*time.Second)
			cfg.MaxWait = cmp.Or(tt.maxWait, 30*time.Second)
			if tt.allAtOnce {
				cfg.Judge.MaxConcurrency = spans
			}
			// One attempt per call, so that every request the judge
			// receives is one judge call (retries are judge_retries).
			r := newFaultRig(t, judge, cfg, 1)

			in := map[pcommon.SpanID]bool{}
			for i := range spans {
				b := newBatch()
				tid := randomTraceID()
				in[b.other(tid)] = true
				in[b.generation(tid, "Who should we hire?", fmt.Sprintf("Answer %d: women are bad engineers.", i))] = true
				r.consume(b.td)
			}
			// Generous waits: a loaded machine may be slow, never wrong.
			require.Eventually(t, func() bool { return r.sink.SpanCount() >= len(in) }, time.Minute, 5*time.Millisecond,
				"every input span comes out")
			release()
			require.Eventually(t, func() bool { return unfinishedCount(r.p.store) == 0 }, time.Minute, 5*time.Millisecond,
				"every evaluation finishes")
			r.shutdown() // waits for the late results being delivered

			byID, count := sinkSpans(r.sink)
			for id := range in {
				assert.Equal(t, 1, count[id], "input span %s leaves exactly once", id)
			}
			out := r.sink.SpanCount()
			late := out - len(in)
			for id, n := range count {
				if !in[id] {
					assert.Equal(t, 1, n, "a late child span is emitted once")
					assert.True(t, hasParentIn(byID[id].span, in), "a late span is a child of an input span")
				}
			}

			scorers := int64(len(cfg.Scorers))
			leftOnMaxWait := sumOf(t, r.tel, "otelcol_processor_llm_eval_spans_unscored", attribute.String("reason", reasonMaxWait))
			assert.LessOrEqual(t, int64(out), int64(len(in))+scorers*leftOnMaxWait,
				"output spans <= input spans + scorers × spans that left on max_wait")
			assert.Equal(t, int64(late), sumOf(t, r.tel, "otelcol_processor_llm_eval_late_results"),
				"every late child span is counted in late_results")
			if tt.wantLate {
				assert.Positive(t, late, "a slow judge's late verdicts become child spans")
			} else {
				assert.Zero(t, late, "a late error becomes no span (late_results: verdicts)")
			}

			received := 0
			if judge != nil {
				received = len(judge.Calls())
			}
			calls := sumOf(t, r.tel, "otelcol_processor_llm_eval_judge_calls")
			assert.Equal(t, int64(received), calls, "judge_calls == requests the judge received")
			var wantRefused int64
			for _, et := range append(tt.refusedTypes, scoring.ErrorCircuitOpen) {
				wantRefused += sumOf(t, r.tel, "otelcol_processor_llm_eval_evaluations", attribute.String("error_type", string(et)))
			}
			assert.Equal(t, wantRefused, sumOf(t, r.tel, "otelcol_processor_llm_eval_judge_calls_refused"),
				"judge_calls_refused: one per evaluation that never reached the judge")
			assert.Equal(t, int64(spans), sumOf(t, r.tel, "otelcol_processor_llm_eval_evaluations"),
				"every evaluation is counted once")
			t.Logf("spans in %d, out %d (late %d), left on max_wait %d; judge received %d, judge_calls %d, refused %d",
				len(in), out, late, leftOnMaxWait, received, calls, wantRefused)
			assertKeyNeverLogged(t, r.logs)
		})
	}
}

// hasParentIn reports whether s is a child of a span in ids.
func hasParentIn(s ptrace.Span, ids map[pcommon.SpanID]bool) bool {
	return ids[s.ParentSpanID()]
}
