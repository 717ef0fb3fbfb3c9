// Package pairing matches the two signals of one LLM call.
//
// Instrumentations of the GenAI conventions up to 1.36 (the official
// OpenTelemetry and the Elastic JavaScript OpenAI instrumentations among
// them) record a call as a span without its content, and the content as
// log events that carry the span's trace and span id. With llm_eval in a
// traces and a logs pipeline, the two halves of a call reach it on separate
// paths, in either order, seconds apart. A Table holds the half that came
// first while it waits for the other, tracks the calls being evaluated so
// that a late half joins the evaluation instead of starting a second one,
// and remembers for a while, in bounded memory, the calls that left, so
// that a half arriving after them is recognised as late.
//
// A Table is not safe for concurrent use: its owner guards it with its own
// lock, as the evaluation store does.
package pairing // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/pairing"

import (
	"container/list"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/recent"
)

// Key identifies one call: the trace and span id of its span, which its
// log events carry too.
type Key struct {
	TraceID pcommon.TraceID
	SpanID  pcommon.SpanID
}

// Valid reports whether the key can match anything: both ids are set.
func (k Key) Valid() bool { return !k.TraceID.IsEmpty() && !k.SpanID.IsEmpty() }

// Side is the signal a half came on.
type Side uint8

// Sides, usable as a set.
const (
	Span   Side = 1 << iota // the span, in a traces pipeline
	Events                  // the GenAI log events, in a logs pipeline
)

// State is what a Table knows of a call.
type State uint8

// States of a call.
const (
	Unknown State = iota // never seen, or forgotten
	Waiting              // one half came and waits for the other
	Active               // being evaluated: a half arriving joins it
	Left                 // has left: a half arriving now is late
)

// Table tracks the calls of one evaluator by key; T is the owner's item.
type Table[T any] struct {
	wait     time.Duration
	remember time.Duration
	calls    map[Key]*call[T]
	waiting  list.List // of *call[T] in Waiting, oldest first
	left     recent.Set[half]
}

type call[T any] struct {
	key   Key
	sides Side
	item  T
	until time.Time     // end of the wait, while Waiting
	elem  *list.Element // in waiting, while Waiting
}

// half is one side of a call that left.
type half struct {
	key  Key
	side Side
}

// New returns a Table whose halves wait for their partner up to wait, and
// that remembers the halves of calls that left for remember, at most
// rememberMax of them.
func New[T any](wait, remember time.Duration, rememberMax int) *Table[T] {
	return &Table[T]{
		wait:     wait,
		remember: remember,
		calls:    make(map[Key]*call[T]),
		left:     recent.New[half](rememberMax),
	}
}

// State returns the call's state, the sides seen and, unless the call is
// Unknown or Left, its item. A Left call reports the sides that left.
func (t *Table[T]) State(k Key, now time.Time) (st State, sides Side, item T) {
	if c, ok := t.calls[k]; ok {
		if c.elem != nil {
			return Waiting, c.sides, c.item
		}
		return Active, c.sides, c.item
	}
	t.left.Forget(now)
	for _, s := range [...]Side{Span, Events} {
		if t.left.Has(half{k, s}) {
			sides |= s
		}
	}
	if sides != 0 {
		return Left, sides, item
	}
	return Unknown, 0, item
}

// Wait records a new call seen on side, whose item waits for the other
// side until now plus the Table's wait.
func (t *Table[T]) Wait(k Key, side Side, item T, now time.Time) {
	c := &call[T]{key: k, sides: side, item: item, until: now.Add(t.wait)}
	c.elem = t.waiting.PushBack(c)
	t.calls[k] = c
}

// Track records a new call seen on side whose item is evaluated at once:
// the other side joins it if it comes before the call leaves.
func (t *Table[T]) Track(k Key, side Side, item T) {
	t.calls[k] = &call[T]{key: k, sides: side, item: item}
}

// Join adds side to a Waiting or Active call and returns its item; a
// Waiting call becomes Active. It reports false when the call is not held
// or already has that side.
func (t *Table[T]) Join(k Key, side Side) (item T, ok bool) {
	c, held := t.calls[k]
	if !held || c.sides&side != 0 {
		return item, false
	}
	c.sides |= side
	if c.elem != nil {
		t.waiting.Remove(c.elem)
		c.elem = nil
	}
	return c.item, true
}

// Leave forgets a held call and remembers its sides as Left until now
// plus the Table's remember duration.
func (t *Table[T]) Leave(k Key, now time.Time) {
	c, ok := t.calls[k]
	if !ok {
		return
	}
	if c.elem != nil {
		t.waiting.Remove(c.elem)
	}
	delete(t.calls, k)
	for _, s := range [...]Side{Span, Events} {
		if c.sides&s != 0 {
			t.left.Add(half{k, s}, now.Add(t.remember))
		}
	}
}

// Expire makes the Waiting calls whose wait has passed by now Active and
// returns their items, oldest first: their partner did not come in time.
func (t *Table[T]) Expire(now time.Time) []T {
	var out []T
	for e := t.waiting.Front(); e != nil; e = t.waiting.Front() {
		c := e.Value.(*call[T])
		if now.Before(c.until) {
			break
		}
		t.waiting.Remove(e)
		c.elem = nil
		out = append(out, c.item)
	}
	return out
}

// NextExpiry is when the oldest Waiting call's wait ends; ok is false when
// no call waits.
func (t *Table[T]) NextExpiry() (at time.Time, ok bool) {
	if e := t.waiting.Front(); e != nil {
		return e.Value.(*call[T]).until, true
	}
	return time.Time{}, false
}

// Held is the number of Waiting and Active calls.
func (t *Table[T]) Held() int { return len(t.calls) }
