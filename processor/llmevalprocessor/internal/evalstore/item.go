package evalstore // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"

import (
	"container/list"
	"context"
	"time"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/logjoin"
	"github.com/llm-eval/llm_eval/scoring"
)

// State is where an admitted item is in its life.
type State uint8

// States of an item. A kind of wait before evaluation is one state
// between StateAdmitted and StateEvaluating, with its own bounded area and
// timer (contextwait.go, eventswait.go).
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
		s.forgetCall(it, now)
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
