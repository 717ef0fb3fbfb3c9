package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/client"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/pairing"
	"github.com/llm-eval/llm_eval/scoring"
)

// evalSubject is one item admitted for evaluation: what its evaluations
// read and where their results go. A held span is one; a GenAI log record
// whose results are emitted as new records can be another.
type evalSubject interface {
	// caseFor builds what one scorer evaluates. The store calls it when it
	// dispatches the evaluations, not at admission, so the case can use
	// what arrived in between.
	caseFor(sc ScorerConfig) scoring.Case
	resultSink
}

// resultSink is where an admitted item's results go.
type resultSink interface {
	// leave sends the item on with one result per scorer, in scorer
	// order. An evaluation that had not finished has a marker result
	// (error.type max_wait_exceeded, shutdown or restarted). The store
	// calls it exactly once, without its lock held.
	leave(ctx context.Context, results []evalResult)
	// late takes a result that finished after leave. It may run at the
	// same time as leave and as other late calls.
	late(ctx context.Context, r evalResult)
}

// admitResult says what admit did with an item.
type admitResult int

const (
	admitted       admitResult = iota
	notRunning                 // before Start: the item is not evaluated
	rejectedFull               // queue_size items have unfinished evaluations
	rejectedClosed             // after Shutdown
)

// leaveReason says why an item left before all its results were in.
type leaveReason string

const (
	leftComplete leaveReason = ""
	leftMaxWait  leaveReason = reasonMaxWait
	leftShutdown leaveReason = reasonShutdown
	// leftRestarted: found in storage at start after its max_wait.
	leftRestarted leaveReason = reasonRestarted
)

// configuredScorer is a running scorer with its configuration.
type configuredScorer struct {
	cfg    ScorerConfig
	scorer scoring.Scorer
}

// evalStore owns every admitted item from admission until its last
// evaluation has finished. An item is held until all its results are in,
// max_wait has passed or the store shuts down, whichever comes first; it
// leaves exactly once. Results finishing after that go to the item's
// late method; results finishing after shutdown are dropped.
//
// One mutex guards all state. max_wait is the same for every item, so
// admission order is expiry order: held items sit in a list in that order
// and one timer, armed for the oldest, lets them go.
type evalStore struct {
	maxWait     time.Duration
	evalTimeout time.Duration // an evaluation's deadline is max_wait + evalTimeout after admission
	capacity    int           // queue_size: items with unfinished evaluations
	workerCount int
	now         func() time.Time // timestamps of results
	tel         *telemetry
	// evaluations waits for a worker; its capacity covers every
	// evaluation of capacity items, so dispatch never blocks.
	evaluations chan evaluation
	// idle holds the wake channels of workers parked on an empty queue,
	// the most recently parked last; guarded by mu. Dispatch wakes the
	// last one, so evaluations run on few workers whose stacks are grown.
	// Receiving on the channel would instead rotate them through every
	// worker, and the GC shrinks the stack of each worker left idle, which
	// then grows again, copied frame by frame, inside its next evaluation
	// (the GC runs several times a second in a busy collector).
	idle []chan struct{}
	// workers counts worker goroutines and expiry runs in progress.
	workers sync.WaitGroup

	mu         sync.Mutex
	phase      storePhase
	scorers    []configuredScorer // set by start, then immutable
	held       list.List          // of *admittedItem not yet left, oldest first
	unfinished int                // admitted items with evaluations not finished
	expiry     *time.Timer        // fires at the oldest held item's max_wait
	runCtx     context.Context    // canceled at shutdown
	cancel     context.CancelFunc
	// Items waiting for their trace's context before dispatch
	// (contextwait.go); guarded by mu.
	contextWait time.Duration
	waits       contextWaits
	// Calls seen on one signal waiting for, or joined by, the other
	// (signaljoin.go); nil unless the component is in a traces and a logs
	// pipeline. Guarded by mu.
	calls     *pairing.Table[*admittedItem]
	callTimer *time.Timer
	joining   atomic.Bool // calls is set: read without mu on the hot path
	// journal keeps admitted items in storage (durable.go); nil when
	// storage is off. Set before start.
	journal itemJournal
}

