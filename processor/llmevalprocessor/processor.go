package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/scoring"
)

// scorerBuilder makes one scorer per configured entry, in config order.
type scorerBuilder func(ctx context.Context, cfg *Config, host component.Host, set component.TelemetrySettings, hooks judgeHooks) ([]scoring.Scorer, error)

// scorerSlot is a running scorer with its configuration.
type scorerSlot struct {
	cfg    ScorerConfig
	scorer scoring.Scorer
}

// llmEvalProcessor holds sampled generation spans while a worker pool
// scores them, and forwards everything else at once.
type llmEvalProcessor struct {
	cfg          *Config
	set          component.TelemetrySettings
	next         consumer.Traces
	tel          *telemetry
	buildScorers scorerBuilder
	sampler      traceSampler
	now          func() time.Time
	// evalTimeout bounds one evaluation beyond max_wait: the judge timeout.
	evalTimeout time.Duration

	mu      sync.Mutex
	started bool
	closed  bool
	slots   []scorerSlot           // immutable once started
	jobs    chan evalJob           // capacity queue_size * len(slots): sends never block
	held    map[*heldSpan]struct{} // spans with unfinished evaluations
	runCtx  context.Context
	cancel  context.CancelFunc

	cache   *scoring.Cache // nil when cache.enabled is false
	circuit atomic.Int64   // circuit breaker state, as circuitStateValue

	heldNow  atomic.Int64 // spans held (not yet forwarded)
	stopping atomic.Bool  // results arriving now are dropped
	workers  sync.WaitGroup
	timers   sync.WaitGroup
}

func newLLMEvalProcessor(set processor.Settings, cfg *Config, next consumer.Traces, build scorerBuilder) (*llmEvalProcessor, error) {
	p := &llmEvalProcessor{
		cfg:          cfg,
		set:          set.TelemetrySettings,
		next:         next,
		buildScorers: build,
		sampler:      newTraceSampler(cfg.Sampling.Percentage),
		now:          time.Now,
		evalTimeout:  cfg.Judge.ClientConfig.Timeout,
		held:         make(map[*heldSpan]struct{}),
	}
	if p.evalTimeout <= 0 {
		p.evalTimeout = defaultJudgeTimeout
	}
	tel, err := newTelemetry(set, cfg, p.redact, p.observeHeld, p.observeQueue)
	if err != nil {
		return nil, err
	}
	p.tel = tel
	if cfg.Cache.Enabled {
		cache, err := scoring.NewCache(scoring.CacheConfig{Size: cfg.Cache.Size, TTL: cfg.Cache.TTL})
		if err != nil {
			return nil, fmt.Errorf("cache: %w", err)
		}
		p.cache = cache
	}
	if err := tel.observeGuards(p.cache, &p.circuit); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *llmEvalProcessor) observeHeld(_ context.Context, o metric.Int64Observer) error {
	o.Observe(p.heldNow.Load())
	return nil
}

func (p *llmEvalProcessor) observeQueue(_ context.Context, o metric.Int64Observer) error {
	p.mu.Lock()
	jobs := p.jobs
	p.mu.Unlock()
	o.Observe(int64(len(jobs)))
	return nil
}

// redact removes the API key from text written out or logged.
func (p *llmEvalProcessor) redact(s string) string {
	if key := string(p.cfg.Judge.APIKey); key != "" && strings.Contains(s, key) {
		return strings.ReplaceAll(s, key, "[REDACTED]")
	}
	return s
}

// circuitChanged follows the judge circuit breaker for telemetry.
func (p *llmEvalProcessor) circuitChanged(_, to scoring.BreakerState, cause error) {
	p.circuit.Store(circuitStateValue(to))
	p.tel.circuitChanged(context.Background(), to, cause, p.cfg.Judge.CircuitBreaker)
}

