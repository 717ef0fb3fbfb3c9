package guard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/llm-eval/llm_eval/scoring"
)

// DefaultCompletionTokensEstimate is the completion size a Limiter charges
// before a reply tells the real one.
const DefaultCompletionTokensEstimate = 512

// LimiterConfig sets a Limiter's budgets. Zero budgets are unlimited.
type LimiterConfig struct {
	// RequestsPerMinute caps judge calls. Calls are paced evenly, one
	// every minute/RequestsPerMinute (60 -> one a second, no burst), which
	// also keeps every 60-second window at or under the cap.
	RequestsPerMinute int
	// TokensPerMinute caps prompt plus completion tokens in every
	// 60-second window. A call is charged an estimate before it is made
	// (prompt characters / 4 + CompletionTokensEstimate) and the charge is
	// replaced by the usage the judge reports. Up to a whole minute's
	// tokens may go in one burst; request pacing spreads them. A reply
	// that used more than its estimate can push one window over the cap;
	// later calls then wait until the excess has left the window.
	TokensPerMinute int
	// CompletionTokensEstimate is the completion size charged before the
	// reply. Default 512.
	CompletionTokensEstimate int
	// Now and After are the clock; nil means time.Now and time.After.
	// Tests inject a fake one.
	Now   func() time.Time
	After func(time.Duration) <-chan time.Time
}

// LimiterStats counts what a Limiter did.
type LimiterStats struct {
	// Admitted calls went to the judge; Delayed of them had to wait.
	Admitted, Delayed uint64
	// Rejected calls never went: too large for the budget, or their
	// context ended while they waited.
	Rejected uint64
}

// Limiter keeps the calls of every scorer sharing one judge within a
// request and a token budget per minute, so that the judge's own rate
// limits are not hit (no 429 storms). Calls wait in arrival order.
//
// A call that cannot get budget before its context ends returns an
// *Error of type ErrorBudgetExceeded wrapping context.DeadlineExceeded
// (at once when the context's deadline is already known to be too near),
// or of type ErrorCanceled when the context was canceled. A call larger
// than TokensPerMinute fails at once with ErrorBudgetExceeded. These types
// are neutral to a Breaker: they say nothing about the endpoint.
type Limiter struct {
	next     scoring.Judge
	cfg      LimiterConfig
	interval time.Duration // between request starts; 0 when unlimited

	mu       sync.Mutex
	nextSlot time.Time        // earliest start of the next request
	charges  []*limiterCharge // token charges of the last minute and of reservations, by time
	stats    LimiterStats
}

// limiterCharge is one call's token charge at its start time.
type limiterCharge struct {
	at     time.Time
	tokens int
}

// NewLimiter returns a Limiter in front of next.
func NewLimiter(next scoring.Judge, cfg LimiterConfig) *Limiter {
	if cfg.CompletionTokensEstimate <= 0 {
		cfg.CompletionTokensEstimate = DefaultCompletionTokensEstimate
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.After == nil {
		cfg.After = time.After
	}
	l := &Limiter{next: next, cfg: cfg}
	if cfg.RequestsPerMinute > 0 {
		// Rounded up so that RequestsPerMinute intervals never fit in
		// less than a minute.
		rpm := time.Duration(cfg.RequestsPerMinute)
		l.interval = (time.Minute + rpm - 1) / rpm
	}
	return l
}

// Stats returns the limiter's counters.
func (l *Limiter) Stats() LimiterStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}

// EstimateTokens is the charge a request gets before its reply: prompt
// characters (messages and schema) / 4, rounded up, plus
// CompletionTokensEstimate.
func (l *Limiter) EstimateTokens(req scoring.Request) int {
	chars := 0
	for _, m := range req.Messages {
		chars += utf8.RuneCountInString(m.Content)
	}
	if req.Schema != nil {
		chars += utf8.RuneCount(req.Schema.Schema)
	}
	return (chars+3)/4 + l.cfg.CompletionTokensEstimate
}

