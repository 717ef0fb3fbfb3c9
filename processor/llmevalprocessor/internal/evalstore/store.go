package evalstore // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llm-eval/llm_eval/scoring"
)

// AdmitResult says what the store did with an item offered to it.
type AdmitResult int

// What Admit and AdmitHalf did.
const (
	Admitted       AdmitResult = iota
	NotRunning                 // before Start: the item is not evaluated
	RejectedFull               // queue_size items have unfinished evaluations
	RejectedClosed             // after Shutdown
	// JoinedPartner: a half admitted into its other half's item.
	JoinedPartner
	// LateHalf: its call already left; not evaluated.
	LateHalf
	// Unjoinable: a half without content that cannot wait for its other
	// half (ids that match nothing, or a second copy of a half already
	// held): not admitted, not scorable as without joining.
	Unjoinable
	// WaitingAreaFull: a span without content found the area of spans
	// waiting for their events full (log_events.max_waiting_spans or
	// max_waiting_bytes): not admitted, not scorable.
	WaitingAreaFull
	// NoEventsExpected: a span without content of a service that is known
	// to send no events (content capture off): not admitted, not scorable.
	NoEventsExpected
)

// Why an item left without any score (Observer.Unscored), and the markers
// of evaluations not finished when it left.
const (
	ReasonMaxWait     = "max_wait"
	ReasonShutdown    = "shutdown"
	ReasonRestarted   = "restarted" // found in storage at start after max_wait
	ReasonNotScorable = "not_scorable"
	ReasonError       = "error"
	ReasonQueueFull   = "queue_full"
)

// leaveReason says why an item left before all its results were in.
type leaveReason string

const (
	leftComplete  leaveReason = ""
	leftMaxWait   leaveReason = ReasonMaxWait
	leftShutdown  leaveReason = ReasonShutdown
	leftRestarted leaveReason = ReasonRestarted
	leftQueueFull leaveReason = ReasonQueueFull // its events came with queue_size full
)

// Settings configure a Store.
type Settings struct {
	MaxWait time.Duration
	// EvalTimeout: an evaluation's deadline is MaxWait + EvalTimeout
	// after admission.
	EvalTimeout time.Duration
	Capacity    int           // queue_size: items with unfinished evaluations
	Workers     int           // max_concurrency
	ContextWait time.Duration // trace_context.context_wait; 0: no wait
	EventWaits  EventWaits    // the area of spans waiting for their log events
	Now         func() time.Time
	Observer    Observer
}

// Store owns every admitted item from admission until its last evaluation
// has finished. An item is held until all its results are in, max_wait
// has passed or the store shuts down, whichever comes first; it leaves
// exactly once. Results finishing after that go to the item's Late method;
// results finishing after shutdown are dropped.
//
// One mutex guards all state. max_wait is the same for every item, so
// admission order is expiry order: held items sit in a list in that order
// and one timer, armed for the oldest, lets them go.
type Store struct {
	maxWait     time.Duration
	evalTimeout time.Duration
	capacity    int
	workerCount int
	now         func() time.Time // timestamps of results
	obs         Observer
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
	// workers counts worker goroutines and leaving runs in progress.
	workers sync.WaitGroup

	mu         sync.Mutex
	phase      phase
	scorers    []Scorer    // set by Start, then immutable
	held       list.List   // of *item not yet left, oldest first
	unfinished int         // admitted items with evaluations not finished
	expiry     *time.Timer // fires at the oldest held item's max_wait
	runCtx     context.Context
	cancel     context.CancelFunc
	// Items waiting for their trace's context (item.go).
	contextWait time.Duration
	waits       contextWaits
	// Calls seen on one signal waiting for, or joined by, the other
	// (pairs.go); nil unless JoinSignals was called.
	calls     *callTable
	callTimer *time.Timer
	joining   atomic.Bool // calls is set: read without mu on the hot path
	// Spans without content waiting for their log events (eventswait.go).
	eventWaits eventWaits
	// journal keeps admitted items in storage; nil when storage is off.
	journal Journal
}

type phase int

const (
	phaseNew phase = iota
	phaseRunning
	phaseClosed
)

// New returns a store that admits nothing until Start.
func New(set Settings) *Store {
	now := set.Now
	if now == nil {
		now = time.Now
	}
	return &Store{
		maxWait:     set.MaxWait,
		evalTimeout: set.EvalTimeout,
		capacity:    set.Capacity,
		workerCount: set.Workers,
		now:         now,
		obs:         set.Observer,
		contextWait: set.ContextWait,
		eventWaits:  eventWaits{limits: set.EventWaits},
	}
}

