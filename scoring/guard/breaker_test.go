package guard

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/llm-eval/llm_eval/scoring"
)

func guardTypedErr(t scoring.ErrorType) error {
	return &scoring.Error{Type: t, Err: errors.New("scripted")}
}

func guardErrType(err error) scoring.ErrorType {
	var e *scoring.Error
	if errors.As(err, &e) {
		return e.Type
	}
	return ""
}

// guardFailingJudge returns err on every call.
func guardFailingJudge(err error) *guardJudge {
	return &guardJudge{reply: func(context.Context, int, scoring.Request) (scoring.Response, error) { return scoring.Response{}, err }}
}

// guardSwitchJudge returns whatever error is set, nil for success.
type guardSwitchJudge struct {
	guardJudge
	mu  sync.Mutex
	err error
}

func newGuardSwitchJudge() *guardSwitchJudge {
	j := &guardSwitchJudge{}
	j.reply = func(context.Context, int, scoring.Request) (scoring.Response, error) {
		j.mu.Lock()
		defer j.mu.Unlock()
		return scoring.Response{Content: "{}"}, j.err
	}
	return j
}

func (j *guardSwitchJudge) set(err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.err = err
}

func TestBreakerOpensAfterConsecutiveFailures(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"unavailable", guardTypedErr(scoring.ErrorJudgeUnavailable)},
		{"timeout", guardTypedErr(scoring.ErrorJudgeTimeout)},
		{"rate limited", guardTypedErr(scoring.ErrorJudgeRateLimited)},
		{"untyped", errors.New("connection reset")},
		{"deadline", fmt.Errorf("post: %w", context.DeadlineExceeded)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newGuardClock()
			judge := guardFailingJudge(tc.err)
			b := NewBreaker(judge, BreakerConfig{FailureThreshold: 3, Now: clk.Now})
			for i := range 3 {
				if b.State() != BreakerClosed {
					t.Fatalf("state before failure %d = %s, want closed", i+1, b.State())
				}
				if _, err := b.Complete(t.Context(), scoring.Request{}); !errors.Is(err, tc.err) {
					t.Fatalf("call %d error = %v, want the judge's", i+1, err)
				}
			}
			if b.State() != BreakerOpen {
				t.Fatalf("state after 3 failures = %s, want open", b.State())
			}
			_, err := b.Complete(t.Context(), scoring.Request{})
			if guardErrType(err) != scoring.ErrorCircuitOpen || !errors.Is(err, ErrBreakerOpen) {
				t.Fatalf("call while open: error %v, want %s", err, scoring.ErrorCircuitOpen)
			}
			if judge.Calls() != 3 {
				t.Fatalf("judge calls = %d, want 3 (none while open)", judge.Calls())
			}
		})
	}
}

func TestBreakerDefaultThresholdIsFive(t *testing.T) {
	judge := guardFailingJudge(guardTypedErr(scoring.ErrorJudgeUnavailable))
	b := NewBreaker(judge, BreakerConfig{})
	for range 4 {
		_, _ = b.Complete(t.Context(), scoring.Request{})
	}
	if b.State() != BreakerClosed {
		t.Fatalf("state after 4 failures = %s, want closed", b.State())
	}
	_, _ = b.Complete(t.Context(), scoring.Request{})
	if b.State() != BreakerOpen {
		t.Fatalf("state after 5 failures = %s, want open", b.State())
	}
}

// Failures must be consecutive: a reply from the endpoint (even an
// unusable one) resets the count; the caller giving up neither counts nor
// resets.
func TestBreakerNonEndpointErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want BreakerState // after failure, err, failure with threshold 2
	}{
		{"success resets", nil, BreakerClosed},
		{"parse error resets", guardTypedErr(scoring.ErrorJudgeParse), BreakerClosed},
		{"bad request resets", guardTypedErr(scoring.ErrorJudgeBadRequest), BreakerClosed},
		{"truncated resets", guardTypedErr(scoring.ErrorJudgeTruncated), BreakerClosed},
		{"canceled is neutral", guardTypedErr(scoring.ErrorCanceled), BreakerOpen},
		{"context canceled is neutral", context.Canceled, BreakerOpen},
		{"budget exceeded is neutral", guardTypedErr(scoring.ErrorBudgetExceeded), BreakerOpen},
	} {
		t.Run(tc.name, func(t *testing.T) {
			judge := newGuardSwitchJudge()
			b := NewBreaker(judge, BreakerConfig{FailureThreshold: 2, Now: newGuardClock().Now})
			judge.set(guardTypedErr(scoring.ErrorJudgeUnavailable))
			_, _ = b.Complete(t.Context(), scoring.Request{})
			for range 5 {
				judge.set(tc.err)
				_, _ = b.Complete(t.Context(), scoring.Request{})
			}
			if b.State() != BreakerClosed {
				t.Fatalf("state after %v = %s, want closed", tc.err, b.State())
			}
			judge.set(guardTypedErr(scoring.ErrorJudgeUnavailable))
			_, _ = b.Complete(t.Context(), scoring.Request{})
			if b.State() != tc.want {
				t.Fatalf("state = %s, want %s", b.State(), tc.want)
			}
		})
	}
}

