package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/collector/processor"
)

// evaluators holds the evaluator of each llm_eval configuration in use.
// The collector hands the traces and logs instances of one component the
// same *Config, so keying by it makes them share one judge, cache,
// breaker, store and telemetry: queue_size and max_concurrency then bound
// the component, not each signal.
var evaluators = struct {
	sync.Mutex
	m map[*Config]*sharedEvaluator
}{m: map[*Config]*sharedEvaluator{}}

// sharedEvaluator is the judge and store of one component, started by the
// first instance's Start and stopped by the first instance's Shutdown; its
// storage (durable.go) closes at the last instance's Shutdown.
//
// Stopping at the first Shutdown, not the last, is what delivers: the
// collector shuts a component down before its consumers, so when the first
// instance stops, the consumers of every instance are still running and
// take the held items of both signals. Had the store waited for the last
// instance, the items of an instance already shut down would go to
// consumers that may have stopped. Items arriving afterwards pass through
// with shutdown markers, as they do on a single instance.
type sharedEvaluator struct {
	cfg  *Config
	core *llmEvalProcessor // cfg, telemetry, sampler, store; no output of its own

	mu      sync.Mutex
	refs    int // instances created and not shut down
	signals map[pipeline.Signal]bool
	// traces and logs are the instances, which forward a call recovered
	// from storage with both its halves (durable.go): its span and its
	// result records.
	traces  *llmEvalProcessor
	logs    *logsProcessor
	started bool
	starts  int // instances started
	stopped bool
}

// acquireEvaluator returns the evaluator of cfg, creating it for the first
// instance.
func acquireEvaluator(set processor.Settings, cfg *Config, build judgeBuilder, signal pipeline.Signal) (*sharedEvaluator, error) {
	evaluators.Lock()
	defer evaluators.Unlock()
	if ev, ok := evaluators.m[cfg]; ok {
		ev.mu.Lock()
		ev.refs++
		ev.signals[signal] = true
		ev.mu.Unlock()
		return ev, nil
	}
	core, err := newLLMEvalProcessor(set, cfg, nil, build)
	if err != nil {
		return nil, err
	}
	ev := &sharedEvaluator{cfg: cfg, core: core, refs: 1, signals: map[pipeline.Signal]bool{signal: true}}
	evaluators.m[cfg] = ev
	return ev, nil
}

// setLogs remembers the logs instance.
func (ev *sharedEvaluator) setLogs(lp *logsProcessor) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	ev.logs = lp
}

// setTraces remembers the traces instance.
func (ev *sharedEvaluator) setTraces(tp *llmEvalProcessor) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	ev.traces = tp
}

// tracesInstance is the traces instance, nil when the component has none.
func (ev *sharedEvaluator) tracesInstance() *llmEvalProcessor {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	return ev.traces
}

// logsInstance is the logs instance, nil when the component has none.
func (ev *sharedEvaluator) logsInstance() *logsProcessor {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	return ev.logs
}

// start builds the judge and starts the store on the first call. It
// reports whether every instance has started now: the collector starts
// each after its own consumers only, so only then have the consumers of
// both started.
func (ev *sharedEvaluator) start(ctx context.Context, host component.Host) (all bool, err error) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	ev.starts++
	all = ev.starts >= ev.refs
	if ev.started {
		return all, nil
	}
	if err := ev.core.startEvaluator(ctx, host); err != nil {
		return false, err
	}
	if ev.signals[pipeline.SignalTraces] && ev.signals[pipeline.SignalLogs] {
		// Every instance exists before the first starts: one call, one
		// evaluation across the two signals.
		ev.core.store.joinSignals(ev.cfg.LogEvents.effectiveCrossSignalWait(ev.cfg.MaxWait),
			crossSignalRemember, crossSignalRememberPer*ev.cfg.QueueSize)
	}
	ev.started = true
	logStartup(ev.core.set.Logger, ev.cfg, ev.signalList())
	return all, nil
}

// signalList lists the signals the evaluator is in; call with ev.mu held.
func (ev *sharedEvaluator) signalList() []pipeline.Signal {
	var list []pipeline.Signal
	for s, in := range ev.signals {
		if in {
			list = append(list, s)
		}
	}
	return list
}

// release drops one instance. The first stops the store, which sends
// every held item on; the last closes the storage and forgets the
// evaluator. The storage stays open until then: the logs instance, shut
// down after the traces instance, still reads the calls it was joining
// and deletes their held records.
func (ev *sharedEvaluator) release(ctx context.Context) error {
	evaluators.Lock()
	ev.mu.Lock()
	ev.refs--
	last := ev.refs <= 0
	if last && evaluators.m[ev.cfg] == ev {
		delete(evaluators.m, ev.cfg)
	}
	first := !ev.stopped
	ev.stopped = true
	ev.mu.Unlock()
	evaluators.Unlock()
	var err error
	if first {
		err = ev.core.stopStore(ctx)
	}
	if last {
		err = errors.Join(err, ev.core.closeStorage(ctx))
	}
	return err
}
