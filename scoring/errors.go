package scoring

import (
	"fmt"
	"time"
)

// ErrorType classifies why an evaluation failed. Its values are written as
// error.type on evaluation results.
type ErrorType string

// Error types.
const (
	ErrorJudgeUnavailable ErrorType = "judge_unavailable"  // connection refused, 5xx after retries
	ErrorJudgeTimeout     ErrorType = "judge_timeout"      // deadline exceeded, hung judge
	ErrorJudgeRateLimited ErrorType = "judge_rate_limited" // 429 after retries
	ErrorJudgeAuth        ErrorType = "judge_auth"         // 401 / 403
	ErrorJudgeBadRequest  ErrorType = "judge_bad_request"  // other 4xx
	ErrorJudgeParse       ErrorType = "judge_parse_error"  // unusable reply after one re-ask
	ErrorJudgeTruncated   ErrorType = "judge_truncated"    // reply cut at max tokens
	ErrorCircuitOpen      ErrorType = "judge_circuit_open" // endpoint failing, call not made
	ErrorBudgetExceeded   ErrorType = "judge_budget_exceeded"
	// ErrorBudgetExhausted: the money budget of the period is spent, call not made.
	ErrorBudgetExhausted ErrorType = "budget_exhausted"
	ErrorCanceled        ErrorType = "canceled"
	ErrorInvalidCase     ErrorType = "invalid_case"
)

// Error is a typed evaluation failure.
type Error struct {
	Type ErrorType
	Step string // pipeline step that failed, if any
	// Status is the judge's HTTP status when it answered with one (0 when
	// the failure had no reply, e.g. a timeout or a refused connection).
	Status int
	// RetryAfter is the wait the judge asked for in a Retry-After header,
	// 0 when it gave none.
	RetryAfter time.Duration
	// NotSent says the request never reached the judge: a guard refused
	// it (circuit open, no rate budget), its context ended while it
	// waited, no connection to the judge opened (refused, unresolved), or
	// the attempt ended before its request was written out.
	// Such a call costs nothing and is not counted in LLMCalls.
	NotSent bool
	Err     error
}

func (e *Error) Error() string {
	if e.Step != "" {
		return fmt.Sprintf("%s in %s step: %v", e.Type, e.Step, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Type, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Error types of evaluations that never produced a result because their
// span left first. The library never returns them; the processor writes
// them as markers on spans that leave unscored.
const (
	ErrorMaxWaitExceeded ErrorType = "max_wait_exceeded" // max_wait passed before the result
	ErrorShutdown        ErrorType = "shutdown"          // the processor shut down first
	ErrorQueueFull       ErrorType = "queue_full"        // queue_size spans were already waiting
	ErrorRestarted       ErrorType = "restarted"         // the collector restarted and max_wait had passed
)
