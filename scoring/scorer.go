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
}

// New returns the named scorer using judge.
func New(name string, judge Judge, opts Options) (Scorer, error) {
	panic("skeleton: implemented by the scoring work")
}
