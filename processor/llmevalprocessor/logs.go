package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/logjoin"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/pairing"
	"github.com/llm-eval/llm_eval/scoring"
)

// createLogsWith returns the logs constructor using build to make the
// judge at Start; the evaluator is shared with the traces instance of the
// same component.
func createLogsWith(build judgeBuilder) processor.CreateLogsFunc {
	return func(_ context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
		pcfg, ok := cfg.(*Config)
		if !ok {
			return nil, fmt.Errorf("llm_eval: unexpected config type %T", cfg)
		}
		ev, err := acquireEvaluator(set, pcfg, build, pipeline.SignalLogs)
		if err != nil {
			return nil, err
		}
		lp := newLogsProcessor(set, ev.core, next)
		lp.shared = ev
		ev.setLogs(lp)
		return lp, nil
	}
}

// logsProcessor reads GenAI log events: it forwards every record at once
// and unchanged, joins the per-message events of one call, and emits the
// results of each sampled call as new gen_ai.evaluation.result records.
type logsProcessor struct {
	core   *llmEvalProcessor // cfg, telemetry, sampler, store, redaction
	shared *sharedEvaluator  // nil when core is this instance's own
	next   consumer.Logs
	joiner *logjoin.Joiner

	itemAttrs   metric.MeasurementOption // processor, otel.signal=logs
	reasonAttrs map[logjoin.Reason]metric.MeasurementOption
	lateSeen    atomic.Uint64 // joiner's late count already recorded

	stop     chan struct{}
	ticking  sync.WaitGroup
	stopOnce sync.Once
	released atomic.Bool // Shutdown ran: the evaluator is released once
}

var _ processor.Logs = (*logsProcessor)(nil)

func newLogsProcessor(set processor.Settings, core *llmEvalProcessor, next consumer.Logs) *logsProcessor {
	p := &logsProcessor{
		core: core,
		next: next,
		itemAttrs: metric.WithAttributeSet(attribute.NewSet(
			attribute.String("processor", set.ID.String()),
			attribute.String("otel.signal", pipeline.SignalLogs.String()))),
		reasonAttrs: map[logjoin.Reason]metric.MeasurementOption{},
		stop:        make(chan struct{}),
	}
	for _, r := range []logjoin.Reason{logjoin.ReasonAnswered, logjoin.ReasonDetails, logjoin.ReasonAlone,
		logjoin.ReasonWindow, logjoin.ReasonEvicted, logjoin.ReasonClosed} {
		p.reasonAttrs[r] = metric.WithAttributeSet(attribute.NewSet(attribute.String("join_reason", r.String())))
	}
	jc := core.cfg.LogEvents.joinerConfig(func() time.Time { return core.now() })
	if core.storage != nil {
		jc.Hold = core.storage.holdJoining // stored before ConsumeLogs returns (durable.go)
	}
	p.joiner = logjoin.New(jc)
	return p
}

// Capabilities reports that input records are not modified: results are
// new records.
func (*logsProcessor) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// Start starts the shared evaluator and the ticker that lets calls whose
// join window passed be read.
func (p *logsProcessor) Start(ctx context.Context, host component.Host) error {
	all, err := true, error(nil)
	if p.shared != nil {
		all, err = p.shared.start(ctx, host)
	} else {
		err = p.core.startEvaluator(ctx, host)
	}
	if err != nil {
		return err
	}
	p.recoverCalls()
	if all && p.shared != nil {
		if tp := p.shared.tracesInstance(); tp != nil {
			tp.recoverPairs() // the traces instance started first
		}
	}
	tick := min(time.Second, p.core.cfg.LogEvents.JoinWindow/2)
	p.ticking.Add(1)
	go p.expireEvery(max(tick, time.Millisecond))
	return nil
}

func (p *logsProcessor) expireEvery(d time.Duration) {
	defer p.ticking.Done()
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.evaluate(context.Background(), p.joiner.Expire(p.core.now()))
		}
	}
}

