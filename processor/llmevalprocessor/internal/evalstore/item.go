package evalstore // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"

import (
	"container/list"
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/logjoin"
	"github.com/llm-eval/llm_eval/scoring"
)

// State is where an admitted item is in its life.
type State uint8

// States of an item. A kind of wait before evaluation is one state
// between StateAdmitted and StateEvaluating, with its own bounded area and
// timer (item.go, eventswait.go).
const (
	// StateAdmitted: held, its evaluations not yet dispatched; an item passes
	// through it within the call that admits it.
	StateAdmitted State = iota
	// StatePairing: log events of a call seen on both signals, waiting for
	// its span; none of its evaluations is dispatched. It holds a
	// queue_size slot: it is evaluated alone if the span does not come.
	StatePairing
	// StateWaitingForEvents: a span without content waiting for the log
	// events that carry its content, in the waiting area (eventswait.go),
	// outside queue_size; none of its evaluations is dispatched.
	StateWaitingForEvents
	// StateWaitingForContext: the evaluations of the scorers that read its
	// trace's context wait for it (context_wait); the others run.
	StateWaitingForContext
	// StateEvaluating: every evaluation is dispatched; the item leaves with the
	// last result.
	StateEvaluating
	// StateLeft: sent on; a result finishing now is late.
	StateLeft
)

func (s State) String() string {
	switch s {
	case StateAdmitted:
		return "admitted"
	case StatePairing:
		return "pairing"
	case StateWaitingForEvents:
		return "waiting_for_events"
	case StateWaitingForContext:
		return "waiting_for_context"
	case StateEvaluating:
		return "evaluating"
	case StateLeft:
		return "left"
	}
	return "unknown"
}

// moveTo is the one place where an item changes state. It keeps what each
// state holds in step with the item: the waiting area's count and bytes
// (StateWaitingForEvents), the context waits (StateWaitingForContext), the
// held list and the call table (StateLeft), and queue_size's count of
// items with unfinished evaluations, which an item waiting for its events
// is out of and which an item leaving before any evaluation was
// dispatched (StateAdmitted, StatePairing, StateWaitingForEvents) gives
// back. What a change of state sets off, dispatching evaluations or
// telling the observer, is the caller's. Called with mu held.
func (s *Store) moveTo(it *item, to State, now time.Time) {
	from := it.state
	switch from {
	case StateWaitingForEvents:
		s.eventWaits.count--
		s.eventWaits.bytes -= it.waitBytes
		it.waitBytes = 0
		s.unfinished++ // it counts against queue_size again
	case StateWaitingForContext:
		s.waits.remove(it.wait)
	}
	it.state = to
	switch to {
	case StateWaitingForEvents:
		s.unfinished--
		s.eventWaits.count++
		s.eventWaits.bytes += it.waitBytes
	case StateWaitingForContext:
		s.waits.add(it.wait)
	case StateLeft:
		if it.elem != nil {
			s.held.Remove(it.elem)
			it.elem = nil
		}
		if s.calls != nil && it.call.Valid() {
			s.calls.leave(it.call, now) // its halves are remembered as left
		}
		switch from {
		case StateAdmitted, StatePairing, StateWaitingForEvents:
			// None of its evaluations was dispatched: none will finish.
			it.pending = 0
			s.unfinished--
		}
	}
}

// item is one subject in the store.
type item struct {
	subject Subject
	state   State
	// ctx carries the client.Info of the request the item came with, and
	// nothing else: the request itself has long been answered.
	ctx       context.Context
	admitted  time.Time
	expiresAt time.Time // admission + max_wait
	deadline  time.Time // no evaluation of this item runs past it
	results   []*Result
	pending   int           // evaluations not finished
	elem      *list.Element // in held while the item has not left
	wait      *waitingItem  // set while StateWaitingForContext
	// call is the item's key in the table of calls seen on both signals
	// (pairs.go); zero when it is not in the table.
	call   logjoin.Key
	stored uint64 // its id in the journal; 0 when not stored
	// Set while StateWaitingForEvents: its estimated bytes, the service
	// and library that sent it, and its reason if its events do not come.
	waitBytes int
	source    string
	library   string
	noEvents  string
}

// evaluation is one (item, scorer) job for the worker pool.
type evaluation struct {
	item        *item
	scorerIndex int
	c           scoring.Case
	skip        bool // the scorer does not apply: no call, a skipped result
	// upFront is the result the subject already has for the scorer
	// (UpFronter): no call.
	upFront *scoring.Result
}

// hold makes an item of subject and holds it until it leaves; its
// evaluations are not dispatched yet. Called with mu held, after refusal
// said Admitted.
func (s *Store) hold(ctx context.Context, subject Subject) *item {
	now := time.Now()
	it := &item{
		subject:   subject,
		state:     StateAdmitted,
		ctx:       client.NewContext(context.Background(), client.FromContext(ctx)),
		admitted:  now,
		expiresAt: now.Add(s.maxWait),
		deadline:  now.Add(s.maxWait + s.evalTimeout),
		results:   make([]*Result, len(s.scorers)),
		pending:   len(s.scorers),
	}
	it.elem = s.held.PushBack(it)
	s.unfinished++
	if s.held.Len() == 1 {
		s.armExpiry(s.maxWait)
	}
	if s.journal != nil {
		it.stored = s.journal.Admitted(subject, now) // stored before the admitting call returns
	}
	return it
}

// begin dispatches a held item's evaluations, or parks it until its
// trace's context arrives. Called with mu held.
func (s *Store) begin(it *item) {
	now := time.Now()
	if !s.parkForContext(it, now) {
		s.moveTo(it, StateEvaluating, now)
		s.dispatch(it)
	}
}

