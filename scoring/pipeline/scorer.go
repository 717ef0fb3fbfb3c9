package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/llm-eval/llm_eval/scoring"
)

// Definition is what makes one LLM-judged scorer: its name and direction,
// what it reads of a case, its prompts and the steps it runs. New turns it
// into a scoring.Scorer.
type Definition struct {
	// Name is the scorer's name, which its results carry.
	Name string
	// LowerIsBetter is set for a scorer whose lower score is better
	// (bias, hallucination, toxicity): it passes when score <= threshold.
	LowerIsBetter bool
	// DefaultThreshold is the threshold without Options.Threshold, as a
	// share of the scale; nil means half the scale.
	DefaultThreshold *float64
	// Sends lists the case fields the scorer's prompts carry to the judge;
	// only a cut in one of them sets Result.Truncated. Nil means all four.
	Sends []scoring.Field
	// NeedsContext is set for a scorer that judges Case.Context and finds
	// a case without one not scorable.
	NeedsContext bool
	// ChunksContext is set for a scorer that judges a long context in
	// chunks of MaxInputChars itself: its context items are not cut.
	ChunksContext bool
	// Trajectory is set for a scorer that judges Case.Trajectory; the
	// others never see it. Tools is set when it also judges
	// Trajectory.Tools.
	Trajectory, Tools bool
	// Conversation is set for a scorer that judges a whole conversation
	// (Case.Conversation). It sees the conversation prepared in
	// Case.Turns, bounded to MaxTurns, and never Input or Output apart
	// from it; a conversation without a message is not scorable before
	// Run is called.
	Conversation bool
	// History is set for a scorer of one turn that reads the conversation
	// before Input (Case.Turns), bounded to HistoryTurns; the others never
	// see it.
	History bool
	// Prompts are the scorer's prompts.
	Prompts *Prompts
	// Run runs the scorer's steps over one prepared case. It must end the
	// evaluation with a score (SetScore, ScoreRatio, SetFraction), as not
	// scorable (NotScorable) or failed (Fail).
	Run func(e *Evaluation)
}

// scorer is the one Scorer implementation of the LLM-judged scorers; its
// definition supplies the steps.
type scorer struct {
	def       Definition
	sends     map[scoring.Field]bool // nil: all
	judge     scoring.Judge
	opts      scoring.Options
	threshold float64
	// top is the score of a perfect result: the scale rounded to two
	// decimals, as every score is (0.13 at scale 0.125).
	top float64
	now func() time.Time
}

// New returns the scorer def defines, asking judge. It reports a nil judge
// and invalid options, naming the scorer.
func New(def Definition, judge scoring.Judge, opts scoring.Options) (scoring.Scorer, error) {
	name := def.Name
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
	if def.DefaultThreshold != nil {
		threshold = *def.DefaultThreshold * opts.Scale
	}
	if opts.Threshold != nil {
		threshold = *opts.Threshold
		if math.IsNaN(threshold) || threshold < 0 || threshold > opts.Scale {
			return nil, fmt.Errorf("scorer %s: threshold must be between 0 and the scale %v, got %v", name, opts.Scale, threshold)
		}
	}
	// Scores are rounded to two decimals, the scale's ends included, so the
	// threshold is compared at two decimals too: a result at the threshold
	// on paper passes at any scale (Round is monotone).
	top := Round(opts.Scale)
	threshold = Round(threshold)
	if opts.StrictMode {
		threshold = 0
		if !def.LowerIsBetter {
			threshold = top
		}
	}
	switch opts.ReasonMode {
	case "":
		opts.ReasonMode = scoring.ReasonLLM
	case scoring.ReasonLLM, scoring.ReasonSummary:
	default:
		return nil, fmt.Errorf("scorer %s: unknown reason mode %q: want %q or %q", name, opts.ReasonMode, scoring.ReasonLLM, scoring.ReasonSummary)
	}
	if opts.MaxInputChars < 0 {
		return nil, fmt.Errorf("scorer %s: max input chars must not be negative, got %d", name, opts.MaxInputChars)
	}
	switch {
	case opts.MaxTrajectorySteps < 0:
		return nil, fmt.Errorf("scorer %s: max trajectory steps must not be negative, got %d", name, opts.MaxTrajectorySteps)
	case opts.MaxTrajectorySteps == 0:
		opts.MaxTrajectorySteps = scoring.DefaultMaxTrajectorySteps
	}
	if err := checkTurnOptions(&opts); err != nil {
		return nil, fmt.Errorf("scorer %s: %w", name, err)
	}
	switch {
	case opts.MaxContextChunks < 0:
		return nil, fmt.Errorf("scorer %s: max context chunks must not be negative, got %d", name, opts.MaxContextChunks)
	case opts.MaxContextChunks == 0:
		opts.MaxContextChunks = scoring.DefaultMaxContextChunks
	}
	switch opts.InstructionSources {
	case "", scoring.SourcesBoth, scoring.SourcesSystem, scoring.SourcesUser:
	default:
		return nil, fmt.Errorf("scorer %s: unknown instruction sources %q: want %q, %q or %q", name, opts.InstructionSources,
			scoring.SourcesBoth, scoring.SourcesSystem, scoring.SourcesUser)
	}
	if err := checkRAGOptions(opts); err != nil {
		return nil, fmt.Errorf("scorer %s: %w", name, err)
	}
	s := &scorer{def: def, judge: judge, opts: opts, threshold: threshold, top: top, now: time.Now}
	if def.Sends != nil {
		s.sends = map[scoring.Field]bool{}
		for _, f := range def.Sends {
			s.sends[f] = true
		}
	}
	return s, nil
}

