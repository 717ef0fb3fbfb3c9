package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/metric"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/pairing"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/redact"
)

// judgeBuilder makes the judge and one scorer per configured entry at
// Start (tests pass fake scorers here).
type judgeBuilder func(ctx context.Context, cfg *Config, host component.Host, set component.TelemetrySettings, hooks judgeHooks) (judgeSet, error)

// llmEvalProcessor selects and samples generation spans and admits them
// to the store, which holds them while they are scored; everything else
// is forwarded at once. It is its own consumer (rather than a
// processorhelper one) so that its outgoing item count includes the spans
// forwarded later.
type llmEvalProcessor struct {
	cfg        *Config
	set        component.TelemetrySettings
	tel        *telemetry
	buildJudge judgeBuilder
	sampler    traceSampler
	now        func() time.Time
	out        *spanOutput
	store      *evalStore
	join       *traceJoin             // the trace context index and join
	filter     spanFilter             // include, exclude
	scorerSel  scorerFilters          // scorers[].include, exclude
	agents     bool                   // a scorer targets agent spans
	secrets    *redact.SecretScrubber // the judge's secrets, scrubbed from output
	// shared, when set, owns the judge and store, which this instance
	// shares with the logs instance of the same component (shared.go).
	shared *sharedEvaluator
	// storage keeps held items across a crash (durable.go); nil when off.
	storage *itemStorage
}

var _ processor.Traces = (*llmEvalProcessor)(nil)

func newLLMEvalProcessor(set processor.Settings, cfg *Config, next consumer.Traces, build judgeBuilder) (*llmEvalProcessor, error) {
	p := &llmEvalProcessor{
		cfg:        cfg,
		set:        set.TelemetrySettings,
		buildJudge: build,
		sampler:    newTraceSampler(cfg.Sampling.Percentage),
		now:        time.Now,
		secrets:    redact.NewSecretScrubber(cfg.Judge.secrets()...),
	}
	tel, err := newTelemetry(set, cfg, p.redact, p.observeHeld, p.observeQueue)
	if err != nil {
		return nil, err
	}
	p.tel = tel
	p.out = &spanOutput{next: next, tel: tel, redact: p.redact, lateResults: cfg.LateResults}
	p.store = newEvalStore(cfg, tel, func() time.Time { return p.now() })
	if p.filter, err = cfg.SpanFilterConfig.compile(); err != nil {
		return nil, fmt.Errorf("llm_eval: %w", err)
	}
	if p.scorerSel, err = compileScorerFilters(cfg.Scorers); err != nil {
		return nil, fmt.Errorf("llm_eval: scorers: %w", err)
	}
	for _, sc := range cfg.Scorers {
		p.agents = p.agents || sc.hasTarget(targetAgent)
	}
	if p.join, err = newTraceJoin(cfg, tel); err != nil {
		return nil, fmt.Errorf("llm_eval: trace_context: %w", err)
	}
	if err := tel.observeIndex(p.join.ix, p.join.readsSteps()); err != nil {
		return nil, err
	}
	if cfg.Storage != nil {
		p.storage = newItemStorage(*cfg.Storage, set.ID, tel, p.redact)
	}
	return p, nil
}

func (p *llmEvalProcessor) observeHeld(_ context.Context, o metric.Int64Observer) error {
	o.Observe(int64(p.store.heldCount()))
	return nil
}

func (p *llmEvalProcessor) observeQueue(_ context.Context, o metric.Int64Observer) error {
	o.Observe(int64(p.store.queued()))
	return nil
}

// redact removes every configured secret from text written out or logged.
func (p *llmEvalProcessor) redact(s string) string { return p.secrets.Scrub(s) }

// Capabilities reports that spans are modified (annotated, moved out).
func (*llmEvalProcessor) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}

// Start builds the judge and starts the store's workers, once for all
// instances sharing them.
func (p *llmEvalProcessor) Start(ctx context.Context, host component.Host) error {
	all, err := true, error(nil)
	if p.shared != nil {
		all, err = p.shared.start(ctx, host)
	} else {
		err = p.startEvaluator(ctx, host)
	}
	if err != nil {
		return err
	}
	p.recoverSpans()
	if all {
		p.recoverPairs()
	}
	return nil
}