// Shutdown reads every call still being joined, then releases the shared
// evaluator; the last instance to do so sends every held call's results.
func (p *logsProcessor) Shutdown(ctx context.Context) error {
	p.stopOnce.Do(func() { close(p.stop) })
	p.ticking.Wait()
	p.evaluate(ctx, p.joiner.Close())
	if p.released.Swap(true) {
		return nil
	}
	if p.shared != nil {
		return p.shared.release(ctx)
	}
	return p.core.stopEvaluator(ctx)
}

// ConsumeLogs hands the sampled GenAI records to the joiner (which copies
// them), forwards the batch unchanged, then admits the calls that are
// complete. It never waits for the judge.
func (p *logsProcessor) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	start := time.Now()
	n := ld.LogRecordCount()
	tb := p.core.tel.tb
	tb.ProcessorIncomingItems.Add(ctx, int64(n), p.itemAttrs)
	var groups []logjoin.Group
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		if p.core.filter.rulesOut(rl.Resource().Attributes()) {
			continue // no call here can pass include/exclude: nothing to hold
		}
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			sl := sls.At(j)
			recs := sl.LogRecords()
			for k := 0; k < recs.Len(); k++ {
				rec := recs.At(k)
				if genai.ClassifyLog(rl.Resource(), rec) == genai.LogOther {
					continue
				}
				// The same trace-id hash as for spans: one decision per trace
				// in both pipelines.
				if !p.core.sampler.sampled(rec.TraceID()) {
					continue
				}
				groups = append(groups, p.joiner.Add(rec, rl, sl)...)
			}
		}
	}
	groups = append(groups, p.joiner.Expire(p.core.now())...)
	tb.ProcessorInternalDuration.Record(ctx, time.Since(start).Seconds(), p.itemAttrs)
	tb.ProcessorOutgoingItems.Add(ctx, int64(n), p.itemAttrs)
	err := p.next.ConsumeLogs(ctx, ld)
	p.evaluate(ctx, groups)
	return err
}

// evaluate reads each call and admits it to the store; a call without
// content, or one the store refuses, gets its marker results at once.
func (p *logsProcessor) evaluate(ctx context.Context, groups []logjoin.Group) {
	p.countLate(ctx)
	for _, g := range groups {
		var excluded map[string]bool
		if !p.core.filter.empty() || len(p.core.scorerSel) > 0 {
			res, attrs := g.Resource().Resource().Attributes(), callAttributes(g.Records())
			if !p.core.filter.empty() && !p.core.filter.matches(res, attrs) {
				continue // not a candidate: its records have passed already
			}
			excluded = p.core.scorerSel.excluded(res, attrs)
		}
		p.core.tel.tb.ProcessorLlmEvalLogCalls.Add(ctx, 1, p.reasonAttrs[g.Reason])
		gen := genai.ReadLogs(g.Records())
		call := &logCall{p: p, gen: gen, group: g, excluded: excluded, of: evaluatedSpan{
			traceID: g.Key.TraceID, spanID: g.Key.SpanID, model: gen.Model, responseID: gen.ResponseID,
		}}
		// The call's span may reach the traces side of this component too
		// (signaljoin.go): one evaluation for both.
		key := pairing.Key{TraceID: g.Key.TraceID, SpanID: g.Key.SpanID}
		store := p.core.store
		if gen.Missing == genai.MissingToolCalls {
			if store.settleHalf(ctx, key, pairing.Events, call, scoring.Result{}, true) != settledLate {
				p.core.tel.spanSkipped(ctx, skipToolCallsOnly)
			}
			continue
		}
		if gen.Missing != "" {
			if gen.Malformed != "" {
				p.core.tel.contentMalformed(ctx, gen.Malformed)
			}
			notScorable := scoring.Result{Label: scoring.LabelNotScorable, Reason: gen.Missing}
			if store.settleHalf(ctx, key, pairing.Events, call, notScorable, false) == settledAlone {
				call.markAll(ctx, notScorable, reasonNotScorable, true)
			}
			continue
		}
		switch store.admitHalf(ctx, key, pairing.Events, true, func() evalSubject { return call }) {
		case rejectedFull:
			call.markAll(ctx, errorResult(scoring.ErrorQueueFull, errors.New("queue_size calls were already waiting for results")), reasonQueueFull, false)
		case rejectedClosed:
			call.markAll(ctx, errorResult(scoring.ErrorShutdown, errors.New("the processor was shutting down")), reasonShutdown, false)
		}
	}
	if p.core.storage != nil {
		p.core.storage.evaluated(groups) // admitted calls to disk; their joining records go
	}
}

