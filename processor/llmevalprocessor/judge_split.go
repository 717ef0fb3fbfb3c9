package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/llm-eval/llm_eval/scoring"
)

// The instruction split lets a scorer judge a system prompt's
// instructions one by one. Read from a span, a system prompt is one text
// holding several rules; given to prompt alignment as one instruction, the
// answer can only follow it or break it as a whole. splitInstructionsOf
// puts a step in front of the scorer that splits each instruction text of
// the case with a scoring.Splitter (the judge, through a guard.SplitCache)
// and hands the scorer the separate instructions. A text whose split
// fails is kept whole, as without the step; a text with no instruction in
// it (only a role: "You are a helpful assistant.") gives none, so a
// rule-less prompt is not judged as one rule the answer always follows.
//
// The step runs inside the scorer's Score, so in the processor's
// evaluation workers under the evaluation's deadline, and never changes
// the case it was given: data still flows one way, from the span to the
// case to the scorer.

// splitOutcome is what the split step did with one instruction text of a
// case.
type splitOutcome struct {
	// Split is set when the text was replaced by its instructions.
	Split bool
	// None is set when the judge found no instruction in the text: it
	// gave the scorer none.
	None bool
	// Fallback says why the text was kept whole: a scoring error type.
	// Empty when Split or None.
	Fallback string
	// Called is set when the splitter asked the judge (or tried to); unset
	// when a cache answered.
	Called bool
	// Truncated and Dropped are the split's: the text was cut before it
	// was sent; instructions beyond the cap were not kept.
	Truncated bool
	Dropped   int
}

// splitInstructionsOf returns next with the instructions of every case
// split by sp before next scores it. observe, when not nil, is called once
// per non-blank instruction text. The split calls' usage is added to the
// result's; a split answered by a cache adds none. A split that read a
// cut text, cut by the splitter or by the caller (FieldInstructions in
// Case.Cut, the text ending with scoring.TruncationMarker), marks the
// result Truncated.
func splitInstructionsOf(next scoring.Scorer, sp scoring.Splitter, observe func(context.Context, splitOutcome)) scoring.Scorer {
	if observe == nil {
		observe = func(context.Context, splitOutcome) {}
	}
	return &splitting{next: next, splitter: sp, observe: observe}
}

type splitting struct {
	next     scoring.Scorer
	splitter scoring.Splitter
	observe  func(context.Context, splitOutcome)
}

func (s *splitting) Name() string { return s.next.Name() }

func (s *splitting) Score(ctx context.Context, c scoring.Case) scoring.Result {
	if len(c.Instructions) == 0 {
		return s.next.Score(ctx, c)
	}
	var usage scoring.Usage
	truncated := false
	instructions := make([]string, 0, len(c.Instructions))
	seen := make(map[string]bool, len(c.Instructions))
	add := func(in string) {
		if in = strings.TrimSpace(in); in != "" && !seen[in] {
			seen[in] = true
			instructions = append(instructions, in)
		}
	}
	callerCut := slices.Contains(c.Cut, scoring.FieldInstructions)
	for _, text := range c.Instructions {
		if strings.TrimSpace(text) == "" {
			continue
		}
		// A text the caller cut (c.Cut: the reader's cut at 1 MiB) is split
		// without its marker, which the splitter would take for the text's
		// own and neutralise: the cut is the caller's, so the result is
		// truncated whatever the split reports.
		prompt, cut := text, false
		if callerCut {
			prompt, cut = strings.CutSuffix(text, scoring.TruncationMarker)
		}
		split, err := s.splitter.Split(ctx, prompt)
		usage.Add(split.Usage)
		cut = cut || split.Truncated
		truncated = truncated || cut
		o := splitOutcome{Called: !split.Cached, Truncated: cut, Dropped: split.Dropped}
		switch {
		case err != nil:
			o.Fallback = splitErrorType(err)
			add(text)
		case len(split.Instructions) == 0:
			o.None = true
		default:
			o.Split = true
			for _, in := range split.Instructions {
				add(in)
			}
		}
		s.observe(ctx, o)
	}
	c.Instructions = instructions
	r := s.next.Score(ctx, c)
	r.Usage.Add(usage)
	r.Truncated = r.Truncated || truncated
	return r
}

// splitErrorType is the scoring error type of a failed split.
func splitErrorType(err error) string {
	if se, ok := errors.AsType[*scoring.Error](err); ok {
		return string(se.Type)
	}
	return string(scoring.ErrorJudgeUnavailable)
}
