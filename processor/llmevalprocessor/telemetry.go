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

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadata"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/tracecontext"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/guard"
	"github.com/llm-eval/llm_eval/scoring/redact"
)

// telemetry records the processor's own metrics and rate-limits its logs.
type telemetry struct {
	tb       *metadata.TelemetryBuilder
	logger   *zap.Logger
	endpoint string                 // with the URL's secrets replaced
	secrets  *redact.SecretScrubber // the judge's secrets, scrubbed from what is logged
	judge    judgeFacts
	// itemAttrs identify this processor on the item counts, as
	// processorhelper does.
	itemAttrs metric.MeasurementOption

	// Attribute sets known in advance, so hot paths do not allocate.
	verdictAttrs map[string]map[scoring.Label]metric.MeasurementOption
	scorerAttrs  map[string]metric.MeasurementOption
	tokenAttrs   map[string][2]metric.MeasurementOption // prompt, completion
	reasonAttrs  map[string]metric.MeasurementOption
	join         joinAttrs

	seenMu sync.Mutex
	seen   map[string]bool // failure kinds already logged at Warn

	capture captureWarnings // content capture off, once per service and library (capturewarn.go)
}

// judgeFacts is what the telemetry says of the judge in its log lines.
type judgeFacts struct {
	endpoint     string        // as configured; the telemetry scrubs its secrets
	openDuration time.Duration // circuit_breaker.open_duration
	authRetry    time.Duration // circuit_breaker.auth_retry_interval
	// endpoints are the other judges' endpoints by judge name, as
	// configured; the telemetry scrubs their secrets.
	endpoints map[string]string
}

