package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"time"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/pairing"
	"github.com/llm-eval/llm_eval/scoring"
)

// One call, one evaluation, across signals. With llm_eval in a traces and
// a logs pipeline, a call recorded as a span without content plus GenAI log
// events holding the content reaches the store twice. The store keeps a
// table of such calls by trace and span id (internal/pairing): the half
// that comes first waits up to log_events.cross_signal_wait for the other,
// and the call is evaluated once, its results written on the span and
// emitted as result records. A half arriving while its call is evaluated
// joins the evaluation; a half arriving after its call left is late: it
// passes without an evaluation of its own.

// How a call seen on both signals ended (signal_joins).
const (
	joinJoined      = "joined"       // both halves came: one evaluation for both
	joinSpanAlone   = "span_alone"   // a span without content waited; no events came
	joinEventsAlone = "events_alone" // events waited for their span; it did not come
	joinLateSpan    = "late_span"    // a span whose events were evaluated and left
	joinLateEvents  = "late_events"  // events whose span was evaluated and left
)

// What a half asks of the store besides admission (admitHalf's results).
const (
	joinedPartner admitResult = iota + 100 // admitted into its other half's item
	lateHalf                               // its call already left: not evaluated
	// unjoinable: a half without content that cannot wait for its other
	// half (ids that match nothing, or a second copy of a half already
	// held): not admitted, not scorable as without joining.
	unjoinable
)

// notScorableWithoutEvents is the reason of a span that waited in vain.
const notScorableWithoutEvents = "no content on the span, and no GenAI log events of the call arrived within log_events.cross_signal_wait"

// joinSignals makes the store match each call's span with its log events.
// The evaluator calls it once, at Start, when the component has a traces
// and a logs instance.
func (s *evalStore) joinSignals(wait, remember time.Duration, rememberMax int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if wait > 0 {
		s.calls = pairing.New[*admittedItem](wait, remember, rememberMax)
		s.joining.Store(true)
	}
}

// admitHalf admits one half of a call: a generation span (side Span) or
// the call read from its log events (side Events). hasContent says whether
// the half can be scored on its own; a span without content waits for its
// events, and events wait for their span, so that the results go on the
// span. newSubject is called only when the half is taken. It returns
// admitted, joinedPartner (the half joined its other half's item), lateHalf
// (its call has left), unjoinable, or why it was refused.
func (s *evalStore) admitHalf(ctx context.Context, key pairing.Key, side pairing.Side, hasContent bool, newSubject func() evalSubject) admitResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase != phaseRunning || s.calls == nil || !key.Valid() {
		if res := s.refusal(); res != admitted {
			return res
		}
		if !hasContent {
			return unjoinable
		}
		s.begin(s.hold(ctx, newSubject()))
		return admitted
	}
	now := time.Now()
	st, sides, item := s.calls.State(key, now)
	switch {
	case (st == pairing.Waiting || st == pairing.Active) && sides&side == 0:
		call := item.subject.(*pairedCall)
		call.add(newSubject())
		s.calls.Join(key, side)
		if s.journal != nil {
			s.journal.rewritten(item) // the joined half survives a crash too
		}
		if st == pairing.Waiting {
			s.begin(item)
		}
		s.tel.signalJoined(item.ctx, joinJoined)
		return joinedPartner
	case st == pairing.Left && sides&side == 0:
		s.tel.signalJoined(ctx, lateOutcome(side))
		return lateHalf
	case st != pairing.Unknown:
		// The same half again (a duplicate delivery): evaluated on its own,
		// as without joining.
		if res := s.refusal(); res != admitted {
			return res
		}
		if !hasContent {
			return unjoinable
		}
		s.begin(s.hold(ctx, newSubject()))
		return admitted
	}
	if res := s.refusal(); res != admitted {
		return res
	}
	call := &pairedCall{}
	call.add(newSubject())
	item = s.hold(ctx, call)
	item.call = key
	if hasContent && side == pairing.Span {
		s.calls.Track(key, side, item)
		s.begin(item)
		return admitted
	}
	s.calls.Wait(key, side, item, now)
	s.armCallTimer()
	return admitted
}

// settled says what settleHalf did with a half that is not evaluated.
type settled int

const (
	settledAlone   settled = iota // no other half known: the caller writes the half's outcome
	settledWaiting                // the waiting other half took the outcome; both are written
	settledLate                   // the other half already left: nothing more to write
)

