package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/metric"

	"github.com/llm-eval/llm_eval/internal/sharedcomponent"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/conversation"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/persistence"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/subject"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/redact"
)

// evaluator is the judge, store, storage and telemetry of one llm_eval
// component, shared by its traces and logs instances: queue_size and
// max_concurrency then bound the component, not each signal. The
// collector hands both instances of a component the same *Config, so the
// factory's evaluators keeps one evaluator per *Config
// (internal/sharedcomponent, which the metrics connector uses too).
//
// Each instance acquires it when created, starts it in its Start and
// releases it in its Shutdown. The rule of its life:
//   - the judge is built and the store started by the first Start;
//   - recovery from storage runs once, in the Start that completes the set
//     of instances created, when the consumers of every instance run;
//   - the store stops at the first Shutdown;
//   - the storage closes at the last Shutdown.
//
// Stopping at the first Shutdown, not the last, is what delivers: the
// collector shuts a component down before its consumers, so when the first
// instance stops, the consumers of every instance are still running and
// take the held items of both signals. Had the store waited for the last
// instance, the items of an instance already shut down would go to
// consumers that may have stopped. Items arriving afterwards pass through
// with shutdown markers, as they do on a single instance. The storage stays
// open until the last Shutdown: the logs instance, shut down after the
// traces instance, still reads the calls it was joining and deletes their
// held records.
type evaluator struct {
	cfg         *Config
	set         component.TelemetrySettings
	tel         *telemetry
	buildJudge  judgeBuilder
	sampler     traceSampler
	store       *evalStore
	join        *subject.TraceJoin     // the trace context index and join
	scorers     []evalstore.Scorer     // what the subjects see of cfg.Scorers
	filter      spanFilter             // include, exclude
	scorerSel   scorerSelection        // scorers[].include, exclude, sampling
	agents      bool                   // a scorer targets agent spans
	generations bool                   // a scorer targets generation spans
	secrets     *redact.SecretScrubber // the judge's secrets, scrubbed from output
	// storage keeps held items across a crash (internal/persistence); nil
	// without the storage setting.
	storage *persistence.Keeper
	// convs holds the open conversations (conversations.go); nil when no
	// scorer targets conversations.
	convs *conversationScoring

	owner *evaluators // counts the instances using it; forgets it at the last release

	mu      sync.Mutex
	signals map[pipeline.Signal]bool
	// The instances, set as they are created: recovery hands each the
	// items of its signal, and a call stored with both halves to both.
	traces    spanRecovery
	logs      callRecovery
	started   bool
	starts    int // instances started
	recovered bool
	stopped   bool
}

func newEvaluator(set processor.Settings, cfg *Config, build judgeBuilder) (*evaluator, error) {
	ev := &evaluator{
		cfg:        cfg,
		set:        set.TelemetrySettings,
		buildJudge: build,
		sampler:    newTraceSampler(cfg.Sampling.Percentage),
		secrets:    redact.NewSecretScrubber(cfg.judgeSecrets()...),
		signals:    map[pipeline.Signal]bool{},
	}
	scorers := make([]string, len(cfg.Scorers))
	for i, sc := range cfg.Scorers {
		scorers[i] = sc.Name
	}
	judge := judgeFacts{endpoint: cfg.Judge.ClientConfig.Endpoint,
		openDuration: cfg.Judge.CircuitBreaker.OpenDuration, authRetry: cfg.Judge.CircuitBreaker.AuthRetryInterval,
		endpoints: map[string]string{}}
	if judges, _, err := cfg.judges(); err == nil {
		for _, nj := range judges {
			judge.endpoints[nj.name] = nj.cfg.ClientConfig.Endpoint
		}
	}
	tel, err := newTelemetry(set, judge, scorers, subject.JoinSources(), ev.secrets, ev.observeHeld, ev.observeQueue)
	if err != nil {
		return nil, err
	}
	ev.tel = tel
	ev.store = newEvalStore(cfg, tel)
	if err := tel.tb.RegisterProcessorLlmEvalEventsWaitingCallback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(int64(ev.store.EventWaitStats().Spans))
		return nil
	}); err != nil {
		return nil, err
	}
	if ev.filter, err = cfg.SpanFilterConfig.compile(); err != nil {
		return nil, fmt.Errorf("llm_eval: %w", err)
	}
	if ev.scorerSel, err = compileScorerSelection(cfg.Scorers); err != nil {
		return nil, fmt.Errorf("llm_eval: scorers: %w", err)
	}
	for _, sc := range cfg.Scorers {
		ev.agents = ev.agents || sc.hasTarget(targetAgent)
		ev.generations = ev.generations || sc.hasTarget(targetGeneration)
	}
	ev.scorers = evalScorers(cfg.Scorers)
	if ev.join, err = subject.NewTraceJoin(cfg.TraceContext.indexConfig(), cfg.TraceContext.scope(), joinedContextChars(cfg), ev.scorers, tel); err != nil {
		return nil, fmt.Errorf("llm_eval: trace_context: %w", err)
	}
	if err := tel.observeIndex(ev.join.Index, ev.join.ReadsSteps()); err != nil {
		return nil, err
	}
	var journal conversation.Journal
	if cfg.Storage != nil {
		ev.storage = persistence.NewKeeper(*cfg.Storage, set.ID, cfg.StorageCheckTimeout,
			persistence.Counters{TB: tel.tb, Log: tel.logger, LogFailure: tel.logFailure}, ev.Redact)
		journal = ev.storage
	}
	if ev.convs, err = newConversationScoring(cfg, tel, ev.store, ev.sampler, ev.scorerSel, journal); err != nil {
		return nil, err
	}
	return ev, nil
}

