package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/logjoin"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/persistence"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/resultwrite"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/subject"
	"github.com/llm-eval/llm_eval/scoring"
)

// logsProcessor reads GenAI log events: it forwards every record at once
// and unchanged, joins the per-message events of one call, and emits the
// results of each sampled call as new gen_ai.evaluation.result records.
type logsProcessor struct {
	core   *evaluator // shared with the traces instance of the component
	next   consumer.Logs
	out    *subject.LogOut // where calls' result records go
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

func newLogsProcessor(set processor.Settings, core *evaluator, next consumer.Logs) *logsProcessor {
	p := &logsProcessor{
		core: core,
		next: next,
		itemAttrs: metric.WithAttributeSet(attribute.NewSet(
			attribute.String("processor", set.ID.String()),
			attribute.String("otel.signal", pipeline.SignalLogs.String()))),
		reasonAttrs: map[logjoin.Reason]metric.MeasurementOption{},
		stop:        make(chan struct{}),
	}
	p.out = &subject.LogOut{Sink: &resultwrite.Logs{Next: next, Tel: output{t: core.tel, items: p.itemAttrs}}, Tel: core.tel,
		Policy: core, Scorers: core.scorers}
	for _, r := range []logjoin.Reason{logjoin.ReasonAnswered, logjoin.ReasonDetails, logjoin.ReasonAlone,
		logjoin.ReasonWindow, logjoin.ReasonEvicted, logjoin.ReasonClosed} {
		p.reasonAttrs[r] = metric.WithAttributeSet(attribute.NewSet(attribute.String("join_reason", r.String())))
	}
	jc := core.cfg.LogEvents.joinerConfig()
	if core.storage != nil {
		jc.Holder = core.storage // stored before ConsumeLogs returns (internal/persistence)
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
	if err := p.core.start(ctx, host); err != nil {
		return err
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
			p.evaluate(context.Background(), p.joiner.Expire(time.Now()))
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
	return p.core.release(ctx)
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
	groups = append(groups, p.joiner.Expire(time.Now())...)
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
		if !p.core.filter.empty() || !p.core.scorerSel.empty() {
			res, attrs := g.Resource().Resource().Attributes(), subject.CallAttributes(g.Records())
			if !p.core.filter.empty() && !p.core.filter.matches(res, attrs) {
				continue // not a candidate: its records have passed already
			}
			excluded = p.core.scorerSel.excluded(res, attrs, g.Key.TraceID)
		}
		p.core.tel.tb.ProcessorLlmEvalLogCalls.Add(ctx, 1, p.reasonAttrs[g.Reason])
		gen := genai.ReadLogs(g.Records())
		call := subject.NewLogCall(p.out, g, gen, excluded)
		// The call's span may reach the traces side of this component too
		// (the pair of both halves, internal/evalstore): one evaluation for both.
		key := logjoin.Key{TraceID: g.Key.TraceID, SpanID: g.Key.SpanID}
		store := p.core.store
		service := genai.ServiceName(g.Resource().Resource())
		if store.Joining() {
			store.EventsArrived(service) // its spans wait for their events again
		}
		if gen.Missing == genai.MissingToolCalls {
			if store.SettleHalf(ctx, key, evalstore.SideEvents, call, scoring.Result{}, true) != evalstore.SettledLate {
				p.core.tel.spanSkipped(ctx, skipToolCallsOnly)
			}
			continue
		}
		if gen.Missing != "" {
			if gen.Malformed != "" {
				p.core.tel.contentMalformed(ctx, gen.Malformed)
			}
			reason := gen.Missing
			if genai.Contentless(gen) {
				library := g.Scope().Scope().Name()
				p.core.tel.capture.warn(service, library, warnEvents)
				reason = genai.CaptureLikelyOffReason(reason, library)
			}
			m := notScorable(reason)
			if store.SettleHalf(ctx, key, evalstore.SideEvents, call, m.res, false) == evalstore.SettledAlone {
				call.MarkAll(ctx, m.res, m.reason, m.record)
			}
			continue
		}
		res := store.AdmitHalf(ctx, key, evalstore.Half{Side: evalstore.SideEvents, HasContent: true}, func() evalstore.Pairable { return call })
		if m := refused(res, "calls"); m.reason != "" {
			call.MarkAll(ctx, m.res, m.reason, m.record)
		}
	}
	if p.core.storage != nil {
		p.core.storage.Evaluated(groups) // admitted calls to disk; their joining records go
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

// recoverCalls does for the log calls found in storage what recoverSpans
// does for spans, then gives the joiner back the log records that were
// waiting for the rest of their call; the call's window starts again.
// Records of a call that was admitted before the crash (stored as a log
// call or, with its span, as a pair) are dropped.
func (p *logsProcessor) recoverCalls() {
	st := p.core.storage
	if st == nil {
		return
	}
	joinsSignals := p.core.store.Joining()
	for _, rec := range st.Take(persistence.KindLogCall) {
		call := p.recoveredCall(rec.Item.Logs)
		if joinsSignals {
			p.core.store.Recover(call.NewPair(), persistence.ForStore(rec))
			continue
		}
		p.core.store.Recover(call, persistence.ForStore(rec))
	}
	groups := st.Rejoin(p.joiner.Add)
	p.evaluate(context.Background(), groups)
}

func (p *logsProcessor) recoveredCall(ld plog.Logs) *subject.LogCall {
	rl := ld.ResourceLogs().At(0)
	recs := rl.ScopeLogs().At(0).LogRecords()
	first := recs.At(0)
	g := logjoin.Group{Key: logjoin.Key{TraceID: first.TraceID(), SpanID: first.SpanID()}, Logs: ld}
	gen := genai.ReadLogs(recs)
	return subject.NewLogCall(p.out, g, gen, p.core.scorerSel.excluded(rl.Resource().Attributes(), subject.CallAttributes(recs), first.TraceID()))
}

// joinerConfig is the joiner's configuration for these settings.
func (c LogEventsConfig) joinerConfig() logjoin.Config {
	return logjoin.Config{Window: c.JoinWindow, MaxCalls: c.MaxPending, MaxBytes: c.MaxPendingBytes}
}