// startEvaluator builds the judge and starts the store's workers.
func (p *llmEvalProcessor) startEvaluator(ctx context.Context, host component.Host) error {
	js, err := p.buildJudge(ctx, p.cfg, host, p.set, judgeHooks{
		onRetry:        func() { p.tel.judgeRetry(context.Background()) },
		onBreakerState: p.tel.circuitChanged,
		onSplit:        p.tel.instructionSplit,
	})
	if err != nil {
		return fmt.Errorf("llm_eval: building scorers: %w", err)
	}
	if len(js.scorers) != len(p.cfg.Scorers) {
		return fmt.Errorf("llm_eval: built %d scorers for %d configured", len(js.scorers), len(p.cfg.Scorers))
	}
	var circuit circuitStater
	if js.breaker != nil {
		circuit = js.breaker
	}
	var cache cacheStater
	if js.cache != nil {
		cache = js.cache
	}
	if err := p.tel.observeJudge(circuit, cache); err != nil {
		return err
	}
	if js.splits != nil {
		if err := p.tel.observeSplitCache(js.splits); err != nil {
			return err
		}
	}
	scorers := make([]configuredScorer, len(js.scorers))
	for i, s := range js.scorers {
		scorers[i] = configuredScorer{cfg: p.cfg.Scorers[i], scorer: s}
	}
	if p.storage != nil {
		if err := p.storage.open(ctx, host); err != nil {
			return fmt.Errorf("llm_eval: %w", err)
		}
		p.store.journal = p.storage
	}
	p.store.start(scorers)
	return nil
}

// Shutdown forwards every held span with the results it has and waits
// for the evaluations in flight; with a shared evaluator, when the last
// instance sharing it shuts down.
func (p *llmEvalProcessor) Shutdown(ctx context.Context) error {
	if p.shared != nil {
		return p.shared.release(ctx)
	}
	return p.stopEvaluator(ctx)
}

// stopEvaluator shuts the store, the telemetry and the storage down.
func (p *llmEvalProcessor) stopEvaluator(ctx context.Context) error {
	return errors.Join(p.stopStore(ctx), p.closeStorage(ctx))
}

// stopStore shuts the store and the telemetry down: every held item
// leaves.
func (p *llmEvalProcessor) stopStore(ctx context.Context) error {
	err := p.store.shutdown(ctx)
	p.tel.shutdown()
	return err
}

// closeStorage closes the storage client, once nothing can write to it.
func (p *llmEvalProcessor) closeStorage(ctx context.Context) error {
	if p.storage == nil {
		return nil
	}
	return p.storage.close(ctx)
}

// ConsumeTraces forwards the batch at once, minus the sampled generation
// spans it admits to the store. It never waits for the judge.
func (p *llmEvalProcessor) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	start := time.Now()
	p.tel.incoming(ctx, td.SpanCount())
	td, forward, taken := p.processTraces(ctx, td)
	if p.storage != nil && taken > 0 {
		// The admitted spans are on disk before ConsumeTraces returns; a
		// batch that admitted nothing does not wait for storage.
		p.storage.commit()
	}
	p.tel.internalDuration(ctx, time.Since(start))
	if !forward {
		p.tel.outgoing(ctx, 0)
		return nil
	}
	return p.out.forward(ctx, td)
}

// processTraces takes the sampled generation spans the store admits out
// of the batch. It reports false when nothing is left to forward, and how
// many spans it took.
//
// It goes over the batch twice: first it indexes the GenAI spans of
// sampled traces and notes the generations, so that a generation's case
// sees the context spans of its own batch; then it admits the generations.
func (p *llmEvalProcessor) processTraces(ctx context.Context, td ptrace.Traces) (_ ptrace.Traces, forward bool, taken int) {
	var selected, sampled int
	var candidates []generationAt
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
				candidate := len(candidates) // the index of this span if it becomes one
				switch kind {
				case genai.KindGeneration:
					if !p.filter.passes(rs.Resource().Attributes(), span.Attributes()) {
						// Not a candidate: forwarded as it is, and only
						// indexed as a step of an agent run.
						if p.join == nil || !p.join.readsSteps() || !p.sampler.sampled(span.TraceID()) {
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
				if p.join.indexSpan(kind, span, read) {
					gained = append(gained, span.TraceID())
				}
			}
		}
	}
	if p.join != nil {
		// Links of plain spans can connect a waiting generation to
		// context its trace already has.
		for _, trace := range p.join.ix.LinkAll(td) {
			if !slices.Contains(gained, trace) {
				gained = append(gained, trace)
			}
		}
	}
	if len(gained) > 0 {
		p.store.contextMayHaveArrived(gained)
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
			return td, false, taken
		}
	}
	return td, true, taken
}

