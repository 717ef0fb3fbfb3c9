package evalstore // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"

// The call table matches the two signals of one LLM call (pairs.go).
//
// Instrumentations of the GenAI conventions up to 1.36 (the official
// OpenTelemetry and the Elastic JavaScript OpenAI instrumentations among
// them) record a call as a span without its content, and the content as
// log events that carry the span's trace and span id. With llm_eval in a
// traces and a logs pipeline, the two halves of a call reach it on separate
// paths, in either order, seconds apart. The table holds the half that came
// first while it waits for the other, tracks the calls being evaluated so
// that a late half joins the evaluation instead of starting a second one,
// and remembers for a while, in bounded memory, the calls that left, so
// that a half arriving after them is recognised as late.

import (
	"container/list"
	"time"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/logjoin"
)

// Side is the signal a half came on.
type Side uint8

// Sides, usable as a set.
const (
	SideSpan   Side = 1 << iota // the span, in a traces pipeline
	SideEvents                  // the GenAI log events, in a logs pipeline
)

// callState is what the call table knows of a call.
type callState uint8

// States of a call.
const (
	callUnknown callState = iota // never seen, or forgotten
	callWaiting                  // one half came and waits for the other
	callActive                   // being evaluated: a half arriving joins it
	callLeft                     // has left: a half arriving now is late
)

// callTable tracks the calls of one store by key, each with the item that
// evaluates it. It is guarded by the store's mu.
type callTable struct {
	wait     time.Duration
	remember time.Duration
	calls    map[logjoin.Key]*call
	waiting  list.List // of *call in callWaiting, oldest first
	left     logjoin.RecentSet[leftHalf]
}

type call struct {
	key   logjoin.Key
	sides Side
	item  *item
	until time.Time     // end of the wait, while callWaiting
	elem  *list.Element // in waiting, while callWaiting
}

// leftHalf is one side of a call that left.
type leftHalf struct {
	key  logjoin.Key
	side Side
}

// newCallTable returns a table whose halves wait for their partner up to
// wait, and that remembers the halves of calls that left for remember, at
// most rememberMax of them.
func newCallTable(wait, remember time.Duration, rememberMax int) *callTable {
	return &callTable{
		wait:     wait,
		remember: remember,
		calls:    make(map[logjoin.Key]*call),
		left:     logjoin.NewRecentSet[leftHalf](rememberMax),
	}
}

// state returns the call's state, the sides seen and, unless the call is
// callUnknown or callLeft, its item. A callLeft call reports the sides that left.
func (t *callTable) state(k logjoin.Key, now time.Time) (st callState, sides Side, it *item) {
	if c, ok := t.calls[k]; ok {
		if c.elem != nil {
			return callWaiting, c.sides, c.item
		}
		return callActive, c.sides, c.item
	}
	t.left.Forget(now)
	for _, s := range [...]Side{SideSpan, SideEvents} {
		if t.left.Has(leftHalf{k, s}) {
			sides |= s
		}
	}
	if sides != 0 {
		return callLeft, sides, nil
	}
	return callUnknown, 0, nil
}

// hold records a new call seen on side, whose item waits for the other
// side until now plus the table's wait.
func (t *callTable) hold(k logjoin.Key, side Side, it *item, now time.Time) {
	c := &call{key: k, sides: side, item: it, until: now.Add(t.wait)}
	c.elem = t.waiting.PushBack(c)
	t.calls[k] = c
}

// track records a new call seen on side whose item is evaluated at once:
// the other side joins it if it comes before the call leaves.
func (t *callTable) track(k logjoin.Key, side Side, it *item) {
	t.calls[k] = &call{key: k, sides: side, item: it}
}

// join adds side to a callWaiting or callActive call and returns its item; a
// callWaiting call becomes callActive. It reports false when the call is not held
// or already has that side.
func (t *callTable) join(k logjoin.Key, side Side) (it *item, ok bool) {
	c, held := t.calls[k]
	if !held || c.sides&side != 0 {
		return nil, false
	}
	c.sides |= side
	if c.elem != nil {
		t.waiting.Remove(c.elem)
		c.elem = nil
	}
	return c.item, true
}

// leave forgets a held call and remembers its sides as callLeft until now
// plus the table's remember duration.
func (t *callTable) leave(k logjoin.Key, now time.Time) {
	c, ok := t.calls[k]
	if !ok {
		return
	}
	if c.elem != nil {
		t.waiting.Remove(c.elem)
	}
	delete(t.calls, k)
	for _, s := range [...]Side{SideSpan, SideEvents} {
		if c.sides&s != 0 {
			t.left.Add(leftHalf{k, s}, now.Add(t.remember))
		}
	}
}

// expire makes the callWaiting calls whose wait has passed by now callActive and
// returns their items, oldest first: their partner did not come in time.
func (t *callTable) expire(now time.Time) []*item {
	var out []*item
	for e := t.waiting.Front(); e != nil; e = t.waiting.Front() {
		c := e.Value.(*call)
		if now.Before(c.until) {
			break
		}
		t.waiting.Remove(e)
		c.elem = nil
		out = append(out, c.item)
	}
	return out
}

// nextExpiry is when the oldest callWaiting call's wait ends; ok is false when
// no call waits.
func (t *callTable) nextExpiry() (at time.Time, ok bool) {
	if e := t.waiting.Front(); e != nil {
		return e.Value.(*call).until, true
	}
	return time.Time{}, false
}

// held is the number of callWaiting and callActive calls.
func (t *callTable) held() int { return len(t.calls) }
