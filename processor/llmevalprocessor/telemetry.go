package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"regexp"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadata"
	"github.com/llm-eval/llm_eval/scoring"
)

// telemetry records the processor's own metrics and rate-limits its logs.
type telemetry struct {
	tb       *metadata.TelemetryBuilder
	logger   *zap.Logger
	endpoint string
	redact   func(string) string

	// Attribute sets known in advance, so hot paths do not allocate.
	verdictAttrs map[string]map[scoring.Label]metric.MeasurementOption
	scorerAttrs  map[string]metric.MeasurementOption
	tokenAttrs   map[string][2]metric.MeasurementOption // prompt, completion
	reasonAttrs  map[string]metric.MeasurementOption
	stateAttrs   map[scoring.BreakerState]metric.MeasurementOption

	seenMu sync.Mutex
	seen   map[string]bool // failure kinds already logged at Warn
}

func newTelemetry(set processor.Settings, cfg *Config, redact func(string) string, held, queue metric.Int64Callback) (*telemetry, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	if err := tb.RegisterProcessorLlmEvalHeldSpansCallback(held); err != nil {
		return nil, err
	}
	if err := tb.RegisterProcessorLlmEvalQueueDepthCallback(queue); err != nil {
		return nil, err
	}
	t := &telemetry{
		tb:           tb,
		logger:       set.Logger,
		endpoint:     cfg.Judge.ClientConfig.Endpoint,
		redact:       redact,
		verdictAttrs: map[string]map[scoring.Label]metric.MeasurementOption{},
		scorerAttrs:  map[string]metric.MeasurementOption{},
		tokenAttrs:   map[string][2]metric.MeasurementOption{},
		reasonAttrs:  map[string]metric.MeasurementOption{},
		stateAttrs:   map[scoring.BreakerState]metric.MeasurementOption{},
		seen:         map[string]bool{},
	}
	for _, sc := range cfg.Scorers {
		name := attribute.String("scorer", sc.Name)
		t.verdictAttrs[sc.Name] = map[scoring.Label]metric.MeasurementOption{}
		for _, l := range []scoring.Label{scoring.LabelPass, scoring.LabelFail, scoring.LabelNotScorable} {
			t.verdictAttrs[sc.Name][l] = metric.WithAttributeSet(attribute.NewSet(name, attribute.String("outcome", string(l))))
		}
		t.scorerAttrs[sc.Name] = metric.WithAttributeSet(attribute.NewSet(name))
		t.tokenAttrs[sc.Name] = [2]metric.MeasurementOption{
			metric.WithAttributeSet(attribute.NewSet(name, attribute.String("type", "prompt"))),
			metric.WithAttributeSet(attribute.NewSet(name, attribute.String("type", "completion"))),
		}
	}
	for _, r := range []string{reasonQueueFull, reasonMaxWait, reasonShutdown, reasonNotScorable, reasonError} {
		t.reasonAttrs[r] = metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", r)))
	}
	for _, st := range []scoring.BreakerState{scoring.BreakerClosed, scoring.BreakerHalfOpen, scoring.BreakerOpen, scoring.BreakerSuspended} {
		t.stateAttrs[st] = metric.WithAttributeSet(attribute.NewSet(attribute.String("state", string(st))))
	}
	return t, nil
}

// circuitStateValue is the gauge value of a breaker state.
func circuitStateValue(s scoring.BreakerState) int64 {
	switch s {
	case scoring.BreakerHalfOpen:
		return 1
	case scoring.BreakerOpen:
		return 2
	case scoring.BreakerSuspended:
		return 3
	}
	return 0
}

// observeGuards registers the observers of the result cache (nil when it
// is off) and of the circuit breaker state.
func (t *telemetry) observeGuards(cache *scoring.Cache, circuit *atomic.Int64) error {
	if err := t.tb.RegisterProcessorLlmEvalJudgeCircuitStateCallback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(circuit.Load())
		return nil
	}); err != nil {
		return err
	}
	if cache == nil {
		return nil
	}
	if err := t.tb.RegisterProcessorLlmEvalCacheHitsCallback(func(_ context.Context, o metric.Int64Observer) error {
		s := cache.Stats()
		o.Observe(int64(s.Hits + s.Coalesced))
		return nil
	}); err != nil {
		return err
	}
	return t.tb.RegisterProcessorLlmEvalCacheMissesCallback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(int64(cache.Stats().Misses))
		return nil
	})
}

// httpStatusRE finds the status code in a judge error message.
var httpStatusRE = regexp.MustCompile(`HTTP (\d{3})`)

