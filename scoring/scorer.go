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
	Bias             = "bias"
	Hallucination    = "hallucination"
	PromptAlignment  = "prompt_alignment"
	TaskCompletion   = "task_completion"
	ToolUse          = "tool_use"
	AnswerRelevancy  = "answer_relevancy"
	ContextRelevance = "context_relevance"
	Toxicity         = "toxicity"
)

// Names returns the names New accepts, in a fixed order.
func Names() []string {
	return []string{Bias, Hallucination, PromptAlignment, TaskCompletion, ToolUse, AnswerRelevancy, ContextRelevance, Toxicity}
}

// ContextNames returns the names of the built-in scorers that judge a
// Case's Context and find a Case without one not scorable.
func ContextNames() []string { return []string{Hallucination, ContextRelevance} }

// TrajectoryNames returns the names of the scorers that judge an agent
// run's Trajectory and find a Case without one not scorable.
func TrajectoryNames() []string { return []string{TaskCompletion, ToolUse} }

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
	// Threshold decides pass or fail. Bias, hallucination and toxicity
	// pass when score <= threshold; the others (prompt alignment, answer
	// relevancy, context relevance, criteria, task completion, tool use)
	// pass when score >= threshold.
	// Nil means the default, half the scale (0.5 at the default scale).
	// It must lie in [0, Scale].
	Threshold *float64
	// StrictMode makes the score binary (0 or Scale) and forces the
	// threshold to 0 (bias, hallucination, toxicity) or Scale (the others).
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
	// TruncationMarker and the result has Truncated set. A trajectory's
	// texts (step outputs, tool arguments, results, errors) are capped
	// together: when they exceed MaxInputChars, the longest are cut to the
	// common length that makes the sum fit, but never below 64 characters
	// each, so a run of many texts can still send more.
	MaxInputChars int
	// MaxTrajectorySteps caps the steps of a trajectory sent to the judge,
	// each tool call counting as a step (0 means
	// DefaultMaxTrajectorySteps). A longer trajectory keeps its first and
	// last steps, the judge is told how many were left out between them,
	// and the result has Truncated set.
	MaxTrajectorySteps int
	// Redact, when set, is applied to every evaluated text (input, output,
	// each context item and instruction) before it is sent to the judge.
	// It runs before MaxInputChars is applied.
	Redact func(string) string
	// UncertaintyWeight is what an "unsure" statement counts for in
	// answer_relevancy, between 0 and 1; nil means
	// DefaultUncertaintyWeight.
	UncertaintyWeight *float64
	// ContextPenalties are context_relevance's deductions; nil means
	// DefaultContextPenalties.
	ContextPenalties *ContextPenalties
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
const PromptVersion = "3"

// scorerSpec is what distinguishes one scorer from another.
type scorerSpec struct {
	name          string
	lowerIsBetter bool // bias, hallucination and toxicity: a lower score is better
	// usesTrajectory: the scorer judges Case.Trajectory; the others never
	// see it.
	usesTrajectory bool
	run            func(e *evaluation)
}

var specs = map[string]scorerSpec{
	Bias:             {name: Bias, lowerIsBetter: true, run: runBias},
	Hallucination:    {name: Hallucination, lowerIsBetter: true, run: runHallucination},
	PromptAlignment:  {name: PromptAlignment, lowerIsBetter: false, run: runPromptAlignment},
	TaskCompletion:   {name: TaskCompletion, usesTrajectory: true, run: runTaskCompletion},
	ToolUse:          {name: ToolUse, usesTrajectory: true, run: runToolUse},
	AnswerRelevancy:  {name: AnswerRelevancy, run: runAnswerRelevancy},
	ContextRelevance: {name: ContextRelevance, run: runContextRelevance},
	Toxicity:         {name: Toxicity, lowerIsBetter: true, run: runToxicity},
}

// scorer is the one Scorer implementation; spec supplies the pipeline.
type scorer struct {
	spec      scorerSpec
	judge     Judge
	opts      Options
	threshold float64
	now       func() time.Time
}

// New returns the named scorer (one of Names) using judge. It reports an unknown name, a nil
// judge and invalid options.
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
	switch {
	case opts.MaxTrajectorySteps < 0:
		return nil, fmt.Errorf("scorer %s: max trajectory steps must not be negative, got %d", name, opts.MaxTrajectorySteps)
	case opts.MaxTrajectorySteps == 0:
		opts.MaxTrajectorySteps = DefaultMaxTrajectorySteps
	}
	if err := checkRAGOptions(opts); err != nil {
		return nil, fmt.Errorf("scorer %s: %w", name, err)
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
// and bounds its trajectory, without touching the caller's slices.
// Metadata is dropped: it is never sent to the judge.
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
	if !s.spec.usesTrajectory {
		return out, truncated, nil
	}
	if err := c.Trajectory.Validate(); err != nil {
		return Case{}, false, err
	}
	if c.Trajectory != nil {
		out.Trajectory = c.Trajectory.clone()
		if s.prepareTrajectory(out.Trajectory) {
			truncated = true
		}
	}
	return out, truncated, nil
}

// prepareTrajectory bounds t (a copy) to MaxTrajectorySteps, redacts its
// texts, cuts them together to MaxInputChars and caps tool names. It
// reports whether anything was cut.
func (s *scorer) prepareTrajectory(t *Trajectory) bool {
	cut := boundTrajectory(t, s.opts.MaxTrajectorySteps)
	texts := trajectoryTexts(t)
	if s.opts.Redact != nil {
		for _, p := range texts {
			if *p != "" {
				*p = s.opts.Redact(*p)
			}
		}
	}
	if fitTexts(texts, s.opts.MaxInputChars) {
		cut = true
	}
	for i := range t.Steps {
		st := &t.Steps[i]
		names := []*string{&st.Tool}
		for j := range st.ToolCalls {
			names = append(names, &st.ToolCalls[j].Name)
		}
		for _, n := range names {
			if v, ok := truncate(*n, maxToolNameChars); ok {
				*n, cut = v, true
			}
		}
	}
	return cut
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