type storePhase int

const (
	phaseNew storePhase = iota
	phaseRunning
	phaseClosed
)

// admittedItem is one item in the store.
type admittedItem struct {
	subject evalSubject
	// ctx carries the client.Info of the request the item came with, and
	// nothing else: the request itself has long been answered.
	ctx       context.Context
	admitted  time.Time
	expiresAt time.Time // admission + max_wait
	deadline  time.Time // no evaluation of this item runs past it
	results   []*evalResult
	pending   int           // evaluations not finished
	elem      *list.Element // in held; nil once the item has left
	wait      *waitingItem  // set while the item waits for context
	// call is the item's key in the store's table of calls seen on both
	// signals (signaljoin.go); zero when it is not in the table.
	call   pairing.Key
	stored uint64 // its id in storage; 0 when not stored
}

// evaluation is one (item, scorer) job for the worker pool.
type evaluation struct {
	item        *admittedItem
	scorerIndex int
	c           scoring.Case
	skip        bool // the scorer does not apply: no call, a skipped result
	// upFront is the result the subject already has for the scorer
	// (upFrontResulter): no call.
	upFront *scoring.Result
}

// upFrontResulter is a subject that has some scorers' results before any
// call, such as not_scorable for content it lacks.
type upFrontResulter interface {
	resultUpFront(sc ScorerConfig) (scoring.Result, bool)
}

func newEvalStore(cfg *Config, tel *telemetry, now func() time.Time) *evalStore {
	evalTimeout := cfg.Judge.ClientConfig.Timeout
	if evalTimeout <= 0 {
		evalTimeout = defaultJudgeTimeout
	}
	return &evalStore{
		maxWait:     cfg.MaxWait,
		evalTimeout: evalTimeout,
		capacity:    cfg.QueueSize,
		workerCount: cfg.Judge.MaxConcurrency,
		now:         now,
		tel:         tel,
		evaluations: make(chan evaluation, cfg.QueueSize*len(cfg.Scorers)),
		contextWait: cfg.TraceContext.effectiveWait(cfg.MaxWait),
	}
}

// start begins running evaluations with the given scorers, at most one
// per configured scorer entry.
func (s *evalStore) start(scorers []configuredScorer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase != phaseNew {
		return
	}
	s.scorers = scorers
	// Workers outlive Start's context: they get their own.
	s.runCtx, s.cancel = context.WithCancel(context.Background())
	s.phase = phaseRunning
	for range s.workerCount {
		s.workers.Add(1)
		go s.work()
	}
}

// admit takes an item and dispatches its evaluations. newSubject is called
// only when the item is admitted (moving a span out of its batch is part
// of it). ctx is the request the item came with; only its client.Info is
// kept.
func (s *evalStore) admit(ctx context.Context, newSubject func() evalSubject) admitResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	if res := s.refusal(); res != admitted {
		return res
	}
	s.begin(s.hold(ctx, newSubject()))
	return admitted
}

// refusal says why the store cannot take an item now, or admitted when it
// can. Called with mu held.
func (s *evalStore) refusal() admitResult {
	switch {
	case s.phase == phaseNew:
		return notRunning
	case s.phase == phaseClosed:
		return rejectedClosed
	case s.unfinished >= s.capacity:
		return rejectedFull
	}
	return admitted
}

// hold makes an admitted item of subject and holds it until it leaves;
// its evaluations are not dispatched yet. Called with mu held, after
// refusal said admitted.
func (s *evalStore) hold(ctx context.Context, subject evalSubject) *admittedItem {
	now := time.Now()
	item := &admittedItem{
		subject:   subject,
		ctx:       client.NewContext(context.Background(), client.FromContext(ctx)),
		admitted:  now,
		expiresAt: now.Add(s.maxWait),
		deadline:  now.Add(s.maxWait + s.evalTimeout),
		results:   make([]*evalResult, len(s.scorers)),
		pending:   len(s.scorers),
	}
	item.elem = s.held.PushBack(item)
	s.unfinished++
	if s.held.Len() == 1 {
		s.armExpiry(s.maxWait)
	}
	if s.journal != nil {
		s.journal.admitted(item, now) // stored before ConsumeTraces returns
	}
	return item
}

