package openai

import (
	"context"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/llm-eval/llm_eval/scoring"
)

// Retry defaults, used for zero fields of RetryPolicy.
const (
	DefaultMaxAttempts    = 3
	DefaultInitialBackoff = 500 * time.Millisecond
	DefaultMaxBackoff     = 10 * time.Second
	DefaultMultiplier     = 2.0
	DefaultMaxRetryAfter  = 30 * time.Second
)

// RetryPolicy says how a judge call is retried. Retried: HTTP 429, 5xx,
// connection errors and per-attempt timeouts. Never retried: other 4xx, an
// unusable reply, and the caller's own context ending. Every wait is bounded
// by the caller's context: when the next wait would end after its deadline
// the last error is returned at once. The zero value uses the defaults.
type RetryPolicy struct {
	// MaxAttempts counts the first try (default 3; 1 disables retries).
	MaxAttempts int
	// InitialBackoff is the upper bound of the first wait (default 500ms).
	InitialBackoff time.Duration
	// MaxBackoff caps the exponential bound (default 10s).
	MaxBackoff time.Duration
	// Multiplier grows the bound after each retry (default 2).
	Multiplier float64
	// MaxRetryAfter caps a server's Retry-After on 429 and 503 (default 30s).
	MaxRetryAfter time.Duration
	// AttemptTimeout bounds each attempt on its own (0: only the caller's
	// context and the HTTP client's timeout apply). An attempt that runs out
	// of it is retried.
	AttemptTimeout time.Duration

	// Test hooks: sleep waits d or until ctx ends; jitter returns [0,1);
	// now is the clock used for Retry-After dates and deadlines.
	sleep  func(ctx context.Context, d time.Duration) error
	jitter func() float64
	now    func() time.Time
}

// clock returns the current time on the policy's clock.
func (p RetryPolicy) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

// withDefaults fills zero fields.
func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.InitialBackoff <= 0 {
		p.InitialBackoff = DefaultInitialBackoff
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = DefaultMaxBackoff
	}
	if p.Multiplier < 1 {
		p.Multiplier = DefaultMultiplier
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if p.sleep == nil {
		p.sleep = sleepContext
	}
	if p.jitter == nil {
		p.jitter = rand.Float64
	}
	if p.now == nil {
		p.now = time.Now
	}
	return p
}

// backoff is the wait before retry number n (1-based): full jitter over an
// exponentially growing bound, or the server's Retry-After when it gave one.
func (p RetryPolicy) backoff(n int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, p.MaxRetryAfter)
	}
	bound := float64(p.InitialBackoff) * math.Pow(p.Multiplier, float64(n-1))
	bound = min(bound, float64(p.MaxBackoff))
	return time.Duration(p.jitter() * bound)
}

// attemptFailure is what one failed attempt tells the retry loop.
type attemptFailure struct {
	err        *scoring.Error
	retryable  bool
	retryAfter time.Duration // from the server, 0 if none
	// formatRefused: the endpoint rejected the response_format sent.
	formatRefused bool
	// notSent: the request never reached the endpoint: go-openai refused
	// to send it, no connection opened (refused, no route, name not
	// resolved), or the attempt ended before net/http had written it and
	// without a reply.
	notSent bool
}

// run calls attempt until it succeeds, fails for good, attempts run out or
// the next wait would outlast ctx. It returns the number of retries made and
// the last failure (nil on success). onRetry, if set, is told about every
// retry before its wait.
func (p RetryPolicy) run(ctx context.Context, onRetry func(retry int, err error, wait time.Duration), attempt func(ctx context.Context) *attemptFailure) (int, *attemptFailure) {
	p = p.withDefaults()
	for n := 1; ; n++ {
		f := p.once(ctx, attempt)
		if f == nil {
			return n - 1, nil
		}
		if !f.retryable || n >= p.MaxAttempts || ctx.Err() != nil {
			return n - 1, f
		}
		wait := p.backoff(n, f.retryAfter)
		if dl, ok := ctx.Deadline(); ok && !p.now().Add(wait).Before(dl) {
			return n - 1, f
		}
		if onRetry != nil {
			onRetry(n, f.err, wait)
		}
		if err := p.sleep(ctx, wait); err != nil {
			return n - 1, &attemptFailure{err: contextError(ctx, err)}
		}
	}
}

// once runs one attempt under AttemptTimeout.
func (p RetryPolicy) once(ctx context.Context, attempt func(ctx context.Context) *attemptFailure) *attemptFailure {
	if p.AttemptTimeout <= 0 {
		return attempt(ctx)
	}
	actx, cancel := context.WithTimeout(ctx, p.AttemptTimeout)
	defer cancel()
	return attempt(actx)
}

// contextError types the end of the caller's context.
func contextError(ctx context.Context, err error) *scoring.Error {
	if ctx.Err() == context.Canceled {
		return &scoring.Error{Type: scoring.ErrorCanceled, Err: err}
	}
	return &scoring.Error{Type: scoring.ErrorJudgeTimeout, Err: err}
}

func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// parseRetryAfter reads a Retry-After header: delay seconds or an HTTP date.
// It returns 0 when the header is absent, malformed or in the past.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 || math.IsNaN(secs) || math.IsInf(secs, 0) {
			return 0
		}
		return time.Duration(min(secs, float64(math.MaxInt64/int64(time.Second))) * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