func guardOpenBreaker(t *testing.T, clk *guardClock, judge *guardSwitchJudge, cfg BreakerConfig) *Breaker {
	t.Helper()
	cfg.FailureThreshold = 1
	cfg.Now = clk.Now
	b := NewBreaker(judge, cfg)
	judge.set(guardTypedErr(scoring.ErrorJudgeUnavailable))
	_, _ = b.Complete(t.Context(), scoring.Request{})
	if b.State() != BreakerOpen {
		t.Fatalf("state = %s, want open", b.State())
	}
	return b
}

func TestBreakerHalfOpensAfterOpenDuration(t *testing.T) {
	for _, tc := range []struct {
		name     string
		probeErr error
		want     BreakerState
	}{
		{"probe success closes", nil, BreakerClosed},
		{"probe parse error closes", guardTypedErr(scoring.ErrorJudgeParse), BreakerClosed},
		{"probe failure reopens", guardTypedErr(scoring.ErrorJudgeTimeout), BreakerOpen},
		{"probe auth error suspends", guardTypedErr(scoring.ErrorJudgeAuth), BreakerSuspended},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newGuardClock()
			judge := newGuardSwitchJudge()
			b := guardOpenBreaker(t, clk, judge, BreakerConfig{OpenDuration: 10 * time.Second})
			judge.set(tc.probeErr)
			clk.Advance(10*time.Second - time.Nanosecond)
			if _, err := b.Complete(t.Context(), scoring.Request{}); guardErrType(err) != scoring.ErrorCircuitOpen {
				t.Fatalf("call before OpenDuration: error %v, want circuit open", err)
			}
			clk.Advance(time.Nanosecond)
			if _, err := b.Complete(t.Context(), scoring.Request{}); !errors.Is(err, tc.probeErr) {
				t.Fatalf("probe error = %v, want the judge's %v", err, tc.probeErr)
			}
			if judge.Calls() != 2 {
				t.Fatalf("judge calls = %d, want 2 (failure + probe)", judge.Calls())
			}
			if b.State() != tc.want {
				t.Fatalf("state after probe = %s, want %s", b.State(), tc.want)
			}
			if tc.want == BreakerOpen {
				// Re-opened for another full OpenDuration.
				clk.Advance(5 * time.Second)
				if _, err := b.Complete(t.Context(), scoring.Request{}); guardErrType(err) != scoring.ErrorCircuitOpen {
					t.Fatalf("call after re-open: error %v, want circuit open", err)
				}
			}
		})
	}
}

// TestBreakerLetsOneProbeThrough: an open circuit (half-open while it
// probes) and a suspended one (still suspended while it probes) let one
// probe through at a time; calls during it are rejected without reaching
// the judge, and the probe's success closes the circuit.
func TestBreakerLetsOneProbeThrough(t *testing.T) {
	for _, tc := range []struct {
		name    string
		trip    scoring.ErrorType
		wait    time.Duration
		probing BreakerState
	}{
		{"open", scoring.ErrorJudgeUnavailable, DefaultOpenDuration, BreakerHalfOpen},
		{"suspended", scoring.ErrorJudgeAuth, DefaultAuthRetryInterval, BreakerSuspended},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newGuardClock()
			judge := newGuardSwitchJudge()
			b := NewBreaker(judge, BreakerConfig{FailureThreshold: 1, Now: clk.Now})
			judge.set(guardTypedErr(tc.trip))
			_, _ = b.Complete(t.Context(), scoring.Request{})
			release := make(chan struct{})
			entered := make(chan struct{})
			judge.reply = func(context.Context, int, scoring.Request) (scoring.Response, error) {
				close(entered)
				<-release
				return scoring.Response{Content: "{}"}, nil
			}
			clk.Advance(tc.wait)
			probeDone := make(chan error)
			go func() {
				_, err := b.Complete(context.Background(), scoring.Request{})
				probeDone <- err
			}()
			<-entered
			if b.State() != tc.probing {
				t.Fatalf("state during probe = %s, want %s", b.State(), tc.probing)
			}
			for range 3 {
				if _, err := b.Complete(t.Context(), scoring.Request{}); guardErrType(err) != scoring.ErrorCircuitOpen {
					t.Fatalf("call during probe: error %v, want circuit open", err)
				}
			}
			close(release)
			if err := <-probeDone; err != nil {
				t.Fatalf("probe: %v", err)
			}
			if b.State() != BreakerClosed {
				t.Fatalf("state after probe = %s, want closed", b.State())
			}
			if judge.Calls() != 2 {
				t.Fatalf("judge calls = %d, want 2 (failure + probe)", judge.Calls())
			}
		})
	}
}

