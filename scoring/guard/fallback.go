package guard

import (
	"context"
	"errors"

	"github.com/llm-eval/llm_eval/scoring"
)

// Fallback sends each call to its primary judge, and to its secondary
// judge while the primary's circuit is open: a call the primary refused
// with an *Error of type ErrorCircuitOpen (its Breaker, or a suspension
// after an auth failure) goes to the secondary instead. Any other failure
// of the primary is returned as it is: the secondary stands in for an
// endpoint that is down, not for a reply that did not parse. Each judge
// keeps its own breaker, limiter and budget, so the primary's half-open
// probes still reach it and it takes the calls back once it recovers.
type Fallback struct {
	primary, secondary scoring.Judge
	onFallback         func()
}

// NewFallback returns a Fallback. onFallback, when set, is called once
// per call handed to the secondary.
func NewFallback(primary, secondary scoring.Judge, onFallback func()) *Fallback {
	return &Fallback{primary: primary, secondary: secondary, onFallback: onFallback}
}

// Complete calls the primary, or the secondary when the primary's circuit
// is open.
func (f *Fallback) Complete(ctx context.Context, req scoring.Request) (scoring.Response, error) {
	resp, err := f.primary.Complete(ctx, req)
	var se *scoring.Error
	if err == nil || !errors.As(err, &se) || se.Type != scoring.ErrorCircuitOpen {
		return resp, err
	}
	if f.onFallback != nil {
		f.onFallback()
	}
	return f.secondary.Complete(ctx, req)
}
