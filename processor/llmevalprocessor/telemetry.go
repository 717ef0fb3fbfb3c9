package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadata"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/guard"
	"github.com/llm-eval/llm_eval/scoring/redact"
)

// telemetry records the processor's own metrics and rate-limits its logs.
type telemetry struct {
	tb       *metadata.TelemetryBuilder
	logger   *zap.Logger
	endpoint string // with the URL's secrets replaced
	redact   func(string) string
	breaker  CircuitBreakerConfig
	// itemAttrs identify this processor on the item counts, as
	// processorhelper does.
	itemAttrs metric.MeasurementOption

	// Attribute sets known in advance, so hot paths do not allocate.
	verdictAttrs map[string]map[scoring.Label]metric.MeasurementOption
	scorerAttrs  map[string]metric.MeasurementOption
	tokenAttrs   map[string][2]metric.MeasurementOption // prompt, completion
	reasonAttrs  map[string]metric.MeasurementOption
	stateAttrs   map[guard.BreakerState]metric.MeasurementOption
	join         joinAttrs

	seenMu sync.Mutex
	seen   map[string]bool // failure kinds already logged at Warn
}

func newTelemetry(set processor.Settings, cfg *Config, scrub func(string) string, held, queue metric.Int64Callback) (*telemetry, error) {
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
		tb:       tb,
		logger:   set.Logger,
		endpoint: redact.ScrubURL(cfg.Judge.ClientConfig.Endpoint),
		redact:   scrub,
		breaker:  cfg.Judge.CircuitBreaker,
		itemAttrs: metric.WithAttributeSet(attribute.NewSet(
			attribute.String("processor", set.ID.String()),
			attribute.String("otel.signal", pipeline.SignalTraces.String()))),
		verdictAttrs: map[string]map[scoring.Label]metric.MeasurementOption{},
		scorerAttrs:  map[string]metric.MeasurementOption{},
		tokenAttrs:   map[string][2]metric.MeasurementOption{},
		reasonAttrs:  map[string]metric.MeasurementOption{},
		stateAttrs:   map[guard.BreakerState]metric.MeasurementOption{},
		seen:         map[string]bool{},
		join:         newJoinAttrs(),
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
	for _, r := range []string{reasonQueueFull, reasonMaxWait, reasonShutdown, reasonNotScorable, reasonError, reasonRestarted} {
		t.reasonAttrs[r] = metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", r)))
	}
	for _, st := range []guard.BreakerState{guard.BreakerClosed, guard.BreakerHalfOpen, guard.BreakerOpen, guard.BreakerSuspended} {
		t.stateAttrs[st] = metric.WithAttributeSet(attribute.NewSet(attribute.String("state", string(st))))
	}
	return t, nil
}

// circuitStateValue is the gauge value of a breaker state.
func circuitStateValue(s guard.BreakerState) int64 {
	switch s {
	case guard.BreakerHalfOpen:
		return 1
	case guard.BreakerOpen:
		return 2
	case guard.BreakerSuspended:
		return 3
	}
	return 0
}

// circuitStater is the circuit breaker as telemetry sees it.
type circuitStater interface {
	State() guard.BreakerState
}

// cacheStater is the result cache as telemetry sees it.
type cacheStater interface {
	Stats() guard.CacheStats
}

// observeJudge registers the observers of the circuit breaker and of the
// result cache; either may be nil (no breaker, cache off).
func (t *telemetry) observeJudge(circuit circuitStater, cache cacheStater) error {
	if circuit != nil {
		if err := t.tb.RegisterProcessorLlmEvalJudgeCircuitStateCallback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(circuitStateValue(circuit.State()))
			return nil
		}); err != nil {
			return err
		}
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

// circuitChanged counts a breaker transition and logs it in one line,
// with the endpoint and never the key.
func (t *telemetry) circuitChanged(_, to guard.BreakerState, cause error) {
	ctx, cb := context.Background(), t.breaker
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
	case guard.BreakerSuspended:
		status := "401/403"
		if se, ok := errors.AsType[*scoring.Error](cause); ok && se.Status != 0 {
			status = strconv.Itoa(se.Status)
		}
		t.logger.Error("judge rejected the API key ("+status+"): evaluation suspended for "+
			cb.AuthRetryInterval.String()+"; spans pass through unscored", fields...)
	case guard.BreakerOpen:
		t.logger.Warn("judge circuit opened: no judge calls for "+cb.OpenDuration.String()+
			"; spans pass through unscored", fields...)
	case guard.BreakerHalfOpen:
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

// signalJoined counts how a call seen on both signals was matched.
func (t *telemetry) signalJoined(ctx context.Context, outcome string) {
	t.tb.ProcessorLlmEvalSignalJoins.Add(ctx, 1, metric.WithAttributes(attribute.String("outcome", outcome)))
}

// spanSkipped counts a sampled generation left without any result.
func (t *telemetry) spanSkipped(ctx context.Context, reason string) {
	t.tb.ProcessorLlmEvalSpansSkipped.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", reason)))
}

// contentMalformed counts a call not scored because attr is not its
// convention's JSON.
func (t *telemetry) contentMalformed(ctx context.Context, attr string) {
	t.tb.ProcessorLlmEvalContentMalformed.Add(ctx, 1, metric.WithAttributes(attribute.String("attribute", attr)))
}

func (t *telemetry) lateResult(ctx context.Context, scorer string) {
	t.tb.ProcessorLlmEvalLateResults.Add(ctx, 1, t.scorerOpt(scorer))
}

func (t *telemetry) lateResultDropped(ctx context.Context, scorer string) {
	t.tb.ProcessorLlmEvalLateResultsDropped.Add(ctx, 1, t.scorerOpt(scorer))
}

// incoming counts spans passed to the processor.
func (t *telemetry) incoming(ctx context.Context, spans int) {
	t.tb.ProcessorIncomingItems.Add(ctx, int64(spans), t.itemAttrs)
}

// outgoing counts spans handed to the next consumer, at once or later.
func (t *telemetry) outgoing(ctx context.Context, spans int) {
	t.tb.ProcessorOutgoingItems.Add(ctx, int64(spans), t.itemAttrs)
}

// internalDuration records how long ConsumeTraces took before forwarding.
func (t *telemetry) internalDuration(ctx context.Context, d time.Duration) {
	t.tb.ProcessorInternalDuration.Record(ctx, d.Seconds(), t.itemAttrs)
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
	if r.result.ReasonErr != nil {
		errType := errorType(r.result.ReasonErr)
		t.tb.ProcessorLlmEvalReasonFallbacks.Add(ctx, 1, metric.WithAttributes(
			attribute.String("scorer", r.scorer), attribute.String("error_type", errType)))
		t.logFailure("reason:"+errType, "reason step failed; the reason was built from the verdicts",
			zap.String("scorer", r.scorer), zap.String("error_type", errType), zap.String("error", t.redact(r.result.ReasonErr.Error())))
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
	if u.NotSent > 0 {
		t.tb.ProcessorLlmEvalJudgeCallsRefused.Add(ctx, int64(u.NotSent), t.scorerOpt(r.scorer))
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
