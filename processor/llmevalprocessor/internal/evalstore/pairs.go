package evalstore // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"

import (
	"context"
	"errors"
	"time"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/logjoin"
	"github.com/llm-eval/llm_eval/scoring"
)

// One call, one evaluation, across signals. With llm_eval in a traces and
// a logs pipeline, a call recorded as a span without content plus GenAI log
// events holding the content reaches the store twice. The store keeps a
// table of such calls by trace and span id (calls.go): the half
// that comes first waits (StatePairing) up to
// log_events.cross_signal_wait for the other, and the call is evaluated
// once, as one Pair. A half arriving while its call is evaluated joins the
// evaluation; a half arriving after its call left is late: it passes
// without an evaluation of its own.

// How a call seen on both signals ended (Observer.SignalJoined).
const (
	JoinJoined      = "joined"       // both halves came: one evaluation for both
	JoinSpanAlone   = "span_alone"   // a span without content waited; no events came
	JoinEventsAlone = "events_alone" // events waited for their span; it did not come
	JoinLateSpan    = "late_span"    // a span whose events were evaluated and left
	JoinLateEvents  = "late_events"  // events whose span was evaluated and left
)

// NotScorableWithoutEvents is the reason of a span that waited in vain.
const NotScorableWithoutEvents = "no content on the span, and no GenAI log events of the call arrived within log_events.cross_signal_wait"

// JoinSignals makes the store match each call's span with its log events,
// waiting up to wait for the other half and remembering calls that left
// for remember (at most rememberMax of them). Its owner calls it once,
// before Start, when the component has a traces and a logs instance.
func (s *Store) JoinSignals(wait, remember time.Duration, rememberMax int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if wait > 0 {
		s.calls = newCallTable(wait, remember, rememberMax)
		s.joining.Store(true)
	}
}

// Joining reports whether the store matches the two signals of a call.
func (s *Store) Joining() bool { return s.joining.Load() }

// AdmitHalf admits one half of a call: a generation span (side Span) or
// the call read from its log events (side Events). A span without content
// waits for its events in the waiting area (eventswait.go), outside
// queue_size; events wait for their span, so that the results go on the
// span. newHalf is called only when the half is taken. It returns
// Admitted, JoinedPartner (the half joined its other half's item),
// LateHalf (its call has left), Unjoinable, WaitingAreaFull,
// NoEventsExpected, or why it was refused.
func (s *Store) AdmitHalf(ctx context.Context, key logjoin.Key, h Half, newHalf func() Pairable) AdmitResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase != phaseRunning || s.calls == nil || !key.Valid() {
		return s.admitAlone(ctx, h.HasContent, newHalf)
	}
	side := h.Side
	now := time.Now()
	st, sides, it := s.calls.state(key, now)
	switch {
	case (st == callWaiting || st == callActive) && sides&side == 0:
		if it.state == StateWaitingForEvents {
			// The span takes a queue_size slot now that it is evaluated.
			s.moveTo(it, StateAdmitted, now)
			s.eventsCame(it.source)
			if s.unfinished > s.capacity {
				it.subject.(Pair).Join(newHalf())
				s.calls.join(key, side)
				s.obs.SignalJoined(it.ctx, JoinJoined)
				s.settle(it, ErrorResult(scoring.ErrorQueueFull, errQueueFull), false, now)
				s.leaveUnlocking([]*item{it}, leftQueueFull)
				s.mu.Lock() // the deferred unlock
				return JoinedPartner
			}
		}
		it.subject.(Pair).Join(newHalf())
		s.calls.join(key, side)
		if s.journal != nil {
			it.stored = s.journal.Rewritten(it.stored, it.subject, it.admitted) // the joined half survives a crash too
		}
		if st == callWaiting {
			s.begin(it)
		}
		s.obs.SignalJoined(it.ctx, JoinJoined)
		return JoinedPartner
	case st == callLeft && sides&side == 0:
		s.obs.SignalJoined(ctx, lateOutcome(side))
		return LateHalf
	case st != callUnknown:
		// The same half again (a duplicate delivery): evaluated on its own,
		// as without joining.
		return s.admitAlone(ctx, h.HasContent, newHalf)
	}
	waitsForEvents := side == SideSpan && !h.HasContent
	switch {
	case !waitsForEvents:
		if res := s.refusal(); res != Admitted {
			return res
		}
	case s.eventWaits.captureOff(h.Source):
		s.noEventsOutcome(ctx, JoinContentCaptureOff)
		return NoEventsExpected
	case s.eventWaits.full(h.Size):
		s.noEventsOutcome(ctx, JoinWaitingAreaFull)
		return WaitingAreaFull
	}
	it = s.hold(ctx, newHalf().NewPair())
	it.call = key
	if !waitsForEvents && side == SideSpan {
		s.calls.track(key, side, it)
		s.begin(it)
		return Admitted
	}
	if waitsForEvents {
		it.waitBytes = h.Size
		it.source, it.library, it.noEvents = h.Source, h.Library, h.NoEvents
		s.moveTo(it, StateWaitingForEvents, now)
	} else {
		s.moveTo(it, StatePairing, now)
	}
	s.calls.hold(key, side, it, now)
	s.armCallTimer()
	return Admitted
}

