package evalstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/logjoin"
	"github.com/llm-eval/llm_eval/scoring"
)

// eventsFixture is a started store joining the signals, with cross-signal
// wait, the waiting area's limits and queue_size capacity.
func eventsFixture(t *testing.T, wait time.Duration, limits EventWaits, capacity int, scorers ...*scorer) *fixture {
	t.Helper()
	join := func(s *testStore) {
		s.JoinSignals(wait, time.Minute, 1000)
	}
	return newFixtureWith(t, Settings{Capacity: capacity, EventWaits: limits}, nil, join, scorers...)
}

// callKey is the key of the n-th call of a test.
func callKey(n int) logjoin.Key {
	return logjoin.Key{TraceID: pcommon.TraceID{byte(n >> 8), byte(n), 1}, SpanID: pcommon.SpanID{byte(n >> 8), byte(n), 2}}
}

func (f *fixture) admitHalf(n int, h *half) AdmitResult {
	return f.s.AdmitHalf(context.Background(), callKey(n), h.half(), func() Pairable { return h })
}

// Spans without content waiting for their events take no queue_size slot:
// with more of them waiting than queue_size, a span with content is still
// admitted and scored, and a waiting span takes a slot when its events come.
func TestWaitingSpansTakeNoQueueSlot(t *testing.T) {
	const capacity = 2
	f := eventsFixture(t, time.Hour, EventWaits{MaxSpans: 100}, capacity, &scorer{name: "a"})
	waiting := make([]*half, 10)
	for i := range waiting {
		waiting[i] = &half{side: SideSpan, source: "svc"}
		require.Equal(t, Admitted, f.admitHalf(i, waiting[i]))
		assert.Equal(t, StateWaitingForEvents, f.stateOf(waiting[i]))
	}
	st := f.s.Stats()
	assert.Equal(t, 10, st.WaitingForEvents)
	assert.Zero(t, st.Unfinished, "waiting spans hold no queue_size slot")

	withContent := &half{subject: subject{output: "answer"}, side: SideSpan, source: "svc"}
	require.Equal(t, Admitted, f.admitHalf(100, withContent), "a span with content is not refused for the waiting ones")
	eventually(t, func() bool { return withContent.left() != nil }, "the span with content is scored")
	assert.Equal(t, []string{"a:pass"}, labels(withContent.left()))

	events := &half{subject: subject{output: "from events"}, side: SideEvents}
	require.Equal(t, JoinedPartner, f.admitHalf(3, events))
	eventually(t, func() bool { return waiting[3].left() != nil }, "the joined span is scored")
	assert.Equal(t, []string{"a:pass"}, labels(waiting[3].left()))
	assert.Equal(t, 9, f.s.Stats().WaitingForEvents, "the joined span left the waiting area")
	assert.Equal(t, 9*100, f.s.EventWaitStats().Bytes, "the area's bytes follow its spans")
}

// A span without content that finds the waiting area full, by count or by
// bytes, leaves at once (WaitingAreaFull): it is not held and never refused
// as queue_full, and a span with content is still admitted.
func TestWaitingAreaFull(t *testing.T) {
	tests := []struct {
		name   string
		limits EventWaits
		sizes  []int // outputs of the spans admitted first: sizes 100 each
	}{
		{name: "by count", limits: EventWaits{MaxSpans: 2}},
		{name: "by bytes", limits: EventWaits{MaxSpans: 100, MaxBytes: 250}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := eventsFixture(t, time.Hour, tt.limits, 1, &scorer{name: "a"})
			for i := range 2 {
				require.Equal(t, Admitted, f.admitHalf(i, &half{side: SideSpan}))
			}
			refused := &half{side: SideSpan}
			assert.Equal(t, WaitingAreaFull, f.admitHalf(2, refused))
			assert.Equal(t, StateLeft, f.stateOf(refused), "not held")
			assert.Equal(t, []string{JoinWaitingAreaFull}, f.obs.snapshot().joins)
			assert.Equal(t, 2, f.s.Stats().WaitingForEvents)

			withContent := &half{subject: subject{output: "answer"}, side: SideSpan}
			assert.Equal(t, Admitted, f.admitHalf(3, withContent))
		})
	}
}