// Complete waits for budget, then calls the inner judge and replaces the
// estimated token charge with the reported usage.
func (l *Limiter) Complete(ctx context.Context, req scoring.Request) (scoring.Response, error) {
	if err := ctx.Err(); err != nil {
		return scoring.Response{}, guardContextError(err)
	}
	estimate := l.EstimateTokens(req)
	if l.cfg.TokensPerMinute > 0 && estimate > l.cfg.TokensPerMinute {
		l.count(func(s *LimiterStats) { s.Rejected++ })
		return scoring.Response{}, &scoring.Error{Type: scoring.ErrorBudgetExceeded, NotSent: true, Err: fmt.Errorf(
			"request needs about %d tokens, more than tokens_per_minute %d", estimate, l.cfg.TokensPerMinute)}
	}
	charge, prevSlot, wait := l.reserve(estimate)
	if wait > 0 {
		if err := l.wait(ctx, wait); err != nil {
			l.cancel(charge, prevSlot)
			return scoring.Response{}, err
		}
	}
	l.count(func(s *LimiterStats) {
		s.Admitted++
		if wait > 0 {
			s.Delayed++
		}
	})
	resp, err := l.next.Complete(ctx, req)
	l.reconcile(charge, resp, err)
	return resp, err
}

// reserve books the earliest start that keeps both budgets, after every
// earlier reservation, and returns how long to wait for it.
func (l *Limiter) reserve(tokens int) (charge *limiterCharge, prevSlot time.Time, wait time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.cfg.Now()
	l.prune(now)
	start := now
	if l.interval > 0 && l.nextSlot.After(start) {
		start = l.nextSlot
	}
	charge = &limiterCharge{tokens: tokens}
	if l.cfg.TokensPerMinute > 0 {
		if n := len(l.charges); n > 0 && l.charges[n-1].at.After(start) {
			start = l.charges[n-1].at
		}
		// The window at start is (start-1m, start]; move start past the
		// oldest charges until the new one fits.
		used := 0
		for _, c := range l.charges {
			used += c.tokens
		}
		for i := 0; used+tokens > l.cfg.TokensPerMinute && i < len(l.charges); i++ {
			used -= l.charges[i].tokens
			if out := l.charges[i].at.Add(time.Minute); out.After(start) {
				start = out
			}
		}
		l.charges = append(l.charges, charge)
	}
	charge.at = start
	prevSlot = l.nextSlot
	if l.interval > 0 {
		l.nextSlot = start.Add(l.interval)
	}
	return charge, prevSlot, start.Sub(now)
}

// prune drops charges that left the window.
func (l *Limiter) prune(now time.Time) {
	cut := 0
	for cut < len(l.charges) && !l.charges[cut].at.After(now.Add(-time.Minute)) {
		cut++
	}
	l.charges = slices.Delete(l.charges, 0, cut)
}

func (l *Limiter) wait(ctx context.Context, d time.Duration) error {
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < d {
		return &scoring.Error{Type: scoring.ErrorBudgetExceeded, NotSent: true, Err: fmt.Errorf(
			"judge budget frees up in %s, after the deadline: %w", d, context.DeadlineExceeded)}
	}
	select {
	case <-l.cfg.After(d):
		return nil
	case <-ctx.Done():
		err := ctx.Err()
		if errors.Is(err, context.DeadlineExceeded) {
			return &scoring.Error{Type: scoring.ErrorBudgetExceeded, NotSent: true, Err: fmt.Errorf("waiting for judge budget: %w", err)}
		}
		return &scoring.Error{Type: scoring.ErrorCanceled, NotSent: true, Err: fmt.Errorf("waiting for judge budget: %w", err)}
	}
}

// cancel gives back the reservation of a call that will not be made.
func (l *Limiter) cancel(charge *limiterCharge, prevSlot time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stats.Rejected++
	l.removeCharge(charge)
	// Later reservations were placed after this slot; free it only when
	// it is the last one.
	if l.interval > 0 && l.nextSlot.Equal(charge.at.Add(l.interval)) {
		l.nextSlot = prevSlot
	}
}

func (l *Limiter) removeCharge(charge *limiterCharge) {
	if i := slices.Index(l.charges, charge); i >= 0 {
		l.charges = slices.Delete(l.charges, i, i+1)
	}
}

// reconcile replaces the estimate with the usage the judge reported. A
// failed call keeps its estimate (the endpoint may have spent the tokens)
// unless the call was never made.
func (l *Limiter) reconcile(charge *limiterCharge, resp scoring.Response, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var e *scoring.Error
	switch {
	case err == nil:
		if used := resp.PromptTokens + resp.CompletionTokens; used > 0 {
			charge.tokens = used
		}
	case errors.As(err, &e) && e.Type == scoring.ErrorCircuitOpen:
		l.removeCharge(charge)
	}
}

func (l *Limiter) count(f func(*LimiterStats)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f(&l.stats)
}
