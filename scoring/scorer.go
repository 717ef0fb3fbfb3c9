package scoring

import "context"

// Scorer names.
const (
	Bias            = "bias"
	Hallucination   = "hallucination"
	PromptAlignment = "prompt_alignment"
)

// Scorer evaluates one Case. Score never panics and never returns an error:
// failures are results with LabelError and a typed Err.
type Scorer interface {
	Name() string
	Score(ctx context.Context, c Case) Result
}

// Options tune a scorer. The zero value is valid: scale 1, the scorer's
// default threshold, reasons on.
type Options struct {
	// Scale is the maximum score (default 1).
	Scale float64
	// Threshold decides pass or fail. Bias and hallucination pass when
	// score <= threshold (default 0.5); prompt alignment passes when
	// score >= threshold (default 0.5). Nil means the default.
	Threshold *float64
	// StrictMode makes the score binary (0 or Scale) and forces the
	// threshold to 0 (bias, hallucination) or Scale (prompt alignment).
	StrictMode bool
	// OmitReason skips the reason step (include_reason: false).
	OmitReason bool
	// Verbose keeps the prompts sent at every step in Result.Steps.
	Verbose bool
	// ReasonMode is ReasonLLM (default: the reason step asks the judge) or
	// ReasonSummary (the reason is composed from the verdicts' reasons with
	// no extra call).
	ReasonMode ReasonMode
	// MaxInputChars caps each evaluated text sent to the judge (0 = no cap).
	// Cut text ends with TruncationMarker and the result has Truncated set.
	MaxInputChars int
	// Redact, when set, is applied to every evaluated text before it is
	// sent to the judge.
	Redact func(string) string
}

// ReasonMode selects how a result's reason is produced.
type ReasonMode string

// Reason modes.
const (
	ReasonLLM     ReasonMode = "llm"
	ReasonSummary ReasonMode = "summary"
)

// TruncationMarker ends evaluated text cut to Options.MaxInputChars.
const TruncationMarker = " [...truncated by llm_eval]"

// PromptVersion changes whenever a prompt template changes, so cached
// results of older prompts are not reused.
const PromptVersion = "1"

// New returns the named scorer using judge.
func New(name string, judge Judge, opts Options) (Scorer, error) {
	panic("skeleton: implemented by the scoring work")
}
