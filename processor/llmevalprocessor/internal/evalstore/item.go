package evalstore // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"

import (
	"container/list"
	"context"
	"time"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/pairing"
	"github.com/llm-eval/llm_eval/scoring"
)

// State is where an admitted item is in its life.
type State uint8

// States of an item. A new kind of wait before evaluation (such as an area
// for items waiting for their log events) is one more state between
// StateAdmitted and StateEvaluating, with its own bounded area and timer as
// StateWaitingForContext has in contextwait.go.
const (
	// StateAdmitted: held, its evaluations not yet dispatched; an item passes
	// through it within the call that admits it.
	StateAdmitted State = iota
	// StatePairing: one half of a call seen on both signals, waiting for the
	// other half; none of its evaluations is dispatched.
	StatePairing
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
	case StateWaitingForContext:
		return "waiting_for_context"
	case StateEvaluating:
		return "evaluating"
	case StateLeft:
		return "left"
	}
	return "unknown"
}

// item is one subject in the store.
type item[C any] struct {
	subject Subject[C]
	state   State
	// ctx carries the client.Info of the request the item came with, and
	// nothing else: the request itself has long been answered.
	ctx       context.Context
	admitted  time.Time
	expiresAt time.Time // admission + max_wait
	deadline  time.Time // no evaluation of this item runs past it
	results   []*Result
	pending   int             // evaluations not finished
	elem      *list.Element   // in held while the item has not left
	wait      *waitingItem[C] // set while StateWaitingForContext
	// call is the item's key in the table of calls seen on both signals
	// (pairs.go); zero when it is not in the table.
	call   pairing.Key
	stored uint64 // its id in the journal; 0 when not stored
}

// evaluation is one (item, scorer) job for the worker pool.
type evaluation[C any] struct {
	item        *item[C]
	scorerIndex int
	c           scoring.Case
	skip        bool // the scorer does not apply: no call, a skipped result
	// upFront is the result the subject already has for the scorer
	// (UpFronter): no call.
	upFront *scoring.Result
}