// begin dispatches a held item's evaluations, or parks it until its
// trace's context arrives. Called with mu held.
func (s *evalStore) begin(item *admittedItem) {
	if !s.parkForContext(item, time.Now()) {
		s.dispatch(item)
	}
}

// dispatch builds the item's cases and queues its evaluations. Called
// with mu held.
func (s *evalStore) dispatch(item *admittedItem) {
	for i := range s.scorers {
		s.dispatchScorer(item, i)
	}
}

// dispatchScorer builds the item's case for one scorer and queues it,
// unless the item has its result already (recorded in storage before a
// restart): its pending count does not include it. Called with mu held.
func (s *evalStore) dispatchScorer(item *admittedItem, i int) {
	if item.results[i] != nil {
		return
	}
	sc := s.scorers[i]
	ev := evaluation{item: item, scorerIndex: i}
	if sk, ok := item.subject.(scorerSkipper); ok && sk.skips(sc.cfg) {
		ev.skip = true
	} else if ur, ok := item.subject.(upFrontResulter); ok {
		if r, ok := ur.resultUpFront(sc.cfg); ok {
			res := r // allocated only here, not on every dispatch
			ev.upFront = &res
		}
	}
	if !ev.skip && ev.upFront == nil {
		ev.c = item.subject.caseFor(sc.cfg)
	}
	select {
	case s.evaluations <- ev:
		s.wakeWorker()
	default: // cannot happen: capacity covers every admitted item's evaluations
		item.pending--
		item.results[i] = &evalResult{scorer: sc.cfg.Name, at: s.now(),
			result: errorResult(scoring.ErrorBudgetExceeded, errors.New("evaluation queue full"))}
	}
}

// wakeWorker wakes the most recently parked worker, if any. Called with mu
// held.
func (s *evalStore) wakeWorker() {
	if n := len(s.idle); n > 0 {
		s.idle[n-1] <- struct{}{}
		s.idle = s.idle[:n-1]
	}
}

// armExpiry makes the timer fire after d. Called with mu held.
func (s *evalStore) armExpiry(d time.Duration) { armTimer(&s.expiry, d, s.expire) }

// armTimer makes *t call f after d, creating it on first use. Its callers
// hold the store's mu.
func armTimer(t **time.Timer, d time.Duration, f func()) {
	if *t == nil {
		*t = time.AfterFunc(d, f)
		return
	}
	(*t).Reset(d)
}

// leaveUnlocking releases mu, which the caller holds, and lets items that
// were taken out of held leave; shutdown waits for them to be forwarded.
func (s *evalStore) leaveUnlocking(items []*admittedItem, why leaveReason) {
	s.workers.Add(1)
	s.mu.Unlock()
	defer s.workers.Done()
	for _, item := range items {
		s.leave(item, why)
	}
}

// expire lets every held item whose max_wait has passed leave, and arms
// the timer for the next one.
func (s *evalStore) expire() {
	s.mu.Lock()
	if s.phase != phaseRunning {
		s.mu.Unlock()
		return
	}
	now := time.Now()
	var leaving []*admittedItem
	for e := s.held.Front(); e != nil; e = s.held.Front() {
		item := e.Value.(*admittedItem)
		if now.Before(item.expiresAt) {
			s.armExpiry(item.expiresAt.Sub(now))
			break
		}
		s.held.Remove(e)
		item.elem = nil
		if s.waitsForPartner(item) {
			// Never dispatched: no evaluation will finish.
			item.pending = 0
			s.unfinished--
		}
		s.forgetCall(item, now)
		s.dispatchWaiting(item)
		s.skipUnapplied(item, now)
		leaving = append(leaving, item)
	}
	s.leaveUnlocking(leaving, leftMaxWait)
}