// generationAt is where a sampled generation span sits in its batch.
type generationAt struct {
	resource, scope, span int
	agent                 bool // an agent span, scored by scorers targeting agent
	// gen is the generation when indexing it as a step read it already.
	gen *genai.Generation
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
func (p *llmEvalProcessor) reading(rs ptrace.ResourceSpans, span ptrace.Span, gen genai.Generation, agent bool) spanReading {
	r := spanReading{gen: gen, agent: agent, excluded: p.scorerSel.excluded(rs.Resource().Attributes(), span.Attributes())}
	r.missing = p.join.heldForTrajectory(agent, &r.gen, r.excluded)
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
	// With a logs pipeline through the same component, a generation's
	// content may come as log events of the same trace and span id
	// (signaljoin.go): the call is evaluated once, for both signals.
	key := pairing.Key{TraceID: span.TraceID(), SpanID: span.SpanID()}
	joins := !agent && p.store.joining.Load()
	r := p.reading(rs, span, gen, agent)
	gen = r.gen
	if gen.Missing == genai.MissingToolCalls {
		// An agent loop's step that only asks for tools is not an answer:
		// the tool results reach the next step, which answers.
		if !joins || p.store.settleHalf(ctx, key, pairing.Span, nil, scoring.Result{}, true) != settledLate {
			p.tel.spanSkipped(ctx, skipToolCallsOnly)
		}
		return false
	}
	awaitsEvents := joins && gen.Missing == genai.MissingOutput
	if gen.Missing != "" && !awaitsEvents {
		// Without content no scorer is called; the results are counted.
		if gen.Malformed != "" {
			p.tel.contentMalformed(ctx, gen.Malformed)
		}
		p.markAll(ctx, span, gen, target, r.excluded, scoring.Result{Label: scoring.LabelNotScorable, Reason: gen.Missing}, reasonNotScorable, true)
		return false
	}
	// The span moves out of its batch only when the store admits it.
	switch p.store.admitHalf(ctx, key, pairing.Span, !awaitsEvents, func() evalSubject {
		return newHeldSpan(p.out, p.join, rs, ss, span, r)
	}) {
	case admitted, joinedPartner:
		return true
	case lateHalf:
		return false // its events were evaluated; it passes as it came
	case unjoinable:
		p.markAll(ctx, span, gen, target, r.excluded, scoring.Result{Label: scoring.LabelNotScorable, Reason: gen.Missing}, reasonNotScorable, true)
	case rejectedFull:
		p.markAll(ctx, span, gen, target, r.excluded, errorResult(scoring.ErrorQueueFull, errors.New("queue_size spans were already waiting for results")), reasonQueueFull, false)
	case rejectedClosed:
		p.markAll(ctx, span, gen, target, r.excluded, errorResult(scoring.ErrorShutdown, errors.New("the processor was shutting down")), reasonShutdown, false)
	}
	return false
}

// markAll writes the same result of every scorer that applies to a span
// that stays in its batch unevaluated (not scorable, queue full, shut down)
// and counts the span unscored; with record the results are counted too.
func (p *llmEvalProcessor) markAll(ctx context.Context, span ptrace.Span, gen genai.Generation, target string, excluded map[string]bool, res scoring.Result, reason string, record bool) {
	now := p.now()
	for _, sc := range p.cfg.Scorers {
		if !sc.appliesTo(target, excluded) {
			continue
		}
		r := evalResult{scorer: sc.Name, at: now, result: res}
		r.result.Scorer = sc.Name
		if record {
			p.tel.recordResult(ctx, r)
		}
		annotateSpan(span, r, gen.ResponseID, p.redact)
	}
	p.tel.spanUnscored(ctx, reason)
}