var errQueueFull = errors.New("queue_size calls were already waiting for results when its log events came")

// admitAlone admits a half as an item of its own, as without joining.
// Called with mu held.
func (s *Store) admitAlone(ctx context.Context, hasContent bool, newHalf func() Pairable) AdmitResult {
	if res := s.refusal(); res != Admitted {
		return res
	}
	if !hasContent {
		return Unjoinable
	}
	s.begin(s.hold(ctx, newHalf()))
	return Admitted
}

// Settled says what SettleHalf did with a half that is not evaluated.
type Settled int

// What SettleHalf did.
const (
	SettledAlone   Settled = iota // no other half known: the caller writes the half's outcome
	SettledWaiting                // the waiting other half took the outcome; both are written
	SettledLate                   // the other half already left: nothing more to write
)

// SettleHalf ends, without an evaluation, a call one of whose halves cannot
// be evaluated: log events without content or with only tool calls, or a
// span with only tool calls (res is then ignored: skip). A span waiting for
// such events leaves with res for every scorer that applies to it (nothing
// when skip), and the events' Leave gets the same. A half that comes first
// is remembered, so that its other half, arriving later, is late.
func (s *Store) SettleHalf(ctx context.Context, key logjoin.Key, side Side, half Subject, res scoring.Result, skip bool) Settled {
	s.mu.Lock()
	if s.phase != phaseRunning || s.calls == nil || !key.Valid() {
		s.mu.Unlock()
		return SettledAlone
	}
	now := time.Now()
	st, sides, it := s.calls.state(key, now)
	switch {
	case st == callWaiting && sides == SideSpan && side == SideEvents:
		s.eventsCame(it.source)
		s.calls.join(key, side)
		it.subject.(Pair).Join(half)
		s.obs.SignalJoined(it.ctx, JoinJoined)
	case st == callLeft && sides&side == 0:
		s.mu.Unlock()
		s.obs.SignalJoined(ctx, lateOutcome(side))
		return SettledLate
	case st == callUnknown:
		s.calls.track(key, side, nil)
		s.calls.leave(key, now)
		s.mu.Unlock()
		return SettledAlone
	default:
		s.mu.Unlock()
		return SettledAlone
	}
	s.settle(it, res, skip, now)
	s.mu.Unlock()
	s.leave(it, leftComplete)
	return SettledWaiting
}

// settle fills every evaluation of an item not yet dispatched with res,
// or marks them skipped, and moves it to StateLeft; the caller then lets
// it leave, without mu. Results recorded before a restart stay. Called with
// mu held.
func (s *Store) settle(it *item, res scoring.Result, skip bool, now time.Time) {
	for i, sc := range s.scorers {
		if it.results[i] != nil {
			continue
		}
		r := Result{Scorer: sc.Name, At: now, Result: res, Skipped: skip}
		r.Result.Scorer = sc.Name
		if !skip && it.subject.Skips(sc) {
			r.Skipped = true
		}
		if !r.Skipped {
			s.obs.Result(it.ctx, r)
		}
		it.results[i] = &r
	}
	s.moveTo(it, StateLeft, now)
}

// armCallTimer makes the call timer fire when the oldest waiting half's
// wait ends. Called with mu held.
func (s *Store) armCallTimer() {
	at, ok := s.calls.nextExpiry()
	if !ok {
		return
	}
	armTimer(&s.callTimer, time.Until(at), s.callWaitsExpired)
}

// callWaitsExpired ends the waits that have passed: events that waited for
// their span are evaluated alone; a span that waited for its events leaves
// not scorable.
func (s *Store) callWaitsExpired() {
	s.mu.Lock()
	if s.phase != phaseRunning {
		s.mu.Unlock()
		return
	}
	now := time.Now()
	var leaving []*item
	for _, it := range s.calls.expire(now) {
		if it.state != StatePairing && it.state != StateWaitingForEvents {
			continue // left at max_wait meanwhile
		}
		if _, sides, _ := it.subject.(Pair).Call(); sides&SideSpan != 0 {
			s.obs.SignalJoined(it.ctx, JoinSpanAlone)
			s.obs.EventsMissed(it.ctx, it.source, it.library, s.eventsMissed(it.source))
			reason := it.noEvents
			if reason == "" {
				reason = NotScorableWithoutEvents
			}
			s.settle(it, scoring.Result{Label: scoring.LabelNotScorable, Reason: reason}, false, now)
			leaving = append(leaving, it)
			continue
		}
		s.obs.SignalJoined(it.ctx, JoinEventsAlone)
		s.begin(it)
	}
	s.armCallTimer()
	s.leaveUnlocking(leaving, leftComplete)
}

func lateOutcome(side Side) string {
	if side == SideSpan {
		return JoinLateSpan
	}
	return JoinLateEvents
}
