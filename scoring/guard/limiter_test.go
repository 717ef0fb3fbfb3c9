package guard

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llm-eval/llm_eval/scoring"
)

// limiterRecorder is a judge that records when each call reached it (on
// the fake clock) and reports a fixed usage.
type limiterRecorder struct {
	clk   *guardClock
	usage func(req scoring.Request) (prompt, completion int)

	mu     sync.Mutex
	starts []time.Time
	tokens []int
}

func (r *limiterRecorder) Complete(_ context.Context, req scoring.Request) (scoring.Response, error) {
	p, c := r.usage(req)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.starts = append(r.starts, r.clk.Now())
	r.tokens = append(r.tokens, p+c)
	return scoring.Response{Content: "{}", PromptTokens: p, CompletionTokens: c}, nil
}

// limiterRunAll makes n concurrent calls and drives the fake clock until
// all have returned, without sleeping.
func limiterRunAll(t *testing.T, clk *guardClock, l *Limiter, n int, req scoring.Request) {
	t.Helper()
	errs := make(chan error, n)
	base := clk.marksNow()
	for range n {
		go func() {
			_, err := l.Complete(context.Background(), req)
			errs <- err
			clk.mark()
		}()
	}
	for {
		finished := false
		clk.waitUntil(func(timers, marks int) bool {
			finished = marks-base == n
			return timers+marks-base == n
		})
		if finished {
			break
		}
		clk.AdvanceToNextTimer()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatalf("call: %v", err)
		}
	}
}

// limiterMaxPerMinute returns the largest total weight of calls starting in any
// 60-second window [s, s+1m).
func limiterMaxPerMinute(starts []time.Time, weights []int) int {
	most := 0
	for _, s := range starts {
		sum := 0
		for j, t := range starts {
			if !t.Before(s) && t.Before(s.Add(time.Minute)) {
				sum += weights[j]
			}
		}
		most = max(most, sum)
	}
	return most
}

func TestLimiterRequestsPerMinute(t *testing.T) {
	clk := newGuardClock()
	t0 := clk.Now()
	rec := &limiterRecorder{clk: clk, usage: func(scoring.Request) (int, int) { return 10, 10 }}
	l := NewLimiter(rec, LimiterConfig{RequestsPerMinute: 60, Now: clk.Now, After: clk.After})
	limiterRunAll(t, clk, l, 150, scoring.Request{})

	ones := slices.Repeat([]int{1}, len(rec.starts))
	if got := limiterMaxPerMinute(rec.starts, ones); got > 60 {
		t.Fatalf("%d requests in one minute, want <= 60", got)
	}
	// Paced at one a second, no burst, no time lost.
	slices.SortFunc(rec.starts, time.Time.Compare)
	for i, s := range rec.starts {
		if want := t0.Add(time.Duration(i) * time.Second); !s.Equal(want) {
			t.Fatalf("request %d started at +%s, want +%s", i, s.Sub(t0), want.Sub(t0))
		}
	}
	if st := l.Stats(); st.Admitted != 150 || st.Delayed != 149 || st.Rejected != 0 {
		t.Fatalf("stats = %+v, want 150 admitted, 149 delayed", st)
	}
}

func TestLimiterRequestIntervalRoundsUp(t *testing.T) {
	clk := newGuardClock()
	rec := &limiterRecorder{clk: clk, usage: func(scoring.Request) (int, int) { return 1, 1 }}
	// 60s/7 is not a whole number of nanoseconds: 8 requests must not fit
	// in one minute.
	l := NewLimiter(rec, LimiterConfig{RequestsPerMinute: 7, Now: clk.Now, After: clk.After})
	limiterRunAll(t, clk, l, 15, scoring.Request{})
	if got := limiterMaxPerMinute(rec.starts, slices.Repeat([]int{1}, 15)); got > 7 {
		t.Fatalf("%d requests in one minute, want <= 7", got)
	}
}

func TestLimiterTokensPerMinute(t *testing.T) {
	clk := newGuardClock()
	t0 := clk.Now()
	rec := &limiterRecorder{clk: clk, usage: func(scoring.Request) (int, int) { return 100, 100 }}
	l := NewLimiter(rec, LimiterConfig{
		TokensPerMinute:          1000,
		CompletionTokensEstimate: 100,
		Now:                      clk.Now,
		After:                    clk.After,
	})
	req := scoring.Request{Messages: []scoring.Message{{Role: "user", Content: strings.Repeat("a", 400)}}}
	if got := l.EstimateTokens(req); got != 200 {
		t.Fatalf("estimate = %d, want 400/4 + 100", got)
	}
	limiterRunAll(t, clk, l, 12, req)
	if got := limiterMaxPerMinute(rec.starts, rec.tokens); got > 1000 {
		t.Fatalf("%d tokens in one minute, want <= 1000", got)
	}
	// A minute's budget may go at once: 5 calls per minute.
	perMinute := map[time.Duration]int{}
	for _, s := range rec.starts {
		perMinute[s.Sub(t0)]++
	}
	want := map[time.Duration]int{0: 5, time.Minute: 5, 2 * time.Minute: 2}
	if len(perMinute) != len(want) {
		t.Fatalf("starts = %v, want %v", perMinute, want)
	}
	for at, n := range want {
		if perMinute[at] != n {
			t.Fatalf("starts = %v, want %v", perMinute, want)
		}
	}
}

