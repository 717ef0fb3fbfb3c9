package scoring

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// Scorer names.
const (
	Bias            = "bias"
	Hallucination   = "hallucination"
	PromptAlignment = "prompt_alignment"
)

// Names returns the names New accepts, in a fixed order.
func Names() []string { return []string{Bias, Hallucination, PromptAlignment} }

// Scorer evaluates one Case. Score never panics and never returns an error:
// failures are results with LabelError and a typed Err. A Scorer is safe
// for concurrent use.
type Scorer interface {
	Name() string
	Score(ctx context.Context, c Case) Result
}

// Options tune a scorer. The zero value is valid: scale 1, the scorer's
// default threshold, reasons on.
type Options struct {
	// Scale is the maximum score (default 1). It must be positive.
	Scale float64
	// Threshold decides pass or fail. Bias and hallucination pass when
	// score <= threshold; prompt alignment and criteria pass when
	// score >= threshold.
	// Nil means the default, half the scale (0.5 at the default scale).
	// It must lie in [0, Scale].
	Threshold *float64
	// StrictMode makes the score binary (0 or Scale) and forces the
	// threshold to 0 (bias, hallucination) or Scale (prompt alignment,
	// criteria).
	StrictMode bool
	// OmitReason skips the reason step (include_reason: false).
	OmitReason bool
	// Verbose keeps the prompts sent at every step in Result.Steps.
	Verbose bool
	// ReasonMode is ReasonLLM (default: the reason step asks the judge) or
	// ReasonSummary (the reason is composed from the verdicts' reasons with
	// no extra call).
	ReasonMode ReasonMode
	// MaxInputChars caps each evaluated text sent to the judge, in
	// characters (runes); 0 means no cap. Cut text ends with
	// TruncationMarker and the result has Truncated set.
	MaxInputChars int
	// Redact, when set, is applied to every evaluated text (input, output,
	// each context item and instruction) before it is sent to the judge.
	// It runs before MaxInputChars is applied.
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
const PromptVersion = "2"

// scorerSpec is what distinguishes one scorer from another.
type scorerSpec struct {
	name          string
	lowerIsBetter bool // bias and hallucination: a lower score is better
	run           func(e *evaluation)
}

var specs = map[string]scorerSpec{
	Bias:            {name: Bias, lowerIsBetter: true, run: runBias},
	Hallucination:   {name: Hallucination, lowerIsBetter: true, run: runHallucination},
	PromptAlignment: {name: PromptAlignment, lowerIsBetter: false, run: runPromptAlignment},
}

// scorer is the one Scorer implementation; spec supplies the pipeline.
type scorer struct {
	spec      scorerSpec
	judge     Judge
	opts      Options
	threshold float64
	now       func() time.Time
}

// New returns the named scorer (Bias, Hallucination or PromptAlignment)
// using judge. It reports an unknown name, a nil judge and invalid options.
func New(name string, judge Judge, opts Options) (Scorer, error) {
	spec, ok := specs[name]
	if !ok {
		return nil, fmt.Errorf("unknown scorer %q: want one of %s", name, strings.Join(Names(), ", "))
	}
	return newScorer(spec, judge, opts)
}

// newScorer checks the judge and options shared by every scorer.
func newScorer(spec scorerSpec, judge Judge, opts Options) (Scorer, error) {
	name := spec.name
	if judge == nil {
		return nil, fmt.Errorf("scorer %s: judge is nil", name)
	}
	if opts.Scale == 0 {
		opts.Scale = 1
	}
	if !(opts.Scale > 0) || math.IsInf(opts.Scale, 0) {
		return nil, fmt.Errorf("scorer %s: scale must be a positive number, got %v", name, opts.Scale)
	}
	threshold := opts.Scale / 2
	if opts.Threshold != nil {
		threshold = *opts.Threshold
		if math.IsNaN(threshold) || threshold < 0 || threshold > opts.Scale {
			return nil, fmt.Errorf("scorer %s: threshold must be between 0 and the scale %v, got %v", name, opts.Scale, threshold)
		}
	}
	if opts.StrictMode {
		threshold = 0
		if !spec.lowerIsBetter {
			threshold = opts.Scale
		}
	}
	switch opts.ReasonMode {
	case "":
		opts.ReasonMode = ReasonLLM
	case ReasonLLM, ReasonSummary:
	default:
		return nil, fmt.Errorf("scorer %s: unknown reason mode %q: want %q or %q", name, opts.ReasonMode, ReasonLLM, ReasonSummary)
	}
	if opts.MaxInputChars < 0 {
		return nil, fmt.Errorf("scorer %s: max input chars must not be negative, got %d", name, opts.MaxInputChars)
	}
	return &scorer{spec: spec, judge: judge, opts: opts, threshold: threshold, now: time.Now}, nil
}

func (s *scorer) Name() string { return s.spec.name }

// Score runs the scorer's pipeline over c.
func (s *scorer) Score(ctx context.Context, c Case) Result {
	if ctx == nil {
		ctx = context.Background()
	}
	e := &evaluation{s: s, ctx: ctx, res: Result{Scorer: s.spec.name}}
	if err := ctx.Err(); err != nil {
		e.fail(judgeError(ctx, "", err))
		return e.res
	}
	prepared, truncated, err := s.prepare(c)
	if err != nil {
		e.fail(&Error{Type: ErrorInvalidCase, Err: err})
		return e.res
	}
	e.c = prepared
	e.res.Truncated = truncated
	s.spec.run(e)
	if e.res.Label == "" { // a pipeline bug; never return without a label
		e.fail(&Error{Type: ErrorInvalidCase, Err: errors.New("scorer produced no label")})
	}
	return e.res
}

// prepare applies Redact and MaxInputChars to every evaluated text of c,
// without touching the caller's slices. Metadata is dropped: it is never
// sent to the judge.
func (s *scorer) prepare(c Case) (out Case, truncated bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("redact panicked: %v", r)
		}
	}()
	fix := func(t string) string {
		if s.opts.Redact != nil {
			t = s.opts.Redact(t)
		}
		if cut, ok := truncate(t, s.opts.MaxInputChars); ok {
			truncated = true
			return cut
		}
		return t
	}
	fixAll := func(ts []string) []string {
		var res []string
		for _, t := range ts {
			if strings.TrimSpace(t) == "" {
				continue // blank items carry nothing to judge
			}
			res = append(res, fix(t))
		}
		return res
	}
	out = Case{
		Input:        fix(c.Input),
		Output:       fix(c.Output),
		Context:      fixAll(c.Context),
		Instructions: fixAll(c.Instructions),
	}
	return out, truncated, nil
}

// truncate cuts s to max runes followed by TruncationMarker. It reports
// whether it cut; max 0 means no cap.
func truncate(s string, max int) (string, bool) {
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s, false
	}
	n := 0
	for i := range s {
		if n == max {
			return s[:i] + TruncationMarker, true
		}
		n++
	}
	return s, false
}
