package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"slices"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/logjoin"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/persistence"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/resultwrite"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/subject"
	"github.com/llm-eval/llm_eval/scoring"
)

// llmEvalProcessor is the traces instance: it selects and samples
// generation spans and admits them to the store of its evaluator, which
// holds them while they are scored; everything else is forwarded at once.
// It is its own consumer (rather than a processorhelper one) so that its
// outgoing item count includes the spans forwarded later.
type llmEvalProcessor struct {
	*evaluator                    // shared with the logs instance of the component
	out        *resultwrite.Spans // the next consumer
	subjects   *subject.SpanOut   // where held spans go
	released   atomic.Bool        // Shutdown ran: the evaluator is released once
}

var _ processor.Traces = (*llmEvalProcessor)(nil)

func newTracesInstance(ev *evaluator, next consumer.Traces) *llmEvalProcessor {
	out := &resultwrite.Spans{Next: next, Tel: output{t: ev.tel, items: ev.tel.itemAttrs}}
	p := &llmEvalProcessor{
		evaluator: ev,
		out:       out,
		subjects:  &subject.SpanOut{Sink: out, Tel: ev.tel, Policy: ev},
	}
	if ev.convs != nil {
		ev.convs.out.Store(p.subjects) // a conversation's results leave with its spans
	}
	return p
}

// Capabilities reports that spans are modified (annotated, moved out).
func (*llmEvalProcessor) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}

// Start starts the evaluator, once for both instances of a component.
func (p *llmEvalProcessor) Start(ctx context.Context, host component.Host) error {
	return p.evaluator.start(ctx, host)
}

// Shutdown releases the evaluator: the first instance to do so sends every
// held item on with the results it has (evaluator.go).
func (p *llmEvalProcessor) Shutdown(ctx context.Context) error {
	if p.released.Swap(true) {
		return nil
	}
	return p.evaluator.release(ctx)
}

// ConsumeTraces forwards the batch at once, minus the sampled generation
// spans it admits to the store. It never waits for the judge.
func (p *llmEvalProcessor) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	start := time.Now()
	p.tel.incoming(ctx, td.SpanCount())
	td, forward, taken, queued := p.processTraces(ctx, td)
	if p.storage != nil && (taken > 0 || queued) {
		// The admitted spans and the turns of open conversations are on
		// disk before ConsumeTraces returns; a batch that admitted and
		// added nothing does not wait for storage.
		p.storage.Commit()
	}
	p.tel.internalDuration(ctx, time.Since(start))
	if !forward {
		p.out.Tel.Outgoing(ctx, 0)
		return nil
	}
	return p.out.Forward(ctx, td)
}