// limiterStart makes one call and reports whether it went to the judge
// without waiting for the clock; if it waits, the clock is advanced until
// it is through. It returns how long the call waited.
func limiterStart(t *testing.T, clk *guardClock, l *Limiter, req scoring.Request) time.Duration {
	t.Helper()
	start := clk.Now()
	base := clk.marksNow()
	errc := make(chan error, 1)
	go func() {
		_, err := l.Complete(context.Background(), req)
		errc <- err
		clk.mark()
	}()
	for {
		finished := false
		clk.waitUntil(func(timers, marks int) bool {
			finished = marks > base
			return finished || timers > 0
		})
		if finished {
			break
		}
		clk.AdvanceToNextTimer()
	}
	if err := <-errc; err != nil {
		t.Fatalf("call: %v", err)
	}
	return clk.Now().Sub(start)
}

func TestLimiterReconcilesWithReportedUsage(t *testing.T) {
	for _, tc := range []struct {
		name     string
		reported int // tokens the judge reports per call (estimate 600)
		waits    []bool
	}{
		// Charged 600 each without reconciliation: the second call would wait.
		{"smaller usage is refunded", 100, []bool{false, false, false, false}},
		// The judge used more than estimated: the next call waits for it.
		{"larger usage is charged", 900, []bool{false, true, true}},
		// No usage reported: the estimate stays.
		{"no usage keeps the estimate", 0, []bool{false, true, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newGuardClock()
			rec := &limiterRecorder{clk: clk, usage: func(scoring.Request) (int, int) { return tc.reported, 0 }}
			l := NewLimiter(rec, LimiterConfig{
				TokensPerMinute:          1000,
				CompletionTokensEstimate: 600,
				Now:                      clk.Now,
				After:                    clk.After,
			})
			for i, wantWait := range tc.waits {
				waited := limiterStart(t, clk, l, scoring.Request{})
				if (waited > 0) != wantWait {
					t.Fatalf("call %d waited %s, want wait=%v", i, waited, wantWait)
				}
			}
		})
	}
}

func TestLimiterRejectsRequestLargerThanBudget(t *testing.T) {
	judge := &guardJudge{}
	l := NewLimiter(judge, LimiterConfig{TokensPerMinute: 100, CompletionTokensEstimate: 50})
	_, err := l.Complete(t.Context(), scoring.Request{Messages: []scoring.Message{{Content: strings.Repeat("x", 400)}}})
	if guardErrType(err) != scoring.ErrorBudgetExceeded {
		t.Fatalf("error = %v, want %s", err, scoring.ErrorBudgetExceeded)
	}
	if judge.Calls() != 0 {
		t.Fatalf("judge calls = %d, want 0", judge.Calls())
	}
}

func TestLimiterContextEndsWhileWaiting(t *testing.T) {
	clk := newGuardClock()
	t0 := clk.Now()
	rec := &limiterRecorder{clk: clk, usage: func(scoring.Request) (int, int) { return 1, 1 }}
	l := NewLimiter(rec, LimiterConfig{RequestsPerMinute: 1, Now: clk.Now, After: clk.After})
	if waited := limiterStart(t, clk, l, scoring.Request{}); waited != 0 {
		t.Fatalf("first call waited %s", waited)
	}

	// Canceled while waiting for the next slot.
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := l.Complete(ctx, scoring.Request{})
		errc <- err
	}()
	clk.waitUntil(func(timers, _ int) bool { return timers == 1 })
	cancel()
	if err := <-errc; guardErrType(err) != scoring.ErrorCanceled || !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled waiter: error %v, want %s", err, scoring.ErrorCanceled)
	}

	// A deadline before the next slot fails at once.
	dctx, dcancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer dcancel()
	_, err := l.Complete(dctx, scoring.Request{})
	if guardErrType(err) != scoring.ErrorBudgetExceeded || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiter past its deadline: error %v, want %s wrapping the deadline", err, scoring.ErrorBudgetExceeded)
	}

	// Neither gave-up call kept its slot: the next call gets the one at +1m.
	limiterStart(t, clk, l, scoring.Request{})
	if len(rec.starts) != 2 || !rec.starts[1].Equal(t0.Add(time.Minute)) {
		t.Fatalf("starts = %v, want the second at +1m", rec.starts)
	}
	if st := l.Stats(); st.Rejected != 2 || st.Admitted != 2 {
		t.Fatalf("stats = %+v, want 2 admitted, 2 rejected", st)
	}
}