// checkRAGOptions validates the options only answer_relevancy and
// context_relevance read.
func checkRAGOptions(opts scoring.Options) error {
	inUnit := func(v float64) bool { return !math.IsNaN(v) && v >= 0 && v <= 1 }
	if w := opts.UncertaintyWeight; w != nil && !inUnit(*w) {
		return fmt.Errorf("uncertainty weight must be between 0 and 1, got %v", *w)
	}
	if p := opts.ContextPenalties; p != nil {
		for _, f := range []struct {
			name string
			v    float64
		}{
			{"unused high relevance", p.UnusedHighRelevance},
			{"missing per item", p.MissingPerItem},
			{"max missing", p.MaxMissing},
		} {
			if !inUnit(f.v) {
				return fmt.Errorf("context penalty %s must be between 0 and 1, got %v", f.name, f.v)
			}
		}
	}
	return nil
}

func (s *scorer) Name() string { return s.def.Name }

// Score runs the scorer's steps over c.
func (s *scorer) Score(ctx context.Context, c scoring.Case) scoring.Result {
	if ctx == nil {
		ctx = context.Background()
	}
	e := &Evaluation{s: s, ctx: ctx, Result: scoring.Result{Scorer: s.def.Name}}
	if s.def.Prompts != nil {
		e.Result.PromptVersion = s.def.Prompts.Version()
	}
	if err := ctx.Err(); err != nil {
		e.Fail(judgeError(ctx, "", err))
		return e.Result
	}
	if err := s.prepare(c, e); err != nil {
		e.Fail(&scoring.Error{Type: scoring.ErrorInvalidCase, Err: err})
		return e.Result
	}
	if s.def.Conversation && len(NumberTurns(e.Case.Turns)) == 0 {
		// deepeval refuses a conversation without turns; here it is a
		// case with nothing to judge.
		e.NotScorable("The conversation has no message to judge.")
		return e.Result
	}
	s.def.Run(e)
	if e.Result.Label == "" { // a pipeline bug; never return without a label
		e.Fail(&scoring.Error{Type: scoring.ErrorInvalidCase, Err: errors.New("scorer produced no label")})
	}
	return e.Result
}