// countLate records the per-message records the joiner turned away since
// last time, because their call had already been read.
func (p *logsProcessor) countLate(ctx context.Context) {
	late := p.joiner.Stats().Late
	if prev := p.lateSeen.Swap(late); late > prev {
		p.core.tel.tb.ProcessorLlmEvalLogLateEvents.Add(ctx, int64(late-prev))
	}
}

// emit sends result records on; they are the processor's output too.
func (p *logsProcessor) emit(ctx context.Context, ld plog.Logs) {
	p.core.tel.tb.ProcessorOutgoingItems.Add(ctx, int64(ld.LogRecordCount()), p.itemAttrs)
	if err := p.next.ConsumeLogs(ctx, ld); err != nil {
		p.core.tel.logFailure("forward", "failed to forward evaluation result records", zap.Error(err))
	}
}

// logCall is one GenAI call read from log records; it is the evalSubject
// of the logs signal. Its results leave as new records under the resource
// and scope of the call's first record.
type logCall struct {
	p     *logsProcessor
	of    evaluatedSpan
	gen   genai.Generation
	group logjoin.Group // read-only once admitted
	// excluded are the scorers whose include/exclude the call fails.
	excluded map[string]bool
	// onSpan: the call's span carries the same results (signaljoin.go).
	onSpan bool
}

// callAttributes are what filters match a log call's own attributes
// against: each key as the first of its records to carry it has it.
func callAttributes(recs plog.LogRecordSlice) pcommon.Map {
	attrs := pcommon.NewMap()
	for i := 0; i < recs.Len(); i++ {
		for k, v := range recs.At(i).Attributes().All() {
			if _, ok := attrs.Get(k); !ok {
				v.CopyTo(attrs.PutEmpty(k))
			}
		}
	}
	return attrs
}

func (c *logCall) caseFor(cfg ScorerConfig) scoring.Case {
	return caseFromGeneration(c.gen, c.of, cfg)
}

// skips implements scorerSkipper: a log call is a generation.
func (c *logCall) skips(sc ScorerConfig) bool {
	if !sc.appliesTo(targetGeneration, c.excluded) {
		return true
	}
	return sc.When.ContextPresent && len(ownContext(c.gen, sc)) == 0
}

// leave emits one result record per scorer that applies to the call.
func (c *logCall) leave(ctx context.Context, results []evalResult) {
	ld, recs := newResultLogs(c.group.Resource(), c.group.Scope())
	for _, r := range results {
		if r.skipped {
			continue
		}
		rec := appendResultRecord(recs, c.of, r.scorer, r.result, r.at, c.p.core.redact)
		if c.onSpan {
			rec.Attributes().PutBool(evalconv.AttrOnSpan, true)
		}
	}
	if recs.Len() > 0 {
		c.p.emit(ctx, ld)
	}
}

// late emits a result that finished after the others left, or only counts
// it, as late_results says.
func (c *logCall) late(ctx context.Context, r evalResult) {
	tel := c.p.core.tel
	if !lateEmitted(c.p.core.cfg.LateResults, r) {
		tel.lateResultDropped(ctx, r.scorer)
		return
	}
	tel.lateResult(ctx, r.scorer)
	c.leave(ctx, []evalResult{r})
}

// markAll emits the same result for every scorer without running any
// (not scorable, queue full, shut down) and counts the call unscored.
func (c *logCall) markAll(ctx context.Context, res scoring.Result, reason string, record bool) {
	now := c.p.core.now()
	results := make([]evalResult, 0, len(c.p.core.cfg.Scorers))
	for _, sc := range c.p.core.cfg.Scorers {
		if !sc.appliesTo(targetGeneration, c.excluded) {
			continue
		}
		r := res
		r.Scorer = sc.Name
		results = append(results, evalResult{scorer: sc.Name, at: now, result: r})
		if record {
			c.p.core.tel.recordResult(ctx, results[len(results)-1])
		}
	}
	c.p.core.tel.spanUnscored(ctx, reason)
	c.leave(ctx, results)
}