func TestLimiterUnlimitedByDefault(t *testing.T) {
	clk := newGuardClock()
	rec := &limiterRecorder{clk: clk, usage: func(scoring.Request) (int, int) { return 1e6, 1e6 }}
	l := NewLimiter(rec, LimiterConfig{Now: clk.Now, After: clk.After})
	for range 100 {
		if waited := limiterStart(t, clk, l, scoring.Request{}); waited != 0 {
			t.Fatalf("unlimited call waited %s", waited)
		}
	}
}

// A call an inner breaker refused used no tokens: its charge is returned.
func TestLimiterRefundsCallsNotMade(t *testing.T) {
	clk := newGuardClock()
	var refuse atomic.Bool
	refuse.Store(true)
	judge := &guardJudge{reply: func(context.Context, int, scoring.Request) (scoring.Response, error) {
		if refuse.Load() {
			return scoring.Response{}, guardTypedErr(scoring.ErrorCircuitOpen)
		}
		return scoring.Response{Content: "{}", PromptTokens: 400}, nil
	}}
	l := NewLimiter(judge, LimiterConfig{
		TokensPerMinute: 1000, CompletionTokensEstimate: 600, Now: clk.Now, After: clk.After,
	})
	for i := range 3 {
		base := clk.marksNow()
		errc := make(chan error, 1)
		go func() {
			_, err := l.Complete(context.Background(), scoring.Request{})
			errc <- err
			clk.mark()
		}()
		clk.waitUntil(func(timers, marks int) bool { return timers > 0 || marks > base })
		if len(errc) == 0 {
			t.Fatalf("refused call %d waited for budget", i)
		}
		if err := <-errc; guardErrType(err) != scoring.ErrorCircuitOpen {
			t.Fatalf("call %d: error %v, want circuit open", i, err)
		}
	}
	refuse.Store(false)
	if waited := limiterStart(t, clk, l, scoring.Request{}); waited != 0 {
		t.Fatalf("call after refused calls waited %s", waited)
	}
}

// Calls get budget in arrival order: a small call that would fit now does
// not overtake a large one already waiting, which keeps large calls from
// starving.
func TestLimiterServesInArrivalOrder(t *testing.T) {
	clk := newGuardClock()
	t0 := clk.Now()
	var mu sync.Mutex
	starts := map[int]time.Time{} // by estimated tokens
	releaseFirst := make(chan struct{})
	firstEntered := make(chan struct{})
	judge := &guardJudge{reply: func(_ context.Context, call int, req scoring.Request) (scoring.Response, error) {
		mu.Lock()
		starts[len(req.Messages[0].Content)/4+1] = clk.Now()
		mu.Unlock()
		if call == 1 {
			close(firstEntered)
			<-releaseFirst
			return scoring.Response{Content: "{}", PromptTokens: 100}, nil // estimated 800
		}
		return scoring.Response{Content: "{}"}, nil
	}}
	l := NewLimiter(judge, LimiterConfig{
		TokensPerMinute: 1000, CompletionTokensEstimate: 1, Now: clk.Now, After: clk.After,
	})
	sized := func(tokens int) scoring.Request {
		return scoring.Request{Messages: []scoring.Message{{Content: strings.Repeat("a", 4*(tokens-1))}}}
	}
	firstDone := make(chan struct{})
	go func() { // at t0, in flight
		_, _ = l.Complete(context.Background(), sized(800))
		close(firstDone)
	}()
	<-firstEntered
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = l.Complete(context.Background(), sized(600)) }) // waits for t0+1m
	clk.waitUntil(func(timers, _ int) bool { return timers == 1 })
	close(releaseFirst) // the first call used 100 tokens, not 800
	<-firstDone
	// 100 + 600 + 150 fit in the minute now, but the 150 call came last.
	base := clk.marksNow()
	wg.Go(func() {
		_, _ = l.Complete(context.Background(), sized(150))
		clk.mark()
	})
	clk.waitUntil(func(timers, marks int) bool { return timers == 2 || marks > base })
	clk.Advance(time.Minute)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	want := map[int]time.Time{800: t0, 600: t0.Add(time.Minute), 150: t0.Add(time.Minute)}
	for tokens, at := range want {
		if !starts[tokens].Equal(at) {
			t.Fatalf("the %d token call started at +%s, want +%s", tokens, starts[tokens].Sub(t0), at.Sub(t0))
		}
	}
}
