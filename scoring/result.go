package scoring

import "time"

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
	// Err is set when Label is LabelError; it is an *Error.
	Err error `json:"-"`
	// ReasonErr is set when the reason step failed after the score was
	// set: the score and label stand, Reason holds the summary built from
	// the verdicts instead, and this *Error (Step StepReason) says why.
	ReasonErr error `json:"-"`
}

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