func TestBreakerAuthErrorSuspends(t *testing.T) {
	clk := newGuardClock()
	judge := newGuardSwitchJudge()
	var mu sync.Mutex
	var changes []string
	b := NewBreaker(judge, BreakerConfig{
		AuthRetryInterval: time.Hour,
		Now:               clk.Now,
		OnStateChange: func(from, to BreakerState, cause error) {
			mu.Lock()
			defer mu.Unlock()
			changes = append(changes, fmt.Sprintf("%s->%s:%s", from, to, guardErrType(cause)))
		},
	})
	judge.set(guardTypedErr(scoring.ErrorJudgeAuth))
	_, _ = b.Complete(t.Context(), scoring.Request{})
	if b.State() != BreakerSuspended {
		t.Fatalf("state after one 401 = %s, want suspended", b.State())
	}
	clk.Advance(DefaultOpenDuration) // an open circuit would probe now
	if _, err := b.Complete(t.Context(), scoring.Request{}); guardErrType(err) != scoring.ErrorCircuitOpen {
		t.Fatalf("call while suspended: error %v, want circuit open", err)
	}
	// The probe is refused too: suspended for another interval, quietly.
	clk.Advance(time.Hour - DefaultOpenDuration)
	if _, err := b.Complete(t.Context(), scoring.Request{}); guardErrType(err) != scoring.ErrorJudgeAuth {
		t.Fatalf("refused probe: error %v, want judge_auth", err)
	}
	if b.State() != BreakerSuspended {
		t.Fatalf("state after a refused probe = %s, want suspended", b.State())
	}
	clk.Advance(time.Hour - time.Nanosecond)
	if _, err := b.Complete(t.Context(), scoring.Request{}); guardErrType(err) != scoring.ErrorCircuitOpen {
		t.Fatalf("call before the next probe: error %v, want circuit open", err)
	}
	// The key was fixed: the next probe closes the circuit.
	judge.set(nil)
	clk.Advance(time.Nanosecond)
	if _, err := b.Complete(t.Context(), scoring.Request{}); err != nil {
		t.Fatalf("probe after AuthRetryInterval: %v", err)
	}
	if b.State() != BreakerClosed {
		t.Fatalf("state after probe = %s, want closed", b.State())
	}
	if judge.Calls() != 3 {
		t.Fatalf("judge calls = %d, want 3 (the 401, the refused probe, the probe)", judge.Calls())
	}
	want := []string{"closed->suspended:judge_auth", "suspended->closed:"}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(changes) != fmt.Sprint(want) {
		t.Fatalf("state changes = %v, want %v", changes, want)
	}
}

func TestBreakerOnStateChangeOncePerTransition(t *testing.T) {
	clk := newGuardClock()
	judge := guardFailingJudge(guardTypedErr(scoring.ErrorJudgeRateLimited))
	var b *Breaker
	var changes []string
	b = NewBreaker(judge, BreakerConfig{
		FailureThreshold: 2,
		Now:              clk.Now,
		OnStateChange: func(from, to BreakerState, cause error) {
			// The hook may read the state: no deadlock, and it sees the new one.
			changes = append(changes, fmt.Sprintf("%s->%s:%s state=%s", from, to, guardErrType(cause), b.State()))
		},
	})
	for range 10 {
		_, _ = b.Complete(t.Context(), scoring.Request{})
	}
	clk.Advance(DefaultOpenDuration)
	_, _ = b.Complete(t.Context(), scoring.Request{})
	want := []string{
		"closed->open:judge_rate_limited state=open",
		"open->half_open: state=half_open",
		"half_open->open:judge_rate_limited state=open",
	}
	if fmt.Sprint(changes) != fmt.Sprint(want) {
		t.Fatalf("state changes = %v, want %v", changes, want)
	}
}