// Events that join a waiting span while queue_size spans are being
// evaluated: the call leaves at once with queue_full, on both halves, and
// nothing is left in the waiting area.
func TestEventsJoinWithQueueFull(t *testing.T) {
	gate := make(chan struct{})
	sc := &scorer{name: "a", gate: gate}
	f := eventsFixture(t, time.Hour, EventWaits{MaxSpans: 10}, 1, sc)
	busy := &half{subject: subject{output: "busy"}, side: SideSpan}
	require.Equal(t, Admitted, f.admitHalf(0, busy))
	span := &half{side: SideSpan}
	require.Equal(t, Admitted, f.admitHalf(1, span))

	events := &half{subject: subject{output: "answer"}, side: SideEvents}
	require.Equal(t, JoinedPartner, f.admitHalf(1, events))
	eventually(t, func() bool { return span.left() != nil && events.left() != nil }, "both halves leave")
	assert.Equal(t, []string{"a:error:" + string(scoring.ErrorQueueFull)}, labels(span.left()))
	assert.Equal(t, []string{ReasonQueueFull}, f.obs.snapshot().unscored)
	st := f.s.Stats()
	assert.Zero(t, st.WaitingForEvents)
	assert.Equal(t, 1, st.Unfinished, "only the busy span holds a slot")
	close(gate)
	eventually(t, func() bool { return busy.left() != nil }, "the busy span is scored")
}

// The store learns that a service sends no events: after LearnAfter of its
// spans in a row waited in vain, its spans without content leave at once
// (NoEventsExpected), other services still wait, and an event of the
// service makes its spans wait again. A span whose events came breaks the
// run.
func TestLearnContentCaptureOff(t *testing.T) {
	const wait = 5 * time.Millisecond
	f := eventsFixture(t, wait, EventWaits{MaxSpans: 100, LearnAfter: 3}, 10, &scorer{name: "a"})
	n := 0
	waitInVain := func(service string) {
		t.Helper()
		h := &half{side: SideSpan, source: service, subject: subject{}}
		n++
		require.Equal(t, Admitted, f.admitHalf(n, h))
		eventually(t, func() bool { return h.left() != nil }, "leaves after cross_signal_wait")
		assert.Equal(t, []string{"a:" + string(scoring.LabelNotScorable)}, labels(h.left()))
	}
	joined := func(service string) {
		t.Helper()
		h := &half{side: SideSpan, source: service}
		n++
		require.Equal(t, Admitted, f.admitHalf(n, h))
		require.Equal(t, JoinedPartner, f.admitHalf(n, &half{subject: subject{output: "x"}, side: SideEvents}))
		eventually(t, func() bool { return h.left() != nil }, "scored")
	}

	waitInVain("svc")
	waitInVain("svc")
	joined("svc") // its events came: the run starts again
	waitInVain("svc")
	waitInVain("svc")
	assert.Empty(t, f.obs.snapshot().learned, "two in a row are not enough")
	waitInVain("svc")
	assert.Equal(t, []string{"svc"}, f.obs.snapshot().learned)
	assert.True(t, f.s.CaptureOff("svc"))
	assert.Equal(t, []string{"svc"}, f.s.EventWaitStats().CaptureOff)

	n++
	off := &half{side: SideSpan, source: "svc"}
	assert.Equal(t, NoEventsExpected, f.admitHalf(n, off))
	assert.Nil(t, off.left(), "not held: the caller writes its results")
	assert.Contains(t, f.obs.snapshot().joins, JoinContentCaptureOff)
	n++
	other := &half{side: SideSpan, source: "other"}
	assert.Equal(t, Admitted, f.admitHalf(n, other), "another service still waits")

	f.s.EventsArrived("svc") // content capture turned on
	assert.False(t, f.s.CaptureOff("svc"))
	joined("svc")
	assert.Equal(t, []string{"svc"}, f.obs.snapshot().learned, "learned once")
}

// A span whose events never come leaves with the reason its admitter gave
// (how to turn content capture on for its library), and one waiting at
// max_wait frees its place in the area.
func TestWaitingSpanReason(t *testing.T) {
	f := eventsFixture(t, 5*time.Millisecond, EventWaits{MaxSpans: 1}, 1, &scorer{name: "a"})
	h := &half{side: SideSpan}
	hf := h.half()
	hf.NoEvents = "set X=true"
	require.Equal(t, Admitted, f.s.AdmitHalf(context.Background(), callKey(1), hf, func() Pairable { return h }))
	eventually(t, func() bool { return h.left() != nil }, "leaves")
	assert.Equal(t, "set X=true", h.left()[0].Result.Reason)
	assert.Zero(t, f.s.Stats().WaitingForEvents)
	assert.Equal(t, Admitted, f.admitHalf(2, &half{side: SideSpan}), "its place is free again")
}
