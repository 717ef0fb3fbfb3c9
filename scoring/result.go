package scoring

import (
	"fmt"
	"time"
)

// Label is the verdict of one evaluation.
type Label string

// Labels a Result can carry.
const (
	LabelPass        Label = "pass"
	LabelFail        Label = "fail"
	LabelNotScorable Label = "not_scorable"
	LabelError       Label = "error"
)

// Result is the outcome of scoring one Case with one scorer.
type Result struct {
	// Scorer is the scorer's name: a built-in scorer's (bias,
	// hallucination, ...) or a criteria or checks scorer's configured name.
	Scorer string `json:"scorer"`
	// Score is meaningful only when Label is pass or fail (see Scored).
	Score float64 `json:"score"`
	Label Label   `json:"label"`
	// Reason explains the score, or why the case was not scorable.
	Reason string `json:"reason,omitempty"`
	Steps  Steps  `json:"steps"`
	Usage  Usage  `json:"usage"`
	// Truncated is set when text the scorer sends to the judge was cut to
	// Options.MaxInputChars, or its trajectory was bounded. A cut field the
	// scorer does not send (bias never sends the input) does not set it.
	Truncated bool `json:"truncated,omitempty"`
	// JudgeModel is the model that answered the evaluation's judge calls,
	// as the judge names it (Response.Model); models of several judges (a
	// fallback judge mid-evaluation) are joined by commas. Empty when no
	// call was answered, or the judge does not name its model.
	JudgeModel string `json:"judge_model,omitempty"`
	// PromptVersion identifies the scorer's prompts: a hash of its step
	// templates and reply schemas, so that a score change after a prompt
	// change can be told from a change in the application. Empty for a
	// scorer that sends no prompt (checks).
	PromptVersion string `json:"prompt_version,omitempty"`
	// Err is set when Label is LabelError; it is an *Error.
	Err error `json:"-"`
	// ReasonErr is set when the reason step failed after the score was
	// set: the score and label stand, Reason holds the summary built from
	// the verdicts instead, and this *Error (Step StepReason) says why.
	ReasonErr error `json:"-"`
}

// PromptVersion changes whenever a prompt template changes, so cached
// results of older prompts are not reused.
const PromptVersion = "9"

// Scored reports whether the result carries a score.
func (r Result) Scored() bool { return r.Label == LabelPass || r.Label == LabelFail }

// Usage is what an evaluation cost.
type Usage struct {
	LLMCalls         int `json:"llm_calls"`
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// Retries counts the judge's retried attempts behind the calls
	// (429, 5xx, timeouts); they are not in LLMCalls.
	Retries int           `json:"retries"`
	Latency time.Duration `json:"latency_ns"`
	// NotSent counts the calls that never reached the judge (circuit
	// open, no rate budget); they are not in LLMCalls.
	NotSent int `json:"not_sent_calls,omitempty"`
}

// Add accumulates another call's usage into u.
func (u *Usage) Add(o Usage) {
	u.LLMCalls += o.LLMCalls
	u.PromptTokens += o.PromptTokens
	u.CompletionTokens += o.CompletionTokens
	u.Retries += o.Retries
	u.Latency += o.Latency
	u.NotSent += o.NotSent
}

// Steps holds each pipeline step's result in the shapes of the reference
// scorers (each scorer's package has their types), and the prompts sent
// when the scorer is verbose.
type Steps struct {
	Preprocess       any    `json:"preprocessStepResult,omitempty"`
	PreprocessPrompt string `json:"preprocessPrompt,omitempty"`
	Analyze          any    `json:"analyzeStepResult,omitempty"`
	AnalyzePrompt    string `json:"analyzePrompt,omitempty"`
	Reason           any    `json:"generateReasonStepResult,omitempty"`
	ReasonPrompt     string `json:"generateReasonPrompt,omitempty"`
	// ReasonError is the text of Result.ReasonErr, kept with the steps.
	ReasonError string `json:"generateReasonError,omitempty"`
}

// ReasonResult is the reason step's result.
type ReasonResult struct {
	Reason string `json:"reason"`
}

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