// Calls admitted before the circuit opened must not move it when they
// end late: a late success does not close it, late failures neither
// re-open it (one hook call, one log line) nor push the probe back.
func TestBreakerIgnoresStaleResults(t *testing.T) {
	for _, tc := range []struct {
		name    string
		lateErr error
	}{
		{"late success", nil},
		{"late failures", guardTypedErr(scoring.ErrorJudgeUnavailable)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newGuardClock()
			const late = 3
			release := make(chan struct{})
			entered := make(chan struct{}, late)
			judge := &guardJudge{reply: func(_ context.Context, call int, _ scoring.Request) (scoring.Response, error) {
				if call <= late {
					entered <- struct{}{}
					<-release
					return scoring.Response{Content: "{}"}, tc.lateErr
				}
				return scoring.Response{}, guardTypedErr(scoring.ErrorJudgeUnavailable)
			}}
			var transitions []string
			b := NewBreaker(judge, BreakerConfig{FailureThreshold: 1, Now: clk.Now,
				OnStateChange: func(from, to BreakerState, _ error) {
					transitions = append(transitions, fmt.Sprintf("%s->%s", from, to))
				}})
			var wg sync.WaitGroup
			for range late {
				wg.Go(func() { _, _ = b.Complete(context.Background(), scoring.Request{}) })
				<-entered
			}
			_, _ = b.Complete(t.Context(), scoring.Request{}) // opens at t0
			clk.Advance(DefaultOpenDuration / 2)
			close(release)
			wg.Wait()
			if b.State() != BreakerOpen {
				t.Fatalf("state after late results = %s, want open", b.State())
			}
			if fmt.Sprint(transitions) != "[closed->open]" {
				t.Fatalf("transitions = %v, want one closed->open", transitions)
			}
			clk.Advance(DefaultOpenDuration / 2) // OpenDuration after the opening failure
			_, _ = b.Complete(t.Context(), scoring.Request{})
			if judge.Calls() != late+2 {
				t.Fatalf("judge calls = %d, want a probe at OpenDuration after opening", judge.Calls())
			}
		})
	}
}

func TestBreakerHonoursDoneContext(t *testing.T) {
	clk := newGuardClock()
	judge := newGuardSwitchJudge()
	b := guardOpenBreaker(t, clk, judge, BreakerConfig{})
	clk.Advance(DefaultOpenDuration)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := b.Complete(ctx, scoring.Request{}); guardErrType(err) != scoring.ErrorCanceled || !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled caller: error %v, want %s", err, scoring.ErrorCanceled)
	}
	expired, cancel2 := context.WithDeadline(t.Context(), time.Unix(0, 0))
	defer cancel2()
	if _, err := b.Complete(expired, scoring.Request{}); guardErrType(err) != scoring.ErrorJudgeTimeout {
		t.Fatalf("expired caller: error %v, want %s", err, scoring.ErrorJudgeTimeout)
	}
	if judge.Calls() != 1 {
		t.Fatalf("judge calls = %d, want 1", judge.Calls())
	}
	// The done callers did not use up the probe.
	judge.set(nil)
	if _, err := b.Complete(t.Context(), scoring.Request{}); err != nil {
		t.Fatalf("probe: %v", err)
	}
	if b.State() != BreakerClosed {
		t.Fatalf("state = %s, want closed", b.State())
	}
}

// A probe whose caller gives up frees the probe slot for the next caller.
func TestBreakerAbandonedProbe(t *testing.T) {
	clk := newGuardClock()
	judge := newGuardSwitchJudge()
	b := guardOpenBreaker(t, clk, judge, BreakerConfig{})
	clk.Advance(DefaultOpenDuration)
	judge.set(guardTypedErr(scoring.ErrorCanceled))
	_, _ = b.Complete(t.Context(), scoring.Request{})
	if b.State() != BreakerHalfOpen {
		t.Fatalf("state after abandoned probe = %s, want half_open", b.State())
	}
	judge.set(nil)
	if _, err := b.Complete(t.Context(), scoring.Request{}); err != nil {
		t.Fatalf("next probe: %v", err)
	}
	if b.State() != BreakerClosed {
		t.Fatalf("state = %s, want closed", b.State())
	}
}