// dispatch builds the item's cases and queues its evaluations. Called
// with mu held.
func (s *Store) dispatch(it *item) {
	for i := range s.scorers {
		s.dispatchScorer(it, i)
	}
}

// dispatchWaited dispatches the item's evaluations by scorers that wait
// (waiters) or the others, which do not wait. Called with mu held.
func (s *Store) dispatchWaited(it *item, waiters bool) {
	for i, sc := range s.scorers {
		if sc.Waits() == waiters {
			s.dispatchScorer(it, i)
		}
	}
}

// dispatchScorer builds the item's case for one scorer and queues it,
// unless the item has its result already (recorded in storage before a
// restart): its pending count does not include it. Called with mu held.
func (s *Store) dispatchScorer(it *item, i int) {
	if it.results[i] != nil {
		return
	}
	sc := s.scorers[i]
	ev := evaluation{item: it, scorerIndex: i}
	if it.subject.Skips(sc) {
		ev.skip = true
	} else if uf, ok := it.subject.(UpFronter); ok {
		if r, ok := uf.ResultUpFront(sc); ok {
			res := r // allocated only here, not on every dispatch
			ev.upFront = &res
		}
	}
	if !ev.skip && ev.upFront == nil {
		ev.c = it.subject.Case(sc)
	}
	select {
	case s.evaluations <- ev:
		s.wakeWorker()
	default: // cannot happen: capacity covers every admitted item's evaluations
		it.pending--
		it.results[i] = &Result{Scorer: sc.Name, At: s.now(),
			Result: ErrorResult(scoring.ErrorBudgetExceeded, errors.New("evaluation queue full"))}
	}
}

// Waiting for context (StateWaitingForContext).

// waitingItem is an item parked until its trace gains context or
// context_wait passes.
type waitingItem struct {
	item  *item
	trace pcommon.TraceID
	until time.Time
	elem  *list.Element // in contextWaits.order
}

// contextWaits holds the parked items of a Store, guarded by its mu.
// context_wait is the same for every item, so parking order is expiry
// order: one list and one timer, as for max_wait.
type contextWaits struct {
	order   list.List // of *waitingItem, oldest first
	byTrace map[pcommon.TraceID][]*waitingItem
	timer   *time.Timer
}

func (w *contextWaits) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
	w.order.Init()
	w.byTrace = nil
}

// add parks one item. Called with the store's mu held.
func (w *contextWaits) add(wi *waitingItem) {
	wi.elem = w.order.PushBack(wi)
	if w.byTrace == nil {
		w.byTrace = make(map[pcommon.TraceID][]*waitingItem)
	}
	w.byTrace[wi.trace] = append(w.byTrace[wi.trace], wi)
}

// remove unparks one item. Called with the store's mu held.
func (w *contextWaits) remove(wi *waitingItem) {
	w.order.Remove(wi.elem)
	items := w.byTrace[wi.trace]
	for i, other := range items {
		if other == wi {
			items = append(items[:i], items[i+1:]...)
			break
		}
	}
	if len(items) == 0 {
		delete(w.byTrace, wi.trace)
	} else {
		w.byTrace[wi.trace] = items
	}
	wi.item.wait = nil
}

// parkForContext parks a just-admitted item whose subject has no context
// yet but needs it, and reports whether it did. The evaluations of scorers
// that do not wait are dispatched at once. Called with mu held.
func (s *Store) parkForContext(it *item, now time.Time) bool {
	if s.contextWait <= 0 {
		return false
	}
	cw, ok := it.subject.(ContextWaiter)
	if !ok {
		return false
	}
	trace, wait := cw.WaitsForContext()
	if !wait {
		return false
	}
	it.wait = &waitingItem{item: it, trace: trace, until: now.Add(s.contextWait)}
	s.moveTo(it, StateWaitingForContext, now)
	if s.waits.order.Len() == 1 {
		s.armContextWait(s.contextWait)
	}
	s.dispatchWaited(it, false)
	return true
}

// contextWaitEnded dispatches the evaluations of an item that waited for
// context, which it no longer does; arrived says whether the context
// came. Called with mu held.
func (s *Store) contextWaitEnded(it *item, arrived bool) {
	s.obs.ContextWaitEnded(it.ctx, arrived)
	s.dispatchWaited(it, true)
}

// ContextMayHaveArrived dispatches the items of the given traces that
// waited for context and now have some: their trace gained documents, or
// links that connect them to documents it already had.
func (s *Store) ContextMayHaveArrived(traces []pcommon.TraceID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase != phaseRunning {
		return
	}
	for _, trace := range traces {
		waiting := s.waits.byTrace[trace]
		if len(waiting) == 0 {
			continue
		}
		for _, wi := range append([]*waitingItem(nil), waiting...) {
			if _, still := wi.item.subject.(ContextWaiter).WaitsForContext(); still {
				continue
			}
			s.moveTo(wi.item, StateEvaluating, time.Now())
			s.contextWaitEnded(wi.item, true)
		}
	}
}

// armContextWait makes the wait timer fire after d. Called with mu held.
func (s *Store) armContextWait(d time.Duration) {
	armTimer(&s.waits.timer, d, s.contextWaitExpired)
}

// contextWaitExpired dispatches every parked item whose context_wait has
// passed, without the context it waited for.
func (s *Store) contextWaitExpired() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase != phaseRunning {
		return
	}
	now := time.Now()
	for e := s.waits.order.Front(); e != nil; e = s.waits.order.Front() {
		wi := e.Value.(*waitingItem)
		if now.Before(wi.until) {
			s.armContextWait(wi.until.Sub(now))
			break
		}
		s.moveTo(wi.item, StateEvaluating, now)
		s.contextWaitEnded(wi.item, false)
	}
}