// Start begins running evaluations with the given scorers; journal, when
// not nil, keeps the admitted items in storage.
func (s *Store) Start(scorers []Scorer, journal Journal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase != phaseNew {
		return
	}
	s.scorers = scorers
	s.journal = journal
	s.evaluations = make(chan evaluation, s.capacity*len(scorers))
	// Workers outlive Start's context: they get their own.
	s.runCtx, s.cancel = context.WithCancel(context.Background())
	s.phase = phaseRunning
	for range s.workerCount {
		s.workers.Add(1)
		go s.work()
	}
}

// Admit takes an item and dispatches its evaluations. newSubject is called
// only when the item is admitted (moving a span out of its batch is part
// of it). ctx is the request the item came with; only its client.Info is
// kept.
func (s *Store) Admit(ctx context.Context, newSubject func() Subject) AdmitResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	if res := s.refusal(); res != Admitted {
		return res
	}
	s.begin(s.hold(ctx, newSubject()))
	return Admitted
}

// refusal says why the store cannot take an item now, or Admitted when it
// can. Called with mu held.
func (s *Store) refusal() AdmitResult {
	switch {
	case s.phase == phaseNew:
		return NotRunning
	case s.phase == phaseClosed:
		return RejectedClosed
	case s.unfinished >= s.capacity:
		return RejectedFull
	}
	return Admitted
}

// wakeWorker wakes the most recently parked worker, if any. Called with mu
// held.
func (s *Store) wakeWorker() {
	if n := len(s.idle); n > 0 {
		s.idle[n-1] <- struct{}{}
		s.idle = s.idle[:n-1]
	}
}

// armExpiry makes the timer fire after d. Called with mu held.
func (s *Store) armExpiry(d time.Duration) {
	armTimer(&s.expiry, d, func() { s.Expire(time.Now()) })
}

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
func (s *Store) leaveUnlocking(items []*item, why leaveReason) {
	s.workers.Add(1)
	s.mu.Unlock()
	defer s.workers.Done()
	for _, it := range items {
		s.leave(it, why)
	}
}

// Expire lets every held item whose max_wait has passed at now leave, and
// arms the timer for the next one. The store's timer calls it with the
// current time.
func (s *Store) Expire(now time.Time) {
	s.mu.Lock()
	if s.phase != phaseRunning {
		s.mu.Unlock()
		return
	}
	var leaving []*item
	for e := s.held.Front(); e != nil; e = s.held.Front() {
		it := e.Value.(*item)
		if now.Before(it.expiresAt) {
			s.armExpiry(it.expiresAt.Sub(now))
			break
		}
		waiting := it.state == StateWaitingForContext
		s.moveTo(it, StateLeft, now)
		if waiting {
			// Its results follow as late results.
			s.contextWaitEnded(it, false)
		}
		s.skipUnapplied(it, now)
		leaving = append(leaving, it)
	}
	s.leaveUnlocking(leaving, leftMaxWait)
}

