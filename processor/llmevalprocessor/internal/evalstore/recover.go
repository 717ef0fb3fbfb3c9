package evalstore // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"

import (
	"context"
	"time"
)

// Recovered is an item found in storage at start.
type Recovered struct {
	ID       uint64    // its id in the journal
	Admitted time.Time // its first admission
	Results  []Result  // the results recorded before the restart
}

// Recover takes an item found in storage at start. While its max_wait
// (counted from its first admission) has not passed and the store has
// room, it goes back into the store with its recorded results and the
// missing evaluations are dispatched; it keeps its place in storage. A
// Pair goes back into the call table: a half waits for its other half
// again. Otherwise the item is forwarded with the results it has and a
// restarted marker for each scorer that applies and has none, from a
// goroutine, so the caller does not wait for the consumers.
func (s *Store) Recover(subject Subject, rec Recovered) {
	recorded := make(map[string]Result, len(rec.Results))
	for _, r := range rec.Results {
		recorded[r.Scorer] = r
	}
	ctx := context.Background() // the request's client.Info is not stored
	s.mu.Lock()
	now := time.Now()
	results := make([]*Result, len(s.scorers))
	pending := 0
	for i, sc := range s.scorers {
		if r, ok := recorded[sc.Name]; ok {
			results[i] = &r
		} else {
			pending++
		}
	}
	expiresAt := rec.Admitted.Add(s.maxWait)
	resume := s.phase == phaseRunning && now.Before(expiresAt) && s.unfinished < s.capacity && pending > 0
	state := StateLeft // forwarded at once: it never enters the store
	if resume {
		state = StateAdmitted
	}
	it := &item{
		subject:   subject,
		state:     state,
		ctx:       ctx,
		admitted:  rec.Admitted,
		expiresAt: expiresAt,
		deadline:  rec.Admitted.Add(s.maxWait + s.evalTimeout),
		results:   results,
		pending:   pending,
		stored:    rec.ID,
	}
	if resume {
		s.insertHeld(it)
		s.unfinished++
		if !s.recoverCall(it, now) {
			s.moveTo(it, StateEvaluating, now)
			s.dispatch(it) // the scorers without a recorded result
		}
	} else {
		s.skipUnapplied(it, now) // scorers that do not apply get no marker
		s.workers.Add(1)         // shutdown waits for it to be forwarded
	}
	s.mu.Unlock()

	outcome := "resumed"
	if !resume {
		outcome = "forwarded"
		go func() {
			defer s.workers.Done()
			s.leave(it, leftRestarted)
		}()
	}
	s.obs.Recovered(ctx, outcome)
}

// recoverCall puts a recovered Pair back into the call table: a half
// waits for its other half again (its wait starts anew) and is not
// dispatched; a pair with both halves, or a span with content, is
// tracked, so a late half is recognised. It reports whether the item
// waits. Called with mu held.
func (s *Store) recoverCall(it *item, now time.Time) bool {
	call, ok := it.subject.(Pair)
	if !ok || s.calls == nil {
		return false
	}
	key, sides, waits := call.Call()
	if st, _, _ := s.calls.state(key, now); !key.Valid() || st != callUnknown {
		return false
	}
	it.call = key
	switch {
	case sides == SideSpan|SideEvents:
		s.calls.track(key, SideSpan, it)
		s.calls.join(key, SideEvents)
		return false
	case !waits:
		s.calls.track(key, sides, it) // a span with content is evaluated at once
		return false
	}
	if sides == SideSpan {
		s.moveTo(it, StateWaitingForEvents, now) // its size is not stored: it counts by number
	} else {
		s.moveTo(it, StatePairing, now)
	}
	s.calls.hold(key, sides, it, now)
	s.armCallTimer()
	return true
}

// insertHeld puts a recovered item into held in expiry order and re-arms
// the expiry timer when it expires first. Called with mu held.
func (s *Store) insertHeld(it *item) {
	e := s.held.Back()
	for e != nil && e.Value.(*item).expiresAt.After(it.expiresAt) {
		e = e.Prev()
	}
	if e == nil {
		it.elem = s.held.PushFront(it)
	} else {
		it.elem = s.held.InsertAfter(it, e)
	}
	if s.held.Front() == it.elem {
		s.armExpiry(max(time.Until(it.expiresAt), 0))
	}
}
