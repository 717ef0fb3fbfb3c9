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
	// TruncationMarker, and the result has Truncated set when the scorer
	// sends the cut field. A marker the text carries itself is neutralised
	// first (NeutralizeTruncationMarkers). A trajectory's
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
	// Requirements, when set, gives task_completion the requirements of a
	// request (guard.RequirementCache keeps them by the request's hash, so
	// a request repeated across runs is split by the judge once); nil asks
	// the scorer's judge every time. It gets the request redacted and cut.
	Requirements RequirementLister
}

// ReasonMode selects how a result's reason is produced.
type ReasonMode string

// Reason modes.
const (
	ReasonLLM     ReasonMode = "llm"
	ReasonSummary ReasonMode = "summary"
)

// TruncationMarker ends evaluated text cut to Options.MaxInputChars.
const TruncationMarker = " " + truncationMarkerText

// truncationMarkerText is the marker as the judge is told about it,
// without its leading space.
const truncationMarkerText = "[...truncated by llm_eval]"

// PromptVersion changes whenever a prompt template changes, so cached
// results of older prompts are not reused.
const PromptVersion = "6"

// scorerSpec is what distinguishes one scorer from another.
type scorerSpec struct {
	name          string
	lowerIsBetter bool // bias, hallucination and toxicity: a lower score is better
	// usesTrajectory: the scorer judges Case.Trajectory; the others never
	// see it.
	usesTrajectory bool
	// usesTools: the scorer judges Trajectory.Tools; the other trajectory
	// scorers never see them.
	usesTools bool
	// sends lists the case fields the scorer's prompts carry to the judge;
	// only a cut in one of them sets Result.Truncated. Nil means all four.
	sends map[Field]bool
	run   func(e *evaluation)
}

// fields is a set of case fields.
func fields(fs ...Field) map[Field]bool {
	m := make(map[Field]bool, len(fs))
	for _, f := range fs {
		m[f] = true
	}
	return m
}

var specs = map[string]scorerSpec{
	Bias:             {name: Bias, lowerIsBetter: true, sends: fields(FieldOutput), run: runBias},
	Hallucination:    {name: Hallucination, lowerIsBetter: true, sends: fields(FieldInput, FieldOutput, FieldContext), run: runHallucination},
	PromptAlignment:  {name: PromptAlignment, lowerIsBetter: false, sends: fields(FieldInput, FieldOutput, FieldInstructions), run: runPromptAlignment},
	TaskCompletion:   {name: TaskCompletion, usesTrajectory: true, sends: fields(FieldInput, FieldOutput), run: runTaskCompletion},
	ToolUse:          {name: ToolUse, usesTrajectory: true, usesTools: true, sends: fields(FieldInput, FieldOutput), run: runToolUse},
	AnswerRelevancy:  {name: AnswerRelevancy, sends: fields(FieldInput, FieldOutput), run: runAnswerRelevancy},
	ContextRelevance: {name: ContextRelevance, sends: fields(FieldInput, FieldOutput, FieldContext), run: runContextRelevance},
	Toxicity:         {name: Toxicity, lowerIsBetter: true, sends: fields(FieldInput, FieldOutput), run: runToxicity},
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
	prepared, cut, truncated, err := s.prepare(c)
	if err != nil {
		e.fail(&Error{Type: ErrorInvalidCase, Err: err})
		return e.res
	}
	e.c = prepared
	e.cut = cut
	e.res.Truncated = truncated
	s.spec.run(e)
	if e.res.Label == "" { // a pipeline bug; never return without a label
		e.fail(&Error{Type: ErrorInvalidCase, Err: errors.New("scorer produced no label")})
	}
	return e.res
}

// prepare applies Redact and MaxInputChars to every evaluated text of c,
// and bounds its trajectory, without touching the caller's slices.
// Metadata is dropped: it is never sent to the judge. cut records the
// fields that were cut; truncated is set when a field the scorer sends, or
// its trajectory, was cut.
func (s *scorer) prepare(c Case) (out Case, cut map[Field]bool, truncated bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("redact panicked: %v", r)
		}
	}()
	cut = map[Field]bool{}
	fix := func(f Field, t string) string {
		if s.opts.Redact != nil {
			t = s.opts.Redact(t)
		}
		// Only our own cut may end with the marker.
		t = NeutralizeTruncationMarkers(t)
		if v, ok := truncate(t, s.opts.MaxInputChars); ok {
			cut[f] = true
			return v
		}
		return t
	}
	fixAll := func(f Field, ts []string) []string {
		var res []string
		for _, t := range ts {
			if strings.TrimSpace(t) == "" {
				continue // blank items carry nothing to judge
			}
			res = append(res, fix(f, t))
		}
		return res
	}
	// Instructions keep their places, blanks included, so that prompt
	// alignment's verdict i is about the caller's instruction i.
	var instructions []string
	for _, t := range c.Instructions {
		if strings.TrimSpace(t) != "" {
			t = fix(FieldInstructions, t)
		}
		instructions = append(instructions, t)
	}
	out = Case{
		Input:        fix(FieldInput, c.Input),
		Output:       fix(FieldOutput, c.Output),
		Context:      fixAll(FieldContext, c.Context),
		Instructions: instructions,
	}
	for f := range cut {
		if s.spec.sends == nil || s.spec.sends[f] {
			truncated = true
		}
	}
	if !s.spec.usesTrajectory {
		return out, cut, truncated, nil
	}
	if err := c.Trajectory.Validate(); err != nil {
		return Case{}, nil, false, err
	}
	if c.Trajectory != nil {
		out.Trajectory = c.Trajectory.clone()
		if s.prepareTrajectory(out.Trajectory) {
			truncated = true
		}
		out.Trajectory.Tools = nil
		if s.spec.usesTools {
			var toolsCut bool
			if out.Trajectory.Tools, toolsCut = prepareTools(c.Trajectory.Tools, s.opts.Redact); toolsCut {
				truncated = true
			}
		}
	}
	return out, cut, truncated, nil
}

// prepareTrajectory bounds t (a copy) to MaxTrajectorySteps, redacts its
// texts, cuts them together to MaxInputChars and caps tool names. It
// reports whether anything was cut.
func (s *scorer) prepareTrajectory(t *Trajectory) bool {
	cut := boundTrajectory(t, s.opts.MaxTrajectorySteps)
	texts := trajectoryTexts(t)
	for _, p := range texts {
		if *p == "" {
			continue
		}
		if s.opts.Redact != nil {
			*p = s.opts.Redact(*p)
		}
		// A step text may come already cut by the caller (the processor
		// cuts long step texts as it stores them): its trailing marker
		// stays, any other is neutralised.
		*p = neutralizeKeepingCut(*p)
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