// settleHalf ends, without an evaluation, a call one of whose halves cannot
// be evaluated: log events without content or with only tool calls, or a
// span with only tool calls (res is then ignored: skip). A span waiting for
// such events leaves with res for every scorer that applies to it (nothing
// when skip), and the events' result records carry the same. A half that
// comes first is remembered, so that its other half, arriving later, is
// late.
func (s *evalStore) settleHalf(ctx context.Context, key pairing.Key, side pairing.Side, half evalSubject, res scoring.Result, skip bool) settled {
	s.mu.Lock()
	if s.phase != phaseRunning || s.calls == nil || !key.Valid() {
		s.mu.Unlock()
		return settledAlone
	}
	now := time.Now()
	st, sides, item := s.calls.State(key, now)
	switch {
	case st == pairing.Waiting && sides == pairing.Span && side == pairing.Events:
		s.calls.Join(key, side)
		item.subject.(*pairedCall).add(half)
		s.tel.signalJoined(item.ctx, joinJoined)
	case st == pairing.Left && sides&side == 0:
		s.mu.Unlock()
		s.tel.signalJoined(ctx, lateOutcome(side))
		return settledLate
	case st == pairing.Unknown:
		s.calls.Track(key, side, nil)
		s.calls.Leave(key, now)
		s.mu.Unlock()
		return settledAlone
	default:
		s.mu.Unlock()
		return settledAlone
	}
	s.settle(item, res, skip, now)
	s.mu.Unlock()
	s.leave(item, leftComplete)
	return settledWaiting
}

// settle fills every evaluation of an item not yet dispatched with res,
// or marks them skipped, and takes it out of held; the caller then lets it
// leave, without mu. Results recorded before a restart stay. Called with
// mu held.
func (s *evalStore) settle(item *admittedItem, res scoring.Result, skip bool, now time.Time) {
	sk, _ := item.subject.(scorerSkipper)
	for i, sc := range s.scorers {
		if item.results[i] != nil {
			continue
		}
		r := evalResult{scorer: sc.cfg.Name, at: now, result: res, skipped: skip}
		r.result.Scorer = sc.cfg.Name
		if !skip && sk != nil && sk.skips(sc.cfg) {
			r.skipped = true
		}
		if !r.skipped {
			s.tel.recordResult(item.ctx, r)
		}
		item.results[i] = &r
	}
	item.pending = 0
	s.unfinished--
	s.held.Remove(item.elem)
	item.elem = nil
	s.forgetCall(item, now)
}

// forgetCall takes a leaving item out of the call table, remembering its
// halves as left. Called with mu held.
func (s *evalStore) forgetCall(item *admittedItem, now time.Time) {
	if s.calls != nil && item.call.Valid() {
		s.calls.Leave(item.call, now)
	}
}

// armCallTimer makes the call timer fire when the oldest waiting half's
// wait ends. Called with mu held.
func (s *evalStore) armCallTimer() {
	at, ok := s.calls.NextExpiry()
	if !ok {
		return
	}
	armTimer(&s.callTimer, time.Until(at), s.callWaitsExpired)
}

// callWaitsExpired ends the waits that have passed: events that waited for
// their span are evaluated alone; a span that waited for its events leaves
// not scorable.
func (s *evalStore) callWaitsExpired() {
	s.mu.Lock()
	if s.phase != phaseRunning {
		s.mu.Unlock()
		return
	}
	now := time.Now()
	var leaving []*admittedItem
	for _, item := range s.calls.Expire(now) {
		if item.elem == nil {
			continue // left at max_wait meanwhile
		}
		if item.subject.(*pairedCall).span != nil {
			s.tel.signalJoined(item.ctx, joinSpanAlone)
			s.settle(item, scoring.Result{Label: scoring.LabelNotScorable, Reason: notScorableWithoutEvents}, false, now)
			leaving = append(leaving, item)
			continue
		}
		s.tel.signalJoined(item.ctx, joinEventsAlone)
		s.begin(item)
	}
	s.armCallTimer()
	s.leaveUnlocking(leaving, leftComplete)
}

// waitsForPartner says whether an item is held without its evaluations
// dispatched, waiting for its other half. Called with mu held.
func (s *evalStore) waitsForPartner(item *admittedItem) bool {
	if s.calls == nil || !item.call.Valid() {
		return false
	}
	st, _, _ := s.calls.State(item.call, time.Now())
	return st == pairing.Waiting
}

func lateOutcome(side pairing.Side) string {
	if side == pairing.Span {
		return joinLateSpan
	}
	return joinLateEvents
}
