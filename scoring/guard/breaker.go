package guard

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/llm-eval/llm_eval/scoring"
)

// BreakerState is the state of a Breaker, reported for telemetry.
type BreakerState string

// Breaker states.
const (
	// BreakerClosed lets every call through.
	BreakerClosed BreakerState = "closed"
	// BreakerOpen rejects every call until OpenDuration has passed.
	BreakerOpen BreakerState = "open"
	// BreakerHalfOpen lets one probe call through; others are rejected.
	BreakerHalfOpen BreakerState = "half_open"
	// BreakerSuspended rejects every call after the judge refused the
	// credentials but one probe call every AuthRetryInterval, and stays
	// suspended, without a transition, while the probes are refused too.
	BreakerSuspended BreakerState = "suspended"
)

// Breaker defaults. A refused key is probed every few seconds: a refused
// call costs no tokens, and a key fixed at the provider (or a gateway) is
// used again within seconds.
const (
	DefaultFailureThreshold  = 5
	DefaultOpenDuration      = 30 * time.Second
	DefaultAuthRetryInterval = 5 * time.Second
)

// ErrBreakerOpen is wrapped by the *Error (type ErrorCircuitOpen) a Breaker
// returns for a call it did not make.
var ErrBreakerOpen = errors.New("judge circuit open")

// BreakerConfig tunes a Breaker. The zero value uses the defaults.
type BreakerConfig struct {
	// FailureThreshold is how many consecutive endpoint failures
	// (judge_unavailable, judge_timeout, judge_rate_limited, counted after
	// the inner judge's own retries) open the circuit. Default 5.
	FailureThreshold int
	// OpenDuration is how long the circuit stays open before one probe
	// call is let through. Default 30s.
	OpenDuration time.Duration
	// AuthRetryInterval is how often a breaker suspended by a judge_auth
	// error (401/403) lets one probe call through. Default 5s.
	AuthRetryInterval time.Duration
	// OnStateChange, when set, is called once per state transition with
	// the error that caused it (nil when closing or half-opening). Calls
	// are made in transition order, without the breaker's lock held; the
	// hook must not block.
	OnStateChange func(from, to BreakerState, cause error)
	// Now is the clock; nil means time.Now. Tests inject a fake one.
	Now func() time.Time
}

// Breaker is a circuit breaker in front of one judge endpoint. It stops
// calling an endpoint that keeps failing, so that an outage or a revoked
// key costs one error line and no traffic instead of a storm of doomed
// requests. A reply from the endpoint, even an unusable one (parse error,
// bad request, truncated), proves the endpoint is up: it resets the
// failure count and does not count as a failure. Untyped errors count as
// judge_unavailable; a caller's own cancellation (canceled) is neutral.
//
// Wrap it outermost, NewBreaker(NewLimiter(judge, ...), ...), so that an
// open circuit fails fast instead of first waiting for rate budget.
type Breaker struct {
	next scoring.Judge
	cfg  BreakerConfig

	mu           sync.Mutex
	state        BreakerState
	gen          uint64 // bumped on every transition; stale results are ignored
	failures     int
	reopenAt     time.Time
	probing      bool
	lastCause    error
	stateChanges []breakerTransition // pending hook calls, drained in order

	notifyMu sync.Mutex // serialises hook calls so they arrive in order
}

type breakerTransition struct {
	from, to BreakerState
	cause    error
}