// newTelemetry records the metrics of a processor whose scorers are named
// scorers; joinSources are the values of context_joins' source
// attribute, and held and queue observe the store.
func newTelemetry(set processor.Settings, judge judgeFacts, scorers, joinSources []string, secrets *redact.SecretScrubber, held, queue metric.Int64Callback) (*telemetry, error) {
	tb, err := metadata.NewTelemetryBuilder(telemetrySettings(set.TelemetrySettings))
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
		capture:  captureWarnings{logger: set.Logger},
		endpoint: redact.ScrubURL(judge.endpoint),
		secrets:  secrets,
		judge:    judge,
		itemAttrs: metric.WithAttributeSet(attribute.NewSet(
			attribute.String("processor", set.ID.String()),
			attribute.String("otel.signal", pipeline.SignalTraces.String()))),
		verdictAttrs: map[string]map[scoring.Label]metric.MeasurementOption{},
		scorerAttrs:  map[string]metric.MeasurementOption{},
		tokenAttrs:   map[string][2]metric.MeasurementOption{},
		reasonAttrs:  map[string]metric.MeasurementOption{},
		seen:         map[string]bool{},
		join:         newJoinAttrs(joinSources),
	}
	for _, scorer := range scorers {
		name := attribute.String("scorer", scorer)
		t.verdictAttrs[scorer] = map[scoring.Label]metric.MeasurementOption{}
		for _, l := range []scoring.Label{scoring.LabelPass, scoring.LabelFail, scoring.LabelNotScorable} {
			t.verdictAttrs[scorer][l] = metric.WithAttributeSet(attribute.NewSet(name, attribute.String("outcome", string(l))))
		}
		t.scorerAttrs[scorer] = metric.WithAttributeSet(attribute.NewSet(name))
		t.tokenAttrs[scorer] = [2]metric.MeasurementOption{
			metric.WithAttributeSet(attribute.NewSet(name, attribute.String("type", "prompt"))),
			metric.WithAttributeSet(attribute.NewSet(name, attribute.String("type", "completion"))),
		}
	}
	for _, r := range []string{reasonQueueFull, reasonMaxWait, reasonShutdown, reasonNotScorable, reasonError, reasonRestarted} {
		t.reasonAttrs[r] = metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", r)))
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

// cacheStater is the result cache as telemetry sees it.
type cacheStater interface {
	Stats() guard.CacheStats
}

// namedBreaker is a judge's circuit breaker, as telemetry observes it.
type namedBreaker struct {
	judge   string
	breaker *guard.Breaker
}

// observeJudge registers the observers of every judge's circuit breaker,
// by judge, and of the result cache (nil when off).
func (t *telemetry) observeJudge(breakers []namedBreaker, cache cacheStater) error {
	if len(breakers) > 0 {
		if err := t.tb.RegisterProcessorLlmEvalJudgeCircuitStateCallback(func(_ context.Context, o metric.Int64Observer) error {
			for _, b := range breakers {
				o.Observe(circuitStateValue(b.breaker.State()), metric.WithAttributes(attribute.String("judge", b.judge)))
			}
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

// circuitChanged counts a transition of judge's breaker and logs it in
// one line, with the judge's name and endpoint and never the key.
func (t *telemetry) circuitChanged(judge string, _, to guard.BreakerState, cause error) {
	ctx := context.Background()
	t.tb.ProcessorLlmEvalJudgeCircuitTransitions.Add(ctx, 1, metric.WithAttributes(
		attribute.String("judge", judge), attribute.String("state", string(to))))
	fields := []zap.Field{zap.String("judge", judge), zap.String("endpoint", t.judgeEndpoint(judge))}
	if cause != nil {
		fields = append(fields, zap.String("error", t.secrets.Scrub(cause.Error())))
	}
	switch to {
	case guard.BreakerSuspended:
		status := "401/403"
		if se, ok := errors.AsType[*scoring.Error](cause); ok && se.Status != 0 {
			status = strconv.Itoa(se.Status)
		}
		t.logger.Error("judge rejected the API key ("+status+"): evaluation suspended, probing the judge with one call every "+
			t.judge.authRetry.String()+" until it accepts the key; spans go on with judge_auth error results instead of scores", fields...)
	case guard.BreakerOpen:
		t.logger.Warn("judge circuit opened: no judge calls for "+t.judge.openDuration.String()+
			"; spans go on with judge_circuit_open error results instead of scores", fields...)
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

// SpanUnscored counts an item that left without any score, by reason.
func (t *telemetry) SpanUnscored(ctx context.Context, reason string) {
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

// LateResult counts a result emitted after its item left.
func (t *telemetry) LateResult(ctx context.Context, scorer string) {
	t.tb.ProcessorLlmEvalLateResults.Add(ctx, 1, t.scorerOpt(scorer))
}

// LateResultDropped counts a late result that late_results drops.
func (t *telemetry) LateResultDropped(ctx context.Context, scorer string) {
	t.tb.ProcessorLlmEvalLateResultsDropped.Add(ctx, 1, t.scorerOpt(scorer))
}

// incoming counts spans passed to the processor.
func (t *telemetry) incoming(ctx context.Context, spans int) {
	t.tb.ProcessorIncomingItems.Add(ctx, int64(spans), t.itemAttrs)
}

// internalDuration records how long ConsumeTraces took before forwarding.
func (t *telemetry) internalDuration(ctx context.Context, d time.Duration) {
	t.tb.ProcessorInternalDuration.Record(ctx, d.Seconds(), t.itemAttrs)
}

// RecordResult counts a finished evaluation, its judge usage, and logs a
// failure.
func (t *telemetry) RecordResult(ctx context.Context, r evalstore.Result) {
	label := r.Label()
	if label == scoring.LabelError {
		errType := r.ErrorType()
		t.tb.ProcessorLlmEvalEvaluations.Add(ctx, 1, metric.WithAttributes(
			attribute.String("scorer", r.Scorer), attribute.String("outcome", string(label)), attribute.String("error_type", errType)))
		t.logFailure(errType, "evaluation failed",
			zap.String("scorer", r.Scorer), zap.String("error_type", errType), zap.String("error", r.Explanation(t.secrets.Scrub)))
	} else {
		opt, ok := t.verdictAttrs[r.Scorer][label]
		if !ok {
			opt = metric.WithAttributes(attribute.String("scorer", r.Scorer), attribute.String("outcome", string(label)))
		}
		t.tb.ProcessorLlmEvalEvaluations.Add(ctx, 1, opt)
	}
	if r.Result.ReasonErr != nil {
		errType := evalstore.ErrorType(r.Result.ReasonErr)
		t.tb.ProcessorLlmEvalReasonFallbacks.Add(ctx, 1, metric.WithAttributes(
			attribute.String("scorer", r.Scorer), attribute.String("error_type", errType)))
		t.logFailure("reason:"+errType, "reason step failed; the reason was built from the verdicts",
			zap.String("scorer", r.Scorer), zap.String("error_type", errType), zap.String("error", t.secrets.Scrub(r.Result.ReasonErr.Error())))
	}
	u := r.Result.Usage
	if r.Ran {
		opt := t.scorerOpt(r.Scorer)
		t.tb.ProcessorLlmEvalJudgeCallsPerEvaluation.Record(ctx, int64(u.LLMCalls), opt)
		t.tb.ProcessorLlmEvalJudgeTokensPerEvaluation.Record(ctx, int64(u.PromptTokens+u.CompletionTokens), opt)
		// A cache hit is truncated too but sent nothing: count what went out.
		if r.Result.Truncated && u.LLMCalls > 0 {
			t.tb.ProcessorLlmEvalInputsTruncated.Add(ctx, 1, opt)
		}
	}
	if u.NotSent > 0 {
		t.tb.ProcessorLlmEvalJudgeCallsRefused.Add(ctx, int64(u.NotSent), t.scorerOpt(r.Scorer))
	}
	if u.LLMCalls > 0 {
		opt := t.scorerOpt(r.Scorer)
		t.tb.ProcessorLlmEvalJudgeCalls.Add(ctx, int64(u.LLMCalls), opt)
		t.tb.ProcessorLlmEvalJudgeLatency.Record(ctx, u.Latency.Seconds(), opt)
		tok, ok := t.tokenAttrs[r.Scorer]
		if ok {
			t.tb.ProcessorLlmEvalJudgeTokens.Add(ctx, int64(u.PromptTokens), tok[0])
			t.tb.ProcessorLlmEvalJudgeTokens.Add(ctx, int64(u.CompletionTokens), tok[1])
		}
	}
}

// judgeCost counts the cost of one judge call of scorer, answered by model.
func (t *telemetry) judgeCost(ctx context.Context, scorer, model string, cost float64) {
	t.tb.ProcessorLlmEvalJudgeCost.Add(ctx, cost, metric.WithAttributes(
		attribute.String("scorer", scorer), attribute.String("judge_model", model)))
}

// judgeFallback counts one call handed to judge's fallback.
func (t *telemetry) judgeFallback(judge string) {
	t.tb.ProcessorLlmEvalJudgeFallbacks.Add(context.Background(), 1, metric.WithAttributes(attribute.String("judge", judge)))
}

// judgeEndpoint is the endpoint of judge as logs may show it.
func (t *telemetry) judgeEndpoint(judge string) string {
	if ep, ok := t.judge.endpoints[judge]; ok {
		return redact.ScrubURL(ep)
	}
	return t.endpoint
}

// judgeRetry counts one retried judge call.
func (t *telemetry) judgeRetry(ctx context.Context) {
	t.tb.ProcessorLlmEvalJudgeRetries.Add(ctx, 1)
}

// output counts what one signal's instance sends on, its items under
// the instance's attributes, and logs what could not be sent after its
// request was answered (resultwrite.Counter).
type output struct {
	t     *telemetry
	items metric.MeasurementOption // processor, otel.signal
}

func (o output) Outgoing(ctx context.Context, items int) {
	o.t.tb.ProcessorOutgoingItems.Add(ctx, int64(items), o.items)
}

func (o output) ForwardFailed(msg string, err error) {
	o.t.logFailure("forward", msg, zap.Error(err))
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
	t.capture.stop()
	t.tb.Shutdown()
}

// instructionSplit counts one instruction text's split. Splits a cache
// answered are counted by the cache (observeSplitCache); they made no
// call. A failed split is logged like a failed evaluation.
func (t *telemetry) instructionSplit(ctx context.Context, o splitOutcome) {
	if !o.Called {
		return
	}
	switch {
	case o.Split:
		t.tb.ProcessorLlmEvalInstructionSplits.Add(ctx, 1, splitOutcomeAttrs.split)
	case o.None:
		t.tb.ProcessorLlmEvalInstructionSplits.Add(ctx, 1, splitOutcomeAttrs.none)
	default:
		t.tb.ProcessorLlmEvalInstructionSplits.Add(ctx, 1, metric.WithAttributes(
			attribute.String("outcome", "fallback"), attribute.String("error_type", o.Fallback)))
		t.logFailure("split:"+o.Fallback, "instruction split failed; prompt_alignment takes the whole system prompt as one instruction",
			zap.String("error_type", o.Fallback))
	}
	if o.Truncated {
		t.tb.ProcessorLlmEvalInstructionSplitLimited.Add(ctx, 1, metric.WithAttributes(attribute.String("limit", "prompt_truncated")))
	}
	if o.Dropped > 0 {
		t.tb.ProcessorLlmEvalInstructionSplitLimited.Add(ctx, 1, metric.WithAttributes(attribute.String("limit", "instructions_dropped")))
	}
}

// observeSplitCache registers the observer of the instruction split
// cache's hits.
func (t *telemetry) observeSplitCache(cache cacheStater) error {
	return t.tb.RegisterProcessorLlmEvalInstructionSplitCacheHitsCallback(func(_ context.Context, o metric.Int64Observer) error {
		s := cache.Stats()
		o.Observe(int64(s.Hits + s.Coalesced))
		return nil
	})
}

// ContextJoined counts a dispatched generation by where its context came from.
func (t *telemetry) ContextJoined(source string) {
	t.tb.ProcessorLlmEvalContextJoins.Add(context.Background(), 1, t.join.source[source])
}

// contextWaitEnded counts a generation that stopped waiting for context.
func (t *telemetry) contextWaitEnded(ctx context.Context, arrived bool) {
	opt := t.join.timedOut
	if arrived {
		opt = t.join.arrived
	}
	t.tb.ProcessorLlmEvalContextWaits.Add(ctx, 1, opt)
}

// observeIndex registers the observers of the trace context index; the
// step limits only when it keeps step records.
func (t *telemetry) observeIndex(ix *tracecontext.Index, steps bool) error {
	if err := t.tb.RegisterProcessorLlmEvalTraceContextTracesCallback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(int64(ix.Stats().Traces))
		return nil
	}); err != nil {
		return err
	}
	if err := t.tb.RegisterProcessorLlmEvalTraceContextBytesCallback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(ix.Stats().Bytes)
		return nil
	}); err != nil {
		return err
	}
	if err := t.tb.RegisterProcessorLlmEvalTraceContextEvictionsCallback(func(_ context.Context, o metric.Int64Observer) error {
		st := ix.Stats()
		for i, n := range []uint64{st.EvictedTTL, st.EvictedMaxTraces, st.EvictedMaxBytes} {
			o.Observe(int64(n), t.join.cause[i])
		}
		return nil
	}); err != nil {
		return err
	}
	// Cut or dropped context makes a case's context silently partial, so
	// it is counted where an alert can see it.
	return t.tb.RegisterProcessorLlmEvalTraceContextLimitedCallback(func(_ context.Context, o metric.Int64Observer) error {
		st := ix.Stats()
		counts := []uint64{st.TruncatedDocuments, st.DroppedDocuments, st.DroppedLinks}
		if steps {
			counts = append(counts, st.TruncatedStepTexts, st.DroppedSteps)
		}
		for i, n := range counts {
			o.Observe(int64(n), t.join.limit[i])
		}
		return nil
	})
}

// storeObserver tells the telemetry what the store does.
type storeObserver struct{ t *telemetry }

func (o storeObserver) Result(ctx context.Context, r evalstore.Result) { o.t.RecordResult(ctx, r) }
func (o storeObserver) Unscored(ctx context.Context, reason string)    { o.t.SpanUnscored(ctx, reason) }
func (o storeObserver) ContextWaitEnded(ctx context.Context, arrived bool) {
	o.t.contextWaitEnded(ctx, arrived)
}
func (o storeObserver) SignalJoined(ctx context.Context, outcome string) {
	o.t.signalJoined(ctx, outcome)
}
func (o storeObserver) EventsMissed(ctx context.Context, service, library string, learned bool) {
	o.t.capture.warn(service, library, warnSpansNoEvents)
	if learned {
		o.t.tb.ProcessorLlmEvalContentCaptureOff.Add(ctx, 1, metric.WithAttributes(
			attribute.String("service", service), attribute.String("library", library)))
	}
}
func (o storeObserver) Recovered(ctx context.Context, outcome string) {
	o.t.tb.ProcessorLlmEvalStorageRecovered.Add(ctx, 1, metric.WithAttributes(attribute.String("outcome", outcome)))
}

// joinAttrs are the attribute sets of the join counters, by value.
type joinAttrs struct {
	source   map[string]metric.MeasurementOption
	arrived  metric.MeasurementOption
	timedOut metric.MeasurementOption
	cause    [3]metric.MeasurementOption // ttl, max_traces, max_bytes
	limit    [5]metric.MeasurementOption // document_truncated, document_dropped, link_dropped, step_truncated, step_dropped
}

func newJoinAttrs(sources []string) joinAttrs {
	a := joinAttrs{source: map[string]metric.MeasurementOption{}}
	for _, s := range sources {
		a.source[s] = metric.WithAttributeSet(attribute.NewSet(attribute.String("source", s)))
	}
	a.arrived = metric.WithAttributeSet(attribute.NewSet(attribute.String("outcome", "arrived")))
	a.timedOut = metric.WithAttributeSet(attribute.NewSet(attribute.String("outcome", "timed_out")))
	for i, c := range []string{"ttl", "max_traces", "max_bytes"} {
		a.cause[i] = metric.WithAttributeSet(attribute.NewSet(attribute.String("cause", c)))
	}
	for i, l := range []string{"document_truncated", "document_dropped", "link_dropped", "step_truncated", "step_dropped"} {
		a.limit[i] = metric.WithAttributeSet(attribute.NewSet(attribute.String("limit", l)))
	}
	return a
}

// splitOutcomeAttrs are the attribute sets of instruction_splits that do
// not carry an error.
var splitOutcomeAttrs = struct{ split, none metric.MeasurementOption }{
	split: metric.WithAttributeSet(attribute.NewSet(attribute.String("outcome", "split"))),
	none:  metric.WithAttributeSet(attribute.NewSet(attribute.String("outcome", "none"))),
}

// Why a sampled span left without any score.
const (
	reasonQueueFull   = "queue_full"
	reasonMaxWait     = evalstore.ReasonMaxWait
	reasonShutdown    = evalstore.ReasonShutdown
	reasonNotScorable = evalstore.ReasonNotScorable
	reasonError       = evalstore.ReasonError
	reasonRestarted   = evalstore.ReasonRestarted
)

// Why a sampled generation was not evaluated at all (spans_skipped).
const skipToolCallsOnly = "tool_calls_only"