// prepare applies Redact and MaxInputChars to every evaluated text of c,
// and bounds its trajectory, into e, without touching the caller's slices.
// Metadata is dropped: it is never sent to the judge. e.cut records the
// fields that were cut; Truncated is set when a field the scorer sends, or
// its trajectory, was cut.
func (s *scorer) prepare(c scoring.Case, e *Evaluation) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("redact panicked: %v", r)
		}
	}()
	cut := map[scoring.Field]bool{}
	// A context item, or a text of a field in c.Cut, may come already cut
	// by the caller (the processor's trace index cuts long documents, its
	// reader every text over 1 MiB): its trailing marker stays and the
	// result is truncated. Any other marker is neutralised: only a cut
	// may end a text with it. A scorer that chunks its context
	// (hallucination) gets the context items whole.
	fix := func(f scoring.Field, t string) string {
		if s.opts.Redact != nil {
			t = s.opts.Redact(t)
		}
		if f == scoring.FieldContext || slices.Contains(c.Cut, f) {
			if strings.HasSuffix(t, scoring.TruncationMarker) {
				cut[f] = true
			}
			t = neutralizeKeepingCut(t)
		} else {
			t = scoring.NeutralizeTruncationMarkers(t)
		}
		if f == scoring.FieldContext && s.def.ChunksContext {
			return t
		}
		if v, ok := Truncate(t, s.opts.MaxInputChars); ok {
			cut[f] = true
			return v
		}
		return t
	}
	var context []string
	for _, t := range c.Context {
		if strings.TrimSpace(t) != "" { // blank items carry nothing to judge
			context = append(context, fix(scoring.FieldContext, t))
		}
	}
	// Instructions keep their places, blanks included, so that prompt
	// alignment's verdict i is about the caller's instruction i.
	var instructions []string
	for _, t := range c.Instructions {
		if strings.TrimSpace(t) != "" {
			t = fix(scoring.FieldInstructions, t)
		}
		instructions = append(instructions, t)
	}
	out := scoring.Case{
		Input:        fix(scoring.FieldInput, c.Input),
		Output:       fix(scoring.FieldOutput, c.Output),
		Context:      context,
		Instructions: instructions,
	}
	truncated := false
	for f := range cut {
		if s.sends == nil || s.sends[f] {
			truncated = true
		}
	}
	if s.def.Conversation || s.def.History {
		turns, cutTurns, err := s.prepareTurns(c)
		if err != nil {
			return err
		}
		out.Turns = turns
		if cutTurns {
			cut[scoring.FieldTurns] = true
			truncated = true
		}
		if s.def.Conversation {
			out.Input, out.Output = "", ""
		}
	}
	if s.def.Trajectory {
		if err := c.Trajectory.Validate(); err != nil {
			return err
		}
		if c.Trajectory != nil {
			t := cloneTrajectory(c.Trajectory)
			run, cutRun := s.prepareTrajectory(t)
			truncated = truncated || cutRun
			t.Tools = nil
			if s.def.Tools {
				var toolsCut bool
				if t.Tools, toolsCut = prepareTools(c.Trajectory.Tools, s.opts.Redact); toolsCut {
					truncated = true
				}
			}
			out.Trajectory = t
			e.run = run
		}
	}
	e.Case, e.cut, e.Result.Truncated = out, cut, truncated
	return nil
}

// prepareTrajectory bounds t (a copy) to MaxTrajectorySteps, redacts its
// texts, cuts them together to MaxInputChars and caps tool names. It
// returns the bounded run and whether anything was cut.
func (s *scorer) prepareTrajectory(t *scoring.Trajectory) (bounded, bool) {
	run, cut := boundTrajectory(t, s.opts.MaxTrajectorySteps)
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
		// stays and the result is truncated, any other is neutralised.
		if strings.HasSuffix(*p, scoring.TruncationMarker) {
			cut = true
		}
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
			if v, ok := Truncate(*n, maxToolNameChars); ok {
				*n, cut = v, true
			}
		}
	}
	return run, cut
}

// neutralizeKeepingCut neutralises the markers of a text that a caller may
// already have cut: one scoring.TruncationMarker at its very end is taken
// as the caller's cut and kept.
func neutralizeKeepingCut(s string) string {
	if body, ok := strings.CutSuffix(s, scoring.TruncationMarker); ok {
		return scoring.NeutralizeTruncationMarkers(body) + scoring.TruncationMarker
	}
	return scoring.NeutralizeTruncationMarkers(s)
}

// Truncate cuts s to max runes followed by scoring.TruncationMarker. It
// reports whether it cut; max 0 means no cap.
func Truncate(s string, max int) (string, bool) {
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s, false
	}
	n := 0
	for i := range s {
		if n == max {
			return s[:i] + scoring.TruncationMarker, true
		}
		n++
	}
	return s, false
}

// cloneTrajectory copies t deeply enough that prepare can rewrite its
// texts.
func cloneTrajectory(t *scoring.Trajectory) *scoring.Trajectory {
	c := &scoring.Trajectory{Steps: make([]scoring.Step, len(t.Steps)), Tools: append([]scoring.ToolDefinition(nil), t.Tools...)}
	for i, s := range t.Steps {
		s.ToolCalls = append([]scoring.ToolCall(nil), s.ToolCalls...)
		c.Steps[i] = s
	}
	return c
}