// work runs evaluations until the channel is closed at shutdown, parking
// in idle while the queue is empty.
func (s *Store) work() {
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
func (s *Store) next(wake chan struct{}) (ev evaluation, ok, got bool) {
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
func (s *Store) run(ev evaluation) Result {
	sc := s.scorers[ev.scorerIndex]
	if ev.skip {
		return Result{Scorer: sc.Name, At: s.now(), Skipped: true}
	}
	if ev.upFront != nil {
		return Result{Scorer: sc.Name, At: s.now(), Result: *ev.upFront}
	}
	var res scoring.Result
	switch {
	case s.runCtx.Err() != nil:
		res = ErrorResult(scoring.ErrorCanceled, errors.New("processor shutting down"))
	case !time.Now().Before(ev.item.deadline):
		res = ErrorResult(scoring.ErrorJudgeTimeout, errors.New("evaluation deadline passed before a worker was free"))
	default:
		ctx, cancel := context.WithDeadline(s.runCtx, ev.item.deadline)
		res = safeScore(ctx, sc.Run, ev.c)
		cancel()
	}
	return Result{Scorer: sc.Name, Result: res, At: s.now(), Ran: true}
}

// finish files a finished evaluation: onto the held item, which leaves
// when it was the last, or to the item's Late method once it has left.
func (s *Store) finish(it *item, scorerIndex int, r Result) {
	s.mu.Lock()
	if s.phase == phaseClosed {
		// The item left at shutdown with the results it had.
		s.mu.Unlock()
		return
	}
	it.pending--
	if it.pending == 0 {
		s.unfinished--
	}
	held := it.state != StateLeft
	last := held && it.pending == 0
	if held {
		it.results[scorerIndex] = &r
	}
	if last {
		s.moveTo(it, StateLeft, time.Now())
	}
	s.mu.Unlock()

	if !r.Skipped {
		s.obs.Result(it.ctx, r)
		if held && !last && s.journal != nil && it.stored != 0 {
			s.journal.Finished(it.stored, r) // the last leaves at once instead
		}
	}
	switch {
	case last:
		s.leave(it, leftComplete)
	case !held && !r.Skipped:
		it.subject.Late(it.ctx, r)
	}
}

// skipUnapplied gives each scorer that does not apply to a leaving item
// and has no result yet (its item waited for its other half or for
// context, or its skip is still queued) a skipped result, so that it
// leaves no marker, as on any item. Called with mu held.
func (s *Store) skipUnapplied(it *item, now time.Time) {
	for i, sc := range s.scorers {
		if it.results[i] == nil && it.subject.Skips(sc) {
			it.results[i] = &Result{Scorer: sc.Name, At: now, Skipped: true}
		}
	}
}

// leave sends an item on that has just been taken out of held: with a
// marker for each evaluation not finished, counted when it has no score.
func (s *Store) leave(it *item, why leaveReason) {
	results := make([]Result, len(it.results))
	scored, notScorable, unfinished := false, false, false
	applied := 0 // results of scorers that apply to the item
	for i, r := range it.results {
		if r == nil {
			unfinished = true
			applied++
			results[i] = unfinishedResult(s.scorers[i].Name, why, s.now())
			continue
		}
		results[i] = *r
		if r.Skipped {
			continue
		}
		applied++
		switch r.Label() {
		case scoring.LabelPass, scoring.LabelFail:
			scored = true
		case scoring.LabelNotScorable:
			notScorable = true
		}
	}
	if !scored && applied > 0 {
		switch {
		case why == leftQueueFull:
			s.obs.Unscored(it.ctx, ReasonQueueFull)
		case unfinished:
			s.obs.Unscored(it.ctx, string(why))
		case notScorable:
			s.obs.Unscored(it.ctx, ReasonNotScorable)
		default:
			s.obs.Unscored(it.ctx, ReasonError)
		}
	}
	it.subject.Leave(it.ctx, results)
	if s.journal != nil && it.stored != 0 {
		s.journal.Left(it.stored) // after it was sent on: a crash in between sends it twice, never loses it
	}
}

// HeldCount is the number of items held now.
func (s *Store) HeldCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held.Len()
}

// Queued is the number of evaluations waiting for a worker.
func (s *Store) Queued() int {
	return len(s.evaluations)
}

// Stats is a snapshot of the store's counts.
type Stats struct {
	Held              int // items held
	Unfinished        int // items with evaluations not finished
	Results           int // results filed on held items
	WaitingForContext int // items waiting for their trace's context
	WaitingForEvents  int // spans waiting for their log events (outside Unfinished)
	IdleWorkers       int // workers parked on an empty queue
}

// Stats counts the store's items now.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Held: s.held.Len(), Unfinished: s.unfinished, WaitingForContext: s.waits.order.Len(), WaitingForEvents: s.eventWaits.count, IdleWorkers: len(s.idle)}
	for e := s.held.Front(); e != nil; e = e.Next() {
		for _, r := range e.Value.(*item).results {
			if r != nil {
				st.Results++
			}
		}
	}
	return st
}

// Shutdown stops admitting, cancels the evaluations in flight, sends every
// held item on with the results it has, and waits for the workers until
// ctx ends.
func (s *Store) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.phase == phaseClosed {
		s.mu.Unlock()
		return nil
	}
	wasRunning := s.phase == phaseRunning
	s.phase = phaseClosed
	var leaving []*item
	now := time.Now()
	for e := s.held.Front(); e != nil; e = s.held.Front() {
		it := e.Value.(*item)
		s.moveTo(it, StateLeft, now)
		s.skipUnapplied(it, now)
		leaving = append(leaving, it)
	}
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
	for _, it := range leaving {
		s.leave(it, leftShutdown)
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

// Wait waits until every worker and every item leaving has ended: after
// a Shutdown whose context ended first, for an evaluation that outlived
// it.
func (s *Store) Wait() { s.workers.Wait() }

// safeScore calls the scorer, turning a panic into an error result.
func safeScore(ctx context.Context, s scoring.Scorer, c scoring.Case) (res scoring.Result) {
	defer func() {
		if r := recover(); r != nil {
			res = ErrorResult(scoring.ErrorInvalidCase, fmt.Errorf("scorer panicked: %v", r))
		}
	}()
	return s.Score(ctx, c)
}