// work runs evaluations until the channel is closed at shutdown, parking
// in idle while the queue is empty.
func (s *evalStore) work() {
	defer s.workers.Done()
	wake := make(chan struct{}, 1)
	for {
		ev, ok, got := s.next(wake)
		if !ok {
			return
		}
		if !got {
			<-wake
			continue
		}
		s.finish(ev.item, ev.scorerIndex, s.run(ev))
	}
}

// next takes a queued evaluation (got), or parks wake in idle when the
// queue is empty; ok is false once the queue is closed. The second look
// is under mu, where dispatch queues and wakes, so no evaluation can be
// queued between that look and parking without waking a worker.
func (s *evalStore) next(wake chan struct{}) (ev evaluation, ok, got bool) {
	select {
	case ev, ok = <-s.evaluations:
		return ev, ok, ok
	default:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case ev, ok = <-s.evaluations:
		return ev, ok, ok
	default:
	}
	s.idle = append(s.idle, wake)
	return evaluation{}, true, false
}

// run runs one evaluation, bounded by its item's deadline.
func (s *evalStore) run(ev evaluation) evalResult {
	sc := s.scorers[ev.scorerIndex]
	if ev.skip {
		return evalResult{scorer: sc.cfg.Name, at: s.now(), skipped: true}
	}
	if ev.upFront != nil {
		return evalResult{scorer: sc.cfg.Name, at: s.now(), result: *ev.upFront}
	}
	var res scoring.Result
	switch {
	case s.runCtx.Err() != nil:
		res = errorResult(scoring.ErrorCanceled, errors.New("processor shutting down"))
	case !time.Now().Before(ev.item.deadline):
		res = errorResult(scoring.ErrorJudgeTimeout, errors.New("evaluation deadline passed before a worker was free"))
	default:
		ctx, cancel := context.WithDeadline(s.runCtx, ev.item.deadline)
		res = safeScore(ctx, sc.scorer, ev.c)
		cancel()
	}
	return evalResult{scorer: sc.cfg.Name, result: res, at: s.now(), ran: true}
}

// finish files a finished evaluation: onto the held item, which leaves
// when it was the last, or to the item's late method once it has left.
func (s *evalStore) finish(item *admittedItem, scorerIndex int, r evalResult) {
	s.mu.Lock()
	if s.phase == phaseClosed {
		// The item left at shutdown with the results it had.
		s.mu.Unlock()
		return
	}
	item.pending--
	if item.pending == 0 {
		s.unfinished--
	}
	held := item.elem != nil
	last := held && item.pending == 0
	if held {
		item.results[scorerIndex] = &r
	}
	if last {
		s.held.Remove(item.elem)
		item.elem = nil
		s.forgetCall(item, time.Now())
	}
	s.mu.Unlock()

	if !r.skipped {
		s.tel.recordResult(item.ctx, r)
		if held && !last && s.journal != nil {
			s.journal.finished(item, r) // the last leaves at once instead
		}
	}
	switch {
	case last:
		s.leave(item, leftComplete)
	case !held && !r.skipped:
		item.subject.late(item.ctx, r)
	}
}

// skipUnapplied gives each scorer that does not apply to a leaving item
// and has no result yet (its item waited for its other half or for
// context, or its skip is still queued) a skipped result, so that it
// leaves no marker, as on any item. Called with mu held.
func (s *evalStore) skipUnapplied(item *admittedItem, now time.Time) {
	sk, ok := item.subject.(scorerSkipper)
	if !ok {
		return
	}
	for i, sc := range s.scorers {
		if item.results[i] == nil && sk.skips(sc.cfg) {
			item.results[i] = &evalResult{scorer: sc.cfg.Name, at: now, skipped: true}
		}
	}
}

