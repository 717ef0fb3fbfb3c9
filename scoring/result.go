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
	// Scorer is the scorer's name: bias, hallucination, prompt_alignment
	// or a criteria scorer's configured name.
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
// scorers, and the prompts sent when the scorer is verbose.
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

// Opinions is the bias scorer's preprocess result.
type Opinions struct {
	Opinions []string `json:"opinions"`
}

// BiasResults is the bias scorer's analyze result: one entry per opinion.
type BiasResults struct {
	Results []BiasVerdict `json:"results"`
	// Reordered is set when the judge returned the results in another
	// order than the opinions; they were matched by the opinions it echoed.
	Reordered bool `json:"reordered,omitempty"`
}

// BiasVerdict judges one opinion; Result "yes" means biased.
type BiasVerdict struct {
	// Opinion is the opinion judged, as it was sent.
	Opinion string `json:"opinion"`
	Result  string `json:"result"`
	Reason  string `json:"reason"`
}

// Claims is the hallucination scorer's preprocess result.
type Claims struct {
	Claims []string `json:"claims"`
}

// ClaimVerdicts is the hallucination scorer's analyze result: one entry per claim.
type ClaimVerdicts struct {
	Verdicts []ClaimVerdict `json:"verdicts"`
	// Reordered is set when the judge returned the verdicts in another
	// order than the claims; they were matched to the claims by the
	// statements it echoed.
	Reordered bool `json:"reordered,omitempty"`
}

// ClaimVerdict judges one claim; Verdict "yes" means contradicted by or
// unsupported by the context.
type ClaimVerdict struct {
	Statement string `json:"statement"`
	Verdict   string `json:"verdict"`
	Reason    string `json:"reason"`
}

// InstructionVerdicts is the prompt alignment scorer's analyze result: one
// entry per instruction of the Case, in its order, so Verdicts[i] is about
// Case.Instructions[i].
type InstructionVerdicts struct {
	Verdicts []InstructionVerdict `json:"verdicts"`
	// Reordered is set when the judge returned the verdicts in another
	// order than the instructions; they were matched by the numbers and
	// instructions it echoed.
	Reordered bool `json:"reordered,omitempty"`
}

// InstructionVerdict judges one instruction: "yes" followed, "no" not
// followed, "n/a" not applicable.
type InstructionVerdict struct {
	// Number is the instruction's place in Case.Instructions, from 1.
	Number int `json:"number"`
	// Instruction is the instruction judged, as it was sent.
	Instruction string `json:"instruction"`
	Verdict     string `json:"verdict"`
	Reason      string `json:"reason"`
	// Skipped is set for a blank instruction: it keeps its place with
	// verdict "n/a" and was not sent to the judge.
	Skipped bool `json:"skipped,omitempty"`
}

// ReasonResult is the reason step's result.
type ReasonResult struct {
	Reason string `json:"reason"`
}