func (ev *evaluator) observeHeld(_ context.Context, o metric.Int64Observer) error {
	o.Observe(int64(ev.store.HeldCount()))
	return nil
}

func (ev *evaluator) observeQueue(_ context.Context, o metric.Int64Observer) error {
	o.Observe(int64(ev.store.Queued()))
	return nil
}

// Redact removes every configured secret from text written out or logged
// (subject.Policy).
func (ev *evaluator) Redact(s string) string { return ev.secrets.Scrub(s) }

// EmitsLate says whether late_results emits a late result of label
// (subject.Policy).
func (ev *evaluator) EmitsLate(label scoring.Label) bool {
	return lateEmitted(ev.cfg.LateResults, label)
}

// The instances of a component, as recovery sees them.
type (
	spanRecovery interface {
		recoverSpans()
		// recoverPairs takes the calls stored with both halves; calls
		// reads their log records, nil without a logs instance.
		recoverPairs(calls callRecovery)
	}
	callRecovery interface {
		recoverCalls()
		// recoveredCall reads a stored call as the logs instance does.
		recoveredCall(ld plog.Logs) *subject.LogCall
	}
)

// setTraces takes the traces instance, for recovery.
func (ev *evaluator) setTraces(tp spanRecovery) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	ev.traces = tp
}

// setLogs takes the logs instance, for recovery.
func (ev *evaluator) setLogs(lp callRecovery) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	ev.logs = lp
}

// start is one instance's Start. The first builds the judge and starts
// the store; the one that completes the set of instances acquired runs
// recovery: the collector starts each instance after its own consumers
// only, so only then do the consumers of both signals run.
func (ev *evaluator) start(ctx context.Context, host component.Host) error {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if !ev.started {
		if err := ev.startStore(ctx, host); err != nil {
			return err
		}
		ev.started = true
		logStartup(ev.set.Logger, ev.cfg, ev.signalList())
	}
	ev.starts++
	if ev.starts < ev.owner.shared.Uses(ev.cfg) || ev.recovered {
		return nil
	}
	ev.recovered = true
	ev.recover()
	return nil
}

// startStore builds the judge, opens the storage and starts the store's
// workers. Called with mu held.
func (ev *evaluator) startStore(ctx context.Context, host component.Host) error {
	js, err := ev.buildJudge(ctx, ev.cfg, host, ev.set, judgeHooks{
		onRetry:        func() { ev.tel.judgeRetry(context.Background()) },
		onBreakerState: ev.tel.circuitChanged,
		onFallback:     ev.tel.judgeFallback,
		onCost:         ev.tel.judgeCost,
		onSplit:        ev.tel.instructionSplit,
	})
	if err != nil {
		return fmt.Errorf("llm_eval: building scorers: %w", err)
	}
	if len(js.scorers) != len(ev.cfg.Scorers) {
		return fmt.Errorf("llm_eval: built %d scorers for %d configured", len(js.scorers), len(ev.cfg.Scorers))
	}
	var cache cacheStater
	if js.cache != nil {
		cache = js.cache
	}
	if err := ev.tel.observeJudge(js.breakers, cache); err != nil {
		return err
	}
	if js.splits != nil {
		if err := ev.tel.observeSplitCache(js.splits); err != nil {
			return err
		}
	}
	scorers := slices.Clone(ev.scorers)
	for i, s := range js.scorers {
		scorers[i].Run = s
	}
	var journal evalstore.Journal
	if ev.storage != nil {
		on, err := ev.storage.Open(ctx, host)
		if err != nil {
			return fmt.Errorf("llm_eval: %w", err)
		}
		if on { // otherwise it said why it runs without storage
			journal = storeJournal{ev.storage}
		}
	}
	if ev.signals[pipeline.SignalTraces] && ev.signals[pipeline.SignalLogs] {
		// Every instance exists before the first starts: one call, one
		// evaluation across the two signals.
		ev.store.JoinSignals(ev.cfg.LogEvents.effectiveCrossSignalWait(ev.cfg.MaxWait),
			crossSignalRemember, crossSignalRememberPer*ev.cfg.QueueSize)
	}
	ev.store.Start(scorers, journal)
	return nil
}