func (p *llmEvalProcessor) start(ctx context.Context, host component.Host) error {
	scorers, err := p.buildScorers(ctx, p.cfg, host, p.set, judgeHooks{
		onRetry:        func() { p.tel.judgeRetry(context.Background()) },
		onBreakerState: p.circuitChanged,
		cache:          p.cache,
	})
	if err != nil {
		return fmt.Errorf("llm_eval: building scorers: %w", err)
	}
	if len(scorers) != len(p.cfg.Scorers) {
		return fmt.Errorf("llm_eval: built %d scorers for %d configured", len(scorers), len(p.cfg.Scorers))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.started {
		return nil
	}
	slots := make([]scorerSlot, len(scorers))
	for i, s := range scorers {
		slots[i] = scorerSlot{cfg: p.cfg.Scorers[i], scorer: s}
	}
	p.slots = slots
	p.jobs = make(chan evalJob, p.cfg.QueueSize*len(slots))
	// Workers outlive Start: they get their own context.
	p.runCtx, p.cancel = context.WithCancel(context.Background())
	p.started = true
	for range p.cfg.Judge.MaxConcurrency {
		p.workers.Add(1)
		go p.work(p.jobs)
	}
	return nil
}

// processTraces forwards the batch at once, minus the sampled generation
// spans it takes to hold for scoring.
func (p *llmEvalProcessor) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	var selected, sampled, taken int
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		sss := rs.ScopeSpans()
		emptied := false
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			spans := ss.Spans()
			var take []int // indexes of spans moved out, increasing
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				if genai.Classify(rs.Resource(), ss.Scope(), span) != genai.KindGeneration {
					continue
				}
				selected++
				if !p.sampler.sampled(span.TraceID()) {
					continue
				}
				sampled++
				if p.hold(ctx, rs, ss, span) {
					take = append(take, k)
				}
			}
			if len(take) > 0 {
				taken += len(take)
				removeIndexes(spans, take)
				emptied = emptied || spans.Len() == 0
			}
		}
		if emptied {
			sss.RemoveIf(func(ss ptrace.ScopeSpans) bool { return ss.Spans().Len() == 0 })
		}
	}
	if selected > 0 {
		p.tel.spansSelected(ctx, selected, sampled)
	}
	if taken > 0 {
		rss.RemoveIf(func(rs ptrace.ResourceSpans) bool { return rs.ScopeSpans().Len() == 0 })
		if rss.Len() == 0 {
			return td, processorhelper.ErrSkipProcessingData
		}
	}
	return td, nil
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

// hold takes a sampled generation span for scoring. It returns false when
// the span stays in the batch: not scorable (annotated in place), queue
// full, or the processor not running.
func (p *llmEvalProcessor) hold(ctx context.Context, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span) bool {
	gen := genai.Read(ss.Scope(), span)

	p.mu.Lock()
	if !p.started || p.closed {
		closed := p.closed
		p.mu.Unlock()
		if closed {
			p.tel.spanUnscored(ctx, reasonShutdown)
		}
		return false
	}
	slots := p.slots
	if gen.Missing != "" {
		p.mu.Unlock()
		p.annotateNotScorable(ctx, span, slots, gen)
		return false
	}
	if len(p.held) >= p.cfg.QueueSize {
		p.mu.Unlock()
		p.tel.spanUnscored(ctx, reasonQueueFull)
		return false
	}
	now := p.now()
	h := newHeldSpan(rs, ss, span, gen, len(slots), now.Add(p.cfg.MaxWait+p.evalTimeout))
	p.held[h] = struct{}{}
	p.heldNow.Add(1)
	h.mu.Lock()
	p.timers.Add(1)
	h.timer = time.AfterFunc(p.cfg.MaxWait, func() {
		defer p.timers.Done()
		p.expire(h)
	})
	for i := range slots {
		select {
		case p.jobs <- evalJob{held: h, slot: i}:
		default: // cannot happen: capacity covers every held span's jobs
			h.pending--
			h.results[i] = &evalResult{scorer: slots[i].cfg.Name, at: now, result: errorResult(scoring.ErrorBudgetExceeded, errors.New("evaluation queue full"))}
		}
	}
	h.mu.Unlock()
	p.mu.Unlock()
	return true
}

// annotateNotScorable marks a span without usable content as not scorable
// by every scorer, without calling any.
func (p *llmEvalProcessor) annotateNotScorable(ctx context.Context, span ptrace.Span, slots []scorerSlot, gen genai.Generation) {
	now := p.now()
	for _, s := range slots {
		r := evalResult{scorer: s.cfg.Name, at: now, result: scoring.Result{
			Scorer: s.cfg.Name, Label: scoring.LabelNotScorable, Reason: gen.Missing,
		}}
		p.tel.recordResult(ctx, r)
		annotateSpan(span, r, gen.ResponseID, p.redact)
	}
	p.tel.spanUnscored(ctx, reasonNotScorable)
}

// forward sends a span that was held on, on a context of its own: the
// batch it came in with has long been acknowledged.
func (p *llmEvalProcessor) forward(td ptrace.Traces) {
	if err := p.next.ConsumeTraces(context.Background(), td); err != nil {
		p.tel.logFailure("forward", "failed to forward evaluated spans", zap.Error(err))
	}
}

// shutdown stops taking spans, cancels the judge calls in flight, forwards
// every held span with the results it has and waits for the workers.
func (p *llmEvalProcessor) shutdown(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	held := make([]*heldSpan, 0, len(p.held))
	for h := range p.held {
		held = append(held, h)
	}
	jobs, cancel := p.jobs, p.cancel
	p.mu.Unlock()

	p.stopping.Store(true)
	if cancel != nil {
		cancel()
	}
	for _, h := range held {
		if td, ok := p.leave(h, reasonShutdown); ok {
			p.forward(td)
		}
	}
	if jobs != nil {
		close(jobs) // no sender left: hold checks closed under mu
	}
	done := make(chan struct{})
	go func() {
		p.workers.Wait()
		p.timers.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("llm_eval: shutdown: evaluations still running: %w", ctx.Err())
	}
	p.tel.shutdown()
	return err
}