// leave sends an item on that has just been taken out of held: with a
// marker for each evaluation not finished, counted when it has no score.
func (s *evalStore) leave(item *admittedItem, why leaveReason) {
	results := make([]evalResult, len(item.results))
	scored, notScorable, unfinished := false, false, false
	applied := 0 // results of scorers that apply to the item
	for i, r := range item.results {
		if r == nil {
			unfinished = true
			applied++
			results[i] = unfinishedResult(s.scorers[i].cfg.Name, why, s.now())
			continue
		}
		results[i] = *r
		if r.skipped {
			continue
		}
		applied++
		switch r.label() {
		case scoring.LabelPass, scoring.LabelFail:
			scored = true
		case scoring.LabelNotScorable:
			notScorable = true
		}
	}
	if !scored && applied > 0 {
		switch {
		case unfinished:
			s.tel.spanUnscored(item.ctx, string(why))
		case notScorable:
			s.tel.spanUnscored(item.ctx, reasonNotScorable)
		default:
			s.tel.spanUnscored(item.ctx, reasonError)
		}
	}
	item.subject.leave(item.ctx, results)
	if s.journal != nil {
		s.journal.left(item) // after it was sent on: a crash in between sends it twice, never loses it
	}
}

// heldCount is the number of items held now.
func (s *evalStore) heldCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held.Len()
}

// queued is the number of evaluations waiting for a worker.
func (s *evalStore) queued() int {
	return len(s.evaluations)
}

// shutdown stops admitting, cancels the evaluations in flight, sends every
// held item on with the results it has, and waits for the workers until
// ctx ends.
func (s *evalStore) shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.phase == phaseClosed {
		s.mu.Unlock()
		return nil
	}
	wasRunning := s.phase == phaseRunning
	s.phase = phaseClosed
	var leaving []*admittedItem
	now := time.Now()
	for e := s.held.Front(); e != nil; e = e.Next() {
		item := e.Value.(*admittedItem)
		item.elem = nil
		s.skipUnapplied(item, now)
		leaving = append(leaving, item)
	}
	s.held.Init()
	if s.expiry != nil {
		s.expiry.Stop()
	}
	if s.callTimer != nil {
		s.callTimer.Stop()
	}
	s.waits.stop()
	s.mu.Unlock()
	if !wasRunning {
		return nil
	}

	s.cancel()
	for _, item := range leaving {
		s.leave(item, leftShutdown)
	}
	close(s.evaluations) // no sender left: admit checks the phase under mu
	s.mu.Lock()
	for len(s.idle) > 0 {
		s.wakeWorker() // each finds the queue closed
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.workers.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("llm_eval: shutdown: evaluations still running: %w", ctx.Err())
	}
}

// safeScore calls the scorer, turning a panic into an error result.
func safeScore(ctx context.Context, s scoring.Scorer, c scoring.Case) (res scoring.Result) {
	defer func() {
		if r := recover(); r != nil {
			res = errorResult(scoring.ErrorInvalidCase, fmt.Errorf("scorer panicked: %v", r))
		}
	}()
	return s.Score(ctx, c)
}

func errorResult(t scoring.ErrorType, err error) scoring.Result {
	return scoring.Result{Label: scoring.LabelError, Err: &scoring.Error{Type: t, Err: err}}
}

// unfinishedResult is the marker written for an evaluation that had not
// finished when its item left.
func unfinishedResult(scorer string, why leaveReason, at time.Time) evalResult {
	t, msg := scoring.ErrorMaxWaitExceeded, "max_wait passed before the evaluation finished"
	switch why {
	case leftShutdown:
		t, msg = scoring.ErrorShutdown, "the processor shut down before the evaluation finished"
	case leftRestarted:
		t, msg = scoring.ErrorRestarted, "the collector restarted after max_wait had passed; the evaluation did not finish before"
	}
	return evalResult{scorer: scorer, at: at, result: errorResult(t, errors.New(msg))}
}