// processTraces takes the sampled generation spans the store admits out
// of the batch. It reports false when nothing is left to forward, and how
// many spans it took.
//
// It goes over the batch twice: first it indexes the GenAI spans of
// sampled traces and notes the generations, so that a generation's case
// sees the context spans of its own batch; then it admits the generations.
func (p *llmEvalProcessor) processTraces(ctx context.Context, td ptrace.Traces) (_ ptrace.Traces, forward bool, taken int, queued bool) {
	var selected, sampled int
	var candidates []generationAt
	var scan conversationScan
	var gained []pcommon.TraceID
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				kind := genai.Classify(rs.Resource(), span)
				if p.convs != nil {
					p.convs.scan(&scan, [3]int{i, j, k}, rs, span, kind)
				}
				candidate := len(candidates) // the index of this span if it becomes one
				switch kind {
				case genai.KindGeneration:
					if !p.generations || !p.filter.passes(rs.Resource().Attributes(), span.Attributes()) {
						// Not a candidate (no scorer targets generations,
						// or the filter leaves it out): forwarded as it
						// is, and only indexed as a step of an agent run.
						if p.join == nil || !p.join.ReadsSteps() || !p.sampler.sampled(span.TraceID()) {
							continue
						}
						break
					}
					selected++
					if !p.sampler.sampled(span.TraceID()) {
						continue
					}
					sampled++
					candidates = append(candidates, generationAt{resource: i, scope: j, span: k})
				case genai.KindContext:
					if !p.sampler.sampled(span.TraceID()) {
						continue
					}
				case genai.KindAggregate:
					if !p.sampler.sampled(span.TraceID()) {
						if p.agents && genai.IsAgent(span) && p.filter.passes(rs.Resource().Attributes(), span.Attributes()) {
							selected++
						}
						continue
					}
					// Indexed even when not scored: a chain span can be the
					// first of its trace to arrive, and its link connects a
					// generation to a retriever below it.
					if p.agents && genai.IsAgent(span) && p.filter.passes(rs.Resource().Attributes(), span.Attributes()) {
						selected++ // an agent span is a candidate like a generation
						sampled++
						candidates = append(candidates, generationAt{resource: i, scope: j, span: k, agent: true})
					}
				default:
					continue
				}
				if p.join == nil {
					continue
				}
				// A candidate read as a step is read once, for both.
				var read *generationAt
				if candidate < len(candidates) {
					read = &candidates[candidate]
				}
				added, gen := p.join.IndexSpan(kind, span, read != nil, read != nil && read.agent)
				if read != nil {
					read.gen = gen
				}
				if added {
					gained = append(gained, span.TraceID())
				}
			}
		}
	}
	if p.join != nil {
		// Links of plain spans can connect a waiting generation to
		// context its trace already has.
		for _, trace := range p.join.Index.LinkAll(td) {
			if !slices.Contains(gained, trace) {
				gained = append(gained, trace)
			}
		}
	}
	if len(gained) > 0 {
		p.store.ContextMayHaveArrived(gained)
	}
	if p.convs != nil {
		// Before admission: a held span moves out of the batch.
		queued = p.convs.offer(&scan, candidates, p.filter)
	}
	if selected > 0 {
		p.tel.spansSelected(ctx, selected, sampled)
	}

	var take []int // indexes of spans moved out of one scope, increasing
	for n, at := range candidates {
		rs := rss.At(at.resource)
		ss := rs.ScopeSpans().At(at.scope)
		if p.admit(ctx, rs, ss, ss.Spans().At(at.span), at) {
			take = append(take, at.span)
		}
		if last := n+1 == len(candidates); last || candidates[n+1].resource != at.resource || candidates[n+1].scope != at.scope {
			if len(take) > 0 {
				taken += len(take)
				removeIndexes(ss.Spans(), take)
				take = take[:0]
			}
		}
	}
	if taken > 0 {
		for i := 0; i < rss.Len(); i++ {
			rss.At(i).ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool { return ss.Spans().Len() == 0 })
		}
		rss.RemoveIf(func(rs ptrace.ResourceSpans) bool { return rs.ScopeSpans().Len() == 0 })
		if rss.Len() == 0 {
			return td, false, taken, queued
		}
	}
	return td, true, taken, queued
}

// removeIndexes removes the spans at the given increasing indexes.
func removeIndexes(spans ptrace.SpanSlice, take []int) {
	i, next := -1, 0
	spans.RemoveIf(func(ptrace.Span) bool {
		i++
		if next < len(take) && take[next] == i {
			next++
			return true
		}
		return false
	})
}

// reading is what the scorers need of a span besides its content gen:
// the scorers its include/exclude rules leave out and, for an agent span
// held for its trajectory scorers alone, why the others cannot score it.
func (p *llmEvalProcessor) reading(rs ptrace.ResourceSpans, span ptrace.Span, gen genai.Generation, agent bool) subject.Reading {
	r := subject.Reading{Gen: gen, Agent: agent, Excluded: p.scorerSel.excluded(rs.Resource().Attributes(), span.Attributes(), span.TraceID())}
	r.Missing = p.join.HeldForTrajectory(agent, &r.Gen, r.Excluded)
	return r
}

