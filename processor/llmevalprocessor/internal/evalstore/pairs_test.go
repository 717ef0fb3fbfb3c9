package evalstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/logjoin"
	"github.com/llm-eval/llm_eval/scoring"
)

// half is one signal's half of a call.
type half struct {
	subject
	side   Side
	source string // the service that sent it
}

// NewPair is the pair of the half's call, holding the half.
func (h *half) NewPair() Pair { return &pair{halves: []*half{h}} }

// half describes h to AdmitHalf.
func (h *half) half() Half {
	return Half{Side: h.side, HasContent: h.output != "", Source: h.source, Size: len(h.output) + 100}
}

// pair joins the halves of one call; a span without content is judged on
// its events' content.
type pair struct {
	key logjoin.Key

	mu     sync.Mutex
	halves []*half
}

func (p *pair) Join(h Subject) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.halves = append(p.halves, h.(*half))
}

func (p *pair) Call() (logjoin.Key, Side, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var sides Side
	waits := true
	for _, h := range p.halves {
		sides |= h.side
		waits = waits && !(h.side == SideSpan && h.output != "")
	}
	return p.key, sides, waits && sides != SideSpan|SideEvents
}

func (p *pair) Case(Scorer) scoring.Case {
	p.mu.Lock()
	defer p.mu.Unlock()
	var c scoring.Case
	for _, h := range p.halves {
		c.Output += h.output
	}
	return c
}

func (p *pair) Skips(Scorer) bool { return false }

func (p *pair) Leave(ctx context.Context, results []Result) {
	for _, h := range p.halves {
		h.Leave(ctx, results)
	}
}

func (p *pair) Late(ctx context.Context, r Result) {
	for _, h := range p.halves {
		h.Late(ctx, r)
	}
}

func pairFixture(t *testing.T, wait time.Duration, scorers ...*scorer) (*fixture, logjoin.Key) {
	t.Helper()
	key := logjoin.Key{TraceID: pcommon.TraceID{1}, SpanID: pcommon.SpanID{2}}
	join := func(s *testStore) {
		s.JoinSignals(wait, time.Minute, 100)
	}
	return newFixtureWith(t, Settings{}, nil, join, scorers...), key
}

// The two halves of a call are evaluated once, on the content of both,
// whichever comes first: the first waits without an evaluation, the
// second joins it.
func TestPairHalvesInEitherOrder(t *testing.T) {
	for _, spanFirst := range []bool{true, false} {
		t.Run(map[bool]string{true: "span first", false: "events first"}[spanFirst], func(t *testing.T) {
			sc := &scorer{name: "a"}
			f, key := pairFixture(t, time.Hour, sc)
			span := &half{side: SideSpan}                                         // no content of its own
			events := &half{subject: subject{output: "answer"}, side: SideEvents} // the content
			first, second := span, events
			if !spanFirst {
				first, second = events, span
			}
			admit := func(h *half) AdmitResult {
				return f.s.AdmitHalf(context.Background(), key, h.half(), func() Pairable { return h })
			}

			require.Equal(t, Admitted, admit(first))
			wantState := map[bool]State{true: StateWaitingForEvents, false: StatePairing}[spanFirst]
			assert.Equal(t, wantState, f.stateOf(first), "the first half waits for the other")
			assert.Zero(t, sc.calls.Load(), "nothing is evaluated while a half waits")

			require.Equal(t, JoinedPartner, admit(second))
			eventually(t, func() bool { return span.left() != nil && events.left() != nil }, "both halves leave")
			assert.Equal(t, []string{"a:pass"}, labels(span.left()))
			assert.Equal(t, "answer", span.left()[0].Result.Reason, "judged on the events' content")
			assert.Equal(t, int32(1), sc.calls.Load(), "one evaluation for the call")
			assert.Equal(t, []string{JoinJoined}, f.obs.snapshot().joins)
		})
	}
}

// A span without content whose events never come leaves not scorable at
// cross_signal_wait; events whose span never comes are evaluated alone.
// The other half arriving after that is late: it is not evaluated.
func TestPairHalfAlone(t *testing.T) {
	tests := []struct {
		name    string
		half    *half
		other   *half
		want    string
		outcome string
	}{
		{name: "span alone", half: &half{side: SideSpan}, other: &half{subject: subject{output: "answer"}, side: SideEvents}, want: "a:" + string(scoring.LabelNotScorable), outcome: JoinSpanAlone},
		{name: "events alone", half: &half{subject: subject{output: "answer"}, side: SideEvents}, other: &half{side: SideSpan}, want: "a:pass", outcome: JoinEventsAlone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, key := pairFixture(t, 10*time.Millisecond, &scorer{name: "a"})
			h := tt.half
			require.Equal(t, Admitted, f.s.AdmitHalf(context.Background(), key, h.half(), func() Pairable { return h }))
			eventually(t, func() bool { return h.left() != nil }, "leaves after the wait")
			assert.Equal(t, []string{tt.want}, labels(h.left()))
			assert.Equal(t, []string{tt.outcome}, f.obs.snapshot().joins)

			o := tt.other
			assert.Equal(t, LateHalf, f.s.AdmitHalf(context.Background(), key, o.half(), func() Pairable { return o }))
			assert.Nil(t, o.left(), "a late half is not held")
		})
	}
}