// NewBreaker returns a Breaker in front of next.
func NewBreaker(next scoring.Judge, cfg BreakerConfig) *Breaker {
	if cfg.FailureThreshold <= 0 {
		cfg.FailureThreshold = DefaultFailureThreshold
	}
	if cfg.OpenDuration <= 0 {
		cfg.OpenDuration = DefaultOpenDuration
	}
	if cfg.AuthRetryInterval <= 0 {
		cfg.AuthRetryInterval = DefaultAuthRetryInterval
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Breaker{next: next, cfg: cfg, state: BreakerClosed}
}

// State returns the breaker's current state. An open or suspended breaker
// whose wait is over still reports open or suspended until the next call
// half-opens it.
func (b *Breaker) State() BreakerState {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state
}

// breakerOutcome is how one call's result affects the circuit.
type breakerOutcome int

const (
	breakerNeutral breakerOutcome = iota // the caller gave up: tells nothing
	breakerHealthy                       // the endpoint replied
	breakerFailure                       // the endpoint is failing
	breakerAuth                          // the endpoint refused the credentials
)

func classifyBreakerOutcome(err error) breakerOutcome {
	if err == nil {
		return breakerHealthy
	}
	var e *scoring.Error
	if errors.As(err, &e) {
		switch e.Type {
		case scoring.ErrorJudgeUnavailable, scoring.ErrorJudgeTimeout, scoring.ErrorJudgeRateLimited:
			return breakerFailure
		case scoring.ErrorJudgeAuth:
			return breakerAuth
		case scoring.ErrorJudgeParse, scoring.ErrorJudgeBadRequest, scoring.ErrorJudgeTruncated:
			return breakerHealthy
		default: // canceled, budget exceeded, circuit open of an inner breaker, invalid case
			return breakerNeutral
		}
	}
	switch {
	case errors.Is(err, context.Canceled):
		return breakerNeutral
	case errors.Is(err, context.DeadlineExceeded):
		return breakerFailure
	default:
		return breakerFailure
	}
}

// Complete calls the inner judge unless the circuit is open, in which case
// it returns at once an *Error of type ErrorCircuitOpen. A caller whose ctx
// is already done gets the context error (ErrorCanceled or
// ErrorJudgeTimeout) without a call and without affecting the circuit.
func (b *Breaker) Complete(ctx context.Context, req scoring.Request) (scoring.Response, error) {
	if err := ctx.Err(); err != nil {
		return scoring.Response{}, guardContextError(err)
	}
	gen, probe, err := b.admit()
	if err != nil {
		return scoring.Response{}, err
	}
	resp, callErr := b.next.Complete(ctx, req)
	b.record(gen, probe, callErr)
	return resp, callErr
}

// admit decides whether a call may go through, half-opening the circuit
// when its wait is over.
func (b *Breaker) admit() (gen uint64, probe bool, err error) {
	b.mu.Lock()
	defer b.notify()
	defer b.mu.Unlock()
	switch b.state {
	case BreakerClosed:
		return b.gen, false, nil
	case BreakerOpen:
		if b.cfg.Now().Before(b.reopenAt) {
			return 0, false, b.rejection()
		}
		b.transition(BreakerHalfOpen, nil)
		b.probing = true
		return b.gen, true, nil
	case BreakerSuspended:
		// The probe of a refused key goes without a transition: one
		// every AuthRetryInterval until the key works, and one log line.
		if b.probing || b.cfg.Now().Before(b.reopenAt) {
			return 0, false, b.rejection()
		}
		b.probing = true
		return b.gen, true, nil
	default: // half open
		if b.probing {
			return 0, false, b.rejection()
		}
		b.probing = true
		return b.gen, true, nil
	}
}

func (b *Breaker) rejection() error {
	var err error
	switch b.state {
	case BreakerSuspended:
		err = fmt.Errorf("%w: evaluation suspended after the judge refused the credentials (probed every %s): %v",
			ErrBreakerOpen, b.cfg.AuthRetryInterval, b.lastCause)
	case BreakerHalfOpen:
		err = fmt.Errorf("%w: a probe call is in flight", ErrBreakerOpen)
	default:
		err = fmt.Errorf("%w after %d consecutive failures (probe after %s): %v",
			ErrBreakerOpen, b.cfg.FailureThreshold, b.reopenAt.Format(time.RFC3339), b.lastCause)
	}
	return &scoring.Error{Type: scoring.ErrorCircuitOpen, NotSent: true, Err: err}
}

// record applies one call's result to the circuit.
func (b *Breaker) record(gen uint64, probe bool, callErr error) {
	outcome := classifyBreakerOutcome(callErr)
	b.mu.Lock()
	defer b.notify()
	defer b.mu.Unlock()
	if outcome == breakerAuth && b.state != BreakerSuspended {
		// A refused key stops evaluation whatever the circuit was doing.
		b.suspend(callErr)
		return
	}
	if gen != b.gen {
		return // the call was admitted before the last transition
	}
	if probe {
		switch outcome {
		case breakerHealthy:
			b.failures = 0
			b.transition(BreakerClosed, nil)
		case breakerFailure:
			b.open(callErr)
		case breakerAuth: // still refused: probe again later
			b.probing = false
			b.lastCause = callErr
			b.reopenAt = b.cfg.Now().Add(b.cfg.AuthRetryInterval)
		default: // the prober gave up: let the next caller probe
			b.probing = false
		}
		return
	}
	switch outcome {
	case breakerHealthy:
		b.failures = 0
	case breakerFailure:
		b.failures++
		if b.failures >= b.cfg.FailureThreshold {
			b.open(callErr)
		}
	}
}

func (b *Breaker) open(cause error) {
	b.lastCause = cause
	b.reopenAt = b.cfg.Now().Add(b.cfg.OpenDuration)
	b.transition(BreakerOpen, cause)
}

func (b *Breaker) suspend(cause error) {
	b.lastCause = cause
	b.reopenAt = b.cfg.Now().Add(b.cfg.AuthRetryInterval)
	b.transition(BreakerSuspended, cause)
}

// transition changes state under b.mu and queues the hook call.
func (b *Breaker) transition(to BreakerState, cause error) {
	from := b.state
	b.state = to
	b.gen++
	b.probing = false
	if to == BreakerClosed {
		b.failures = 0
		b.lastCause = nil
	}
	if b.cfg.OnStateChange != nil {
		b.stateChanges = append(b.stateChanges, breakerTransition{from: from, to: to, cause: cause})
	}
}

// notify runs queued hook calls in order, outside b.mu so that a hook may
// call State.
func (b *Breaker) notify() {
	if b.cfg.OnStateChange == nil {
		return
	}
	b.notifyMu.Lock()
	defer b.notifyMu.Unlock()
	for {
		b.mu.Lock()
		pending := b.stateChanges
		b.stateChanges = nil
		b.mu.Unlock()
		if len(pending) == 0 {
			return
		}
		for _, t := range pending {
			b.cfg.OnStateChange(t.from, t.to, t.cause)
		}
	}
}

// guardContextError types a caller's context error that ended a call
// before it was sent.
func guardContextError(err error) *scoring.Error {
	if errors.Is(err, context.DeadlineExceeded) {
		return &scoring.Error{Type: scoring.ErrorJudgeTimeout, NotSent: true, Err: err}
	}
	return &scoring.Error{Type: scoring.ErrorCanceled, NotSent: true, Err: err}
}