// signalList lists the signals the evaluator is in. Called with mu held.
func (ev *evaluator) signalList() []pipeline.Signal {
	var list []pipeline.Signal
	for s, in := range ev.signals {
		if in {
			list = append(list, s)
		}
	}
	return list
}

// recover hands the items found in storage to the instances of their
// signals: spans, then log calls (with the records that were waiting for
// the rest of their call), then calls stored with both halves. Called
// once, with mu held.
func (ev *evaluator) recover() {
	if ev.storage == nil {
		return
	}
	if ev.traces != nil {
		ev.traces.recoverSpans()
	}
	if ev.logs != nil {
		ev.logs.recoverCalls()
	}
	if ev.traces != nil {
		ev.traces.recoverPairs(ev.logs)
	}
	ev.convs.restoreFrom(ev.storage, ev.store, ev.tel.logger)
}

// release is one instance's Shutdown. The first stops the store, which
// sends every held item on; the last closes the storage and forgets the
// evaluator.
func (ev *evaluator) release(ctx context.Context) error {
	last := ev.owner.shared.Release(ev.cfg, ev)
	ev.mu.Lock()
	first := !ev.stopped
	ev.stopped = true
	ev.mu.Unlock()
	var err error
	if first {
		// No conversation ends into a store shutting down; the open ones
		// stay in storage.
		ev.convs.stopEnding(ev.storage != nil && ev.storage.Journal() != nil)
		err = ev.store.Shutdown(ctx)
		ev.tel.shutdown()
	}
	if last {
		if ev.storage != nil {
			err = errors.Join(err, ev.storage.Close(ctx))
		}
	}
	return err
}

// evaluators is the evaluator of each llm_eval configuration in use, one
// per factory.
type evaluators struct {
	build  judgeBuilder
	shared sharedcomponent.Map[*Config, *evaluator]
}

// newEvaluators makes the evaluators of a factory: build makes the judge
// at Start.
func newEvaluators(build judgeBuilder) *evaluators {
	return &evaluators{build: build}
}

// acquire returns the evaluator of cfg for a new instance of signal,
// creating it for the first.
func (es *evaluators) acquire(set processor.Settings, cfg *Config, signal pipeline.Signal) (*evaluator, error) {
	ev, err := es.shared.Acquire(cfg, func() (*evaluator, error) {
		ev, err := newEvaluator(set, cfg, es.build)
		if err != nil {
			return nil, err
		}
		ev.owner = es
		return ev, nil
	})
	if err != nil {
		return nil, err
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	ev.signals[signal] = true
	return ev, nil
}

// has reports whether cfg has an evaluator now.
func (es *evaluators) has(cfg *Config) bool { return es.shared.Uses(cfg) > 0 }

// The store of an evaluator holds subjects read with a scorer's
// configuration (internal/evalstore).
type evalStore = evalstore.Store

// storeJournal is the storage of an evaluator as the journal of its
// store, whose subjects it writes as they record themselves.
type storeJournal struct{ *persistence.Keeper }

func (j storeJournal) Admitted(s evalstore.Subject, admitted time.Time) uint64 {
	if st, ok := s.(persistence.Stored); ok {
		return j.Keeper.Admitted(st, admitted)
	}
	return 0
}

func (j storeJournal) Rewritten(id uint64, s evalstore.Subject, admitted time.Time) uint64 {
	if st, ok := s.(persistence.Stored); ok {
		return j.Keeper.Rewritten(id, st, admitted)
	}
	return id
}

// newEvalStore makes the store of cfg, telling tel what it does.
func newEvalStore(cfg *Config, tel *telemetry) *evalStore {
	evalTimeout := cfg.Judge.ClientConfig.Timeout
	if evalTimeout <= 0 {
		evalTimeout = defaultJudgeTimeout
	}
	return evalstore.New(evalstore.Settings{
		MaxWait:     cfg.MaxWait,
		EvalTimeout: evalTimeout,
		Capacity:    cfg.QueueSize,
		Workers:     cfg.Judge.MaxConcurrency,
		ContextWait: cfg.TraceContext.effectiveWait(cfg.MaxWait),
		EventWaits:  eventWaits(cfg.LogEvents),
		Observer:    storeObserver{tel},
	})
}

// eventWaits bounds the store's area of spans waiting for their events.
func eventWaits(c LogEventsConfig) evalstore.EventWaits {
	return evalstore.EventWaits{MaxSpans: c.MaxWaitingSpans, MaxBytes: c.MaxWaitingBytes, LearnAfter: c.ContentCaptureOffAfter}
}

// joinedContextChars bounds the documents a generation's case takes from
// its trace, in characters: what hallucination can judge
// (max_context_chunks chunks of max_input_chars) and one chunk more, so
// that a context beyond the bound reaches the scorer as such and its
// result says it was not judged whole. 0 (no max_input_chars) means no
// bound beyond the index's own.
func joinedContextChars(cfg *Config) int {
	return cfg.MaxInputChars * (cfg.MaxContextChunks + 1)
}