// circuitChanged counts a breaker transition and logs it in one line,
// with the endpoint and never the key.
func (t *telemetry) circuitChanged(ctx context.Context, to scoring.BreakerState, cause error, cb CircuitBreakerConfig) {
	opt, ok := t.stateAttrs[to]
	if !ok {
		opt = metric.WithAttributes(attribute.String("state", string(to)))
	}
	t.tb.ProcessorLlmEvalJudgeCircuitTransitions.Add(ctx, 1, opt)
	fields := []zap.Field{zap.String("endpoint", t.endpoint)}
	if cause != nil {
		fields = append(fields, zap.String("error", t.redact(cause.Error())))
	}
	switch to {
	case scoring.BreakerSuspended:
		status := "401/403"
		if cause != nil {
			if m := httpStatusRE.FindStringSubmatch(cause.Error()); m != nil {
				status = m[1]
			}
		}
		t.logger.Error("judge rejected the API key ("+status+"): evaluation suspended for "+
			cb.AuthRetryInterval.String()+"; spans pass through unscored", fields...)
	case scoring.BreakerOpen:
		t.logger.Warn("judge circuit opened: no judge calls for "+cb.OpenDuration.String()+
			"; spans pass through unscored", fields...)
	case scoring.BreakerHalfOpen:
		t.logger.Info("judge circuit half-open: probing the endpoint with one call", fields...)
	default:
		t.logger.Info("judge circuit closed: evaluation resumed", fields...)
	}
}

func (t *telemetry) scorerOpt(name string) metric.MeasurementOption {
	if o, ok := t.scorerAttrs[name]; ok {
		return o
	}
	return metric.WithAttributes(attribute.String("scorer", name))
}

func (t *telemetry) spansSelected(ctx context.Context, selected, sampled int) {
	t.tb.ProcessorLlmEvalSpansSelected.Add(ctx, int64(selected))
	if sampled > 0 {
		t.tb.ProcessorLlmEvalSpansSampled.Add(ctx, int64(sampled))
	}
}

func (t *telemetry) spanUnscored(ctx context.Context, reason string) {
	opt, ok := t.reasonAttrs[reason]
	if !ok {
		opt = metric.WithAttributes(attribute.String("reason", reason))
	}
	t.tb.ProcessorLlmEvalSpansUnscored.Add(ctx, 1, opt)
}

func (t *telemetry) lateResult(ctx context.Context, scorer string) {
	t.tb.ProcessorLlmEvalLateResults.Add(ctx, 1, t.scorerOpt(scorer))
}

// recordResult counts a finished evaluation, its judge usage, and logs a
// failure.
func (t *telemetry) recordResult(ctx context.Context, r evalResult) {
	label := r.label()
	if label == scoring.LabelError {
		errType := r.errorType()
		t.tb.ProcessorLlmEvalEvaluations.Add(ctx, 1, metric.WithAttributes(
			attribute.String("scorer", r.scorer), attribute.String("outcome", string(label)), attribute.String("error_type", errType)))
		t.logFailure(errType, "evaluation failed",
			zap.String("scorer", r.scorer), zap.String("error_type", errType), zap.String("error", r.explanation(t.redact)))
	} else {
		opt, ok := t.verdictAttrs[r.scorer][label]
		if !ok {
			opt = metric.WithAttributes(attribute.String("scorer", r.scorer), attribute.String("outcome", string(label)))
		}
		t.tb.ProcessorLlmEvalEvaluations.Add(ctx, 1, opt)
	}
	u := r.result.Usage
	if r.ran {
		opt := t.scorerOpt(r.scorer)
		t.tb.ProcessorLlmEvalJudgeCallsPerEvaluation.Record(ctx, int64(u.LLMCalls), opt)
		t.tb.ProcessorLlmEvalJudgeTokensPerEvaluation.Record(ctx, int64(u.PromptTokens+u.CompletionTokens), opt)
		// A cache hit is truncated too but sent nothing: count what went out.
		if r.result.Truncated && u.LLMCalls > 0 {
			t.tb.ProcessorLlmEvalInputsTruncated.Add(ctx, 1, opt)
		}
	}
	if u.LLMCalls > 0 {
		opt := t.scorerOpt(r.scorer)
		t.tb.ProcessorLlmEvalJudgeCalls.Add(ctx, int64(u.LLMCalls), opt)
		t.tb.ProcessorLlmEvalJudgeLatency.Record(ctx, u.Latency.Seconds(), opt)
		tok, ok := t.tokenAttrs[r.scorer]
		if ok {
			t.tb.ProcessorLlmEvalJudgeTokens.Add(ctx, int64(u.PromptTokens), tok[0])
			t.tb.ProcessorLlmEvalJudgeTokens.Add(ctx, int64(u.CompletionTokens), tok[1])
		}
	}
}

// judgeRetry counts one retried judge call.
func (t *telemetry) judgeRetry(ctx context.Context) {
	t.tb.ProcessorLlmEvalJudgeRetries.Add(ctx, 1)
}

// logFailure logs the first failure of each kind at Warn and the rest at
// Debug, so an unreachable judge does not flood the logs.
func (t *telemetry) logFailure(kind, msg string, fields ...zap.Field) {
	t.seenMu.Lock()
	first := !t.seen[kind]
	t.seen[kind] = true
	t.seenMu.Unlock()
	fields = append(fields, zap.String("endpoint", t.endpoint))
	if first {
		t.logger.Warn(msg+" (further failures of this kind are logged at debug level)", fields...)
		return
	}
	t.logger.Debug(msg, fields...)
}

func (t *telemetry) shutdown() {
	t.tb.Shutdown()
}
