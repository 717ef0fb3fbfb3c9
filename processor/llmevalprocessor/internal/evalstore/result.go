package evalstore // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"

import (
	"errors"
	"time"

	"github.com/llm-eval/llm_eval/scoring"
)

// Result is one scorer's finished evaluation of one item.
type Result struct {
	Scorer string // configured scorer name
	Result scoring.Result
	At     time.Time // when the result was produced
	Ran    bool      // a scorer was run (not found not scorable up front)
	// Skipped: the scorer does not apply to the item (its include,
	// exclude or when); the result is not written or counted.
	Skipped bool
}

// Label is the result's verdict; anything unknown counts as an error.
func (r Result) Label() scoring.Label {
	switch r.Result.Label {
	case scoring.LabelPass, scoring.LabelFail, scoring.LabelNotScorable:
		return r.Result.Label
	}
	return scoring.LabelError
}

// ErrorType is the error.type of a failed evaluation (ErrorType of its
// error).
func (r Result) ErrorType() string { return ErrorType(r.Result.Err) }

// Explanation is the reason of a verdict, or the message of a failure,
// scrubbed by redact.
func (r Result) Explanation(redact func(string) string) string {
	if r.Label() != scoring.LabelError {
		return redact(r.Result.Reason)
	}
	if r.Result.Err != nil {
		return redact(r.Result.Err.Error())
	}
	if r.Result.Reason != "" {
		return redact(r.Result.Reason)
	}
	return missingLabelErrorMsg
}

// Names written for a failed evaluation.
const (
	otherErrorType       = "_OTHER"
	missingLabelErrorMsg = "scorer returned no verdict"
)

// ErrorType is the scoring error type of err, or _OTHER.
func ErrorType(err error) string {
	var se *scoring.Error
	if errors.As(err, &se) && se.Type != "" {
		return string(se.Type)
	}
	return otherErrorType
}

// ErrorResult is a failed evaluation of type t.
func ErrorResult(t scoring.ErrorType, err error) scoring.Result {
	return scoring.Result{Label: scoring.LabelError, Err: &scoring.Error{Type: t, Err: err}}
}

// unfinishedResult is the marker written for an evaluation that had not
// finished when its item left.
func unfinishedResult(scorer string, why leaveReason, at time.Time) Result {
	t, msg := scoring.ErrorMaxWaitExceeded, "max_wait passed before the evaluation finished"
	switch why {
	case leftShutdown:
		t, msg = scoring.ErrorShutdown, "the processor shut down before the evaluation finished"
	case leftRestarted:
		t, msg = scoring.ErrorRestarted, "the collector restarted after max_wait had passed; the evaluation did not finish before"
	}
	return Result{Scorer: scorer, At: at, Result: ErrorResult(t, errors.New(msg))}
}