// admit hands a sampled generation span to the store. It returns false
// when the span stays in the batch: not scorable or not admitted (queue
// full, shut down: marked as such), or the processor not started.
func (p *llmEvalProcessor) admit(ctx context.Context, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span, at generationAt) bool {
	agent := at.agent
	target := targetGeneration
	if agent {
		target = targetAgent
	}
	var gen genai.Generation
	switch {
	case at.gen != nil:
		gen = *at.gen
	case agent:
		gen = genai.ReadAgent(span)
	default:
		gen = genai.Read(span)
	}
	p.convs.historyOf(&gen, at, span)
	// With a logs pipeline through the same component, a generation's
	// content may come as log events of the same trace and span id
	// (the pair of both halves, internal/evalstore): the call is evaluated once, for both signals.
	key := logjoin.Key{TraceID: span.TraceID(), SpanID: span.SpanID()}
	joins := !agent && p.store.Joining()
	r := p.reading(rs, span, gen, agent)
	gen = r.Gen
	if gen.Missing == genai.MissingToolCalls {
		// An agent loop's step that only asks for tools is not an answer:
		// the tool results reach the next step, which answers.
		if !joins || p.store.SettleHalf(ctx, key, evalstore.SideSpan, nil, scoring.Result{}, true) != evalstore.SettledLate {
			p.tel.spanSkipped(ctx, skipToolCallsOnly)
		}
		return false
	}
	awaitsEvents := joins && gen.Missing == genai.MissingOutput
	var m marker
	if gen.Missing != "" && !awaitsEvents {
		// Without content no scorer is called; the results are counted.
		if gen.Malformed != "" {
			p.tel.contentMalformed(ctx, gen.Malformed)
		}
		reason := gen.Missing
		if genai.Contentless(gen) && !agent {
			p.tel.capture.warn(genai.ServiceName(rs.Resource()), ss.Scope().Name(), warnSpans)
			reason = genai.CaptureLikelyOffReason(reason, ss.Scope().Name())
		}
		m = notScorable(reason)
	} else {
		half := evalstore.Half{Side: evalstore.SideSpan, HasContent: !awaitsEvents}
		if awaitsEvents {
			// It waits for its events outside queue_size (eventswait.go).
			half.Source, half.Library = genai.ServiceName(rs.Resource()), ss.Scope().Name()
			half.Size, half.NoEvents = genai.SpanBytes(span), genai.NoEventsReason(half.Library)
		}
		// The span moves out of its batch only when the store admits it.
		res := p.store.AdmitHalf(ctx, key, half, func() evalstore.Pairable {
			return subject.NewHeldSpan(p.subjects, p.join, rs, ss, span, r)
		})
		switch res {
		case evalstore.Admitted, evalstore.JoinedPartner:
			return true
		case evalstore.WaitingAreaFull:
			m = notScorable("no content on the span, and the spans waiting for their GenAI log events already fill log_events.max_waiting_spans or max_waiting_bytes")
		case evalstore.NoEventsExpected:
			m = notScorable(genai.CaptureOffReason(half.Library))
		case evalstore.Unjoinable:
			m = notScorable(gen.Missing)
		default: // refused, or late: its events were evaluated and it passes as it came
			m = refused(res, "spans")
		}
	}
	if m.reason != "" {
		p.markAll(ctx, span, gen.ResponseID, target, r.Excluded, m)
	}
	return false
}

// markAll writes m's result for every scorer that applies to a span that
// stays in its batch unevaluated and counts the span unscored.
func (p *llmEvalProcessor) markAll(ctx context.Context, span ptrace.Span, responseID, target string, excluded map[string]bool, m marker) {
	now := time.Now()
	for _, sc := range p.cfg.Scorers {
		if !sc.appliesTo(target, excluded) {
			continue
		}
		r := evalResult{Scorer: sc.Name, At: now, Result: m.res}
		r.Result.Scorer = sc.Name
		if m.record {
			p.tel.RecordResult(ctx, r)
		}
		resultwrite.AnnotateSpan(span, r, responseID, p.Redact)
	}
	p.tel.SpanUnscored(ctx, m.reason)
}

// recoverSpans puts the spans found in storage at start back into the
// store, or forwards them (recover). It runs in Start, after the consumers
// downstream have started: the collector starts components in reverse
// pipeline order.
//
// With the component in a traces and a logs pipeline, a span goes back into
// the call table (the pair of both halves, internal/evalstore): a span without content waits for its log
// events again.
func (p *llmEvalProcessor) recoverSpans() {
	if p.storage == nil {
		return
	}
	joining := p.store.Joining()
	for _, rec := range p.storage.Take(persistence.KindSpan) {
		h := p.recoveredSpan(rec.Item.Traces)
		if joining && !h.Agent {
			p.store.Recover(h.NewPair(), persistence.ForStore(rec))
			continue
		}
		h.Unjoined() // it may have waited for log events no longer joined
		p.store.Recover(h, persistence.ForStore(rec))
	}
}

// recoverPairs puts the calls stored with both halves back into the store
// as one item, or forwards them, like recoverSpans; calls is the logs
// instance, which reads the stored call (nil without one). Such a call
// leaves through the consumers of both instances (its span, its result
// records).
func (p *llmEvalProcessor) recoverPairs(calls callRecovery) {
	if p.storage == nil {
		return
	}
	for _, rec := range p.storage.Take(persistence.KindPair) {
		span := p.recoveredSpan(rec.Item.Traces)
		call := span.NewPair()
		if calls != nil {
			call.Join(calls.recoveredCall(rec.Item.Logs))
		} else {
			span.TakeContent(genai.ReadLogs(rec.Item.Logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()))
		}
		p.store.Recover(call, persistence.ForStore(rec))
	}
}

// recoveredSpan is a held span read back from storage, read and filtered
// as it was at admission.
func (p *llmEvalProcessor) recoveredSpan(td ptrace.Traces) *subject.HeldSpan {
	rs := td.ResourceSpans().At(0)
	ss := rs.ScopeSpans().At(0)
	span := ss.Spans().At(0)
	agent := p.agents && genai.Classify(rs.Resource(), span) == genai.KindAggregate && genai.IsAgent(span)
	gen := genai.Read(span)
	if agent {
		gen = genai.ReadAgent(span)
	}
	return subject.NewHeldSpan(p.subjects, p.join, rs, ss, span, p.reading(rs, span, gen, agent))
}
