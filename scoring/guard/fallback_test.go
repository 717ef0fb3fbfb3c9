package guard

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
)

// answering answers with its own name as content and counts its calls.
type answering struct {
	name  string
	calls atomic.Int64
	err   atomic.Pointer[error]
}

func (a *answering) Complete(context.Context, scoring.Request) (scoring.Response, error) {
	a.calls.Add(1)
	if e := a.err.Load(); e != nil {
		return scoring.Response{}, *e
	}
	return scoring.Response{Content: a.name}, nil
}

func (a *answering) fail(err error) { a.err.Store(&err) }
func (a *answering) heal()          { a.err.Store(nil) }

// TestFallbackWhileCircuitOpen: the secondary answers only while the
// primary's breaker is open; the primary's probe after open_duration finds
// it healthy again and it takes the calls back.
func TestFallbackWhileCircuitOpen(t *testing.T) {
	clk := newGuardClock()
	primary, secondary := &answering{name: "primary"}, &answering{name: "secondary"}
	breaker := NewBreaker(primary, BreakerConfig{FailureThreshold: 2, OpenDuration: 30 * time.Second, Now: clk.Now})
	var fallbacks atomic.Int64
	f := NewFallback(breaker, secondary, func() { fallbacks.Add(1) })
	ctx := context.Background()
	req := budgetRequest(10)

	resp, err := f.Complete(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, "primary", resp.Content)

	down := &scoring.Error{Type: scoring.ErrorJudgeUnavailable, Err: errors.New("503")}
	primary.fail(down)
	for range 2 { // failures before the circuit opens are returned, not passed on
		_, err := f.Complete(ctx, req)
		require.ErrorIs(t, err, down)
	}
	require.Equal(t, BreakerOpen, breaker.State())
	resp, err = f.Complete(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, "secondary", resp.Content)
	assert.EqualValues(t, 1, fallbacks.Load())
	assert.EqualValues(t, 3, primary.calls.Load(), "an open circuit makes no call")

	primary.heal()
	clk.Advance(30 * time.Second)
	resp, err = f.Complete(ctx, req) // the half-open probe reaches the primary
	require.NoError(t, err)
	assert.Equal(t, "primary", resp.Content)
	assert.Equal(t, BreakerClosed, breaker.State())
	assert.EqualValues(t, 1, secondary.calls.Load())
}

func TestFallbackNotForOtherFailures(t *testing.T) {
	for _, typ := range []scoring.ErrorType{scoring.ErrorJudgeParse, scoring.ErrorJudgeBadRequest, scoring.ErrorBudgetExhausted, scoring.ErrorCanceled} {
		t.Run(string(typ), func(t *testing.T) {
			primary, secondary := &answering{name: "primary"}, &answering{name: "secondary"}
			primary.fail(&scoring.Error{Type: typ, Err: errors.New("x")})
			_, err := NewFallback(primary, secondary, nil).Complete(context.Background(), budgetRequest(1))
			var se *scoring.Error
			require.ErrorAs(t, err, &se)
			assert.Equal(t, typ, se.Type)
			assert.Zero(t, secondary.calls.Load())
		})
	}
}
