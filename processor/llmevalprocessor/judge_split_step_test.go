package llmevalprocessor

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/llm-eval/llm_eval/scoring"
)

// scriptedSplitter answers each prompt from a table.
type scriptedSplitter struct {
	answers map[string]splitAnswer
	mu      sync.Mutex
	asked   []string
}

type splitAnswer struct {
	split scoring.InstructionSplit
	err   error
}

func (s *scriptedSplitter) Split(_ context.Context, prompt string) (scoring.InstructionSplit, error) {
	s.mu.Lock()
	s.asked = append(s.asked, prompt)
	s.mu.Unlock()
	a := s.answers[prompt]
	return a.split, a.err
}

// splitCaseRecorder keeps the case it was given.
type splitCaseRecorder struct{ got scoring.Case }

func (*splitCaseRecorder) Name() string { return scoring.PromptAlignment }

func (r *splitCaseRecorder) Score(_ context.Context, c scoring.Case) scoring.Result {
	r.got = c
	return scoring.Result{Scorer: scoring.PromptAlignment, Label: scoring.LabelPass, Score: 1,
		Usage: scoring.Usage{LLMCalls: 1, PromptTokens: 500}}
}

func splitCalled(instructions ...string) splitAnswer {
	return splitAnswer{split: scoring.InstructionSplit{Instructions: instructions, Usage: scoring.Usage{LLMCalls: 1, PromptTokens: 800}}}
}

func TestSplitStep(t *testing.T) {
	const (
		rules = "Answer in French. Be brief. Cite the catalogue."
		other = "Never quote prices. Be brief."
		role  = "You are Quill."
	)
	parseErr := &scoring.Error{Type: scoring.ErrorJudgeParse, Step: scoring.StepSplit, Err: errors.New("garbled")}
	tests := []struct {
		name         string
		instructions []string
		cut          []scoring.Field // Case.Cut
		answers      map[string]splitAnswer
		want         []string
		wantOutcomes []splitOutcome
		wantCalls    int // LLM calls in the result: the scorer's one plus the splits'
		wantTrunc    bool
	}{
		{
			name:         "a prompt becomes its instructions",
			instructions: []string{rules},
			answers:      map[string]splitAnswer{rules: splitCalled("Answer in French.", "Be brief.", "Cite the catalogue.")},
			want:         []string{"Answer in French.", "Be brief.", "Cite the catalogue."},
			wantOutcomes: []splitOutcome{{Split: true, Called: true}},
			wantCalls:    2,
		},
		{
			name:         "two prompts, repeats kept once, blank texts skipped",
			instructions: []string{rules, "  ", other},
			answers: map[string]splitAnswer{
				rules: splitCalled("Answer in French.", "Be brief.", "Cite the catalogue."),
				other: splitCalled("Never quote prices.", "Be brief."),
			},
			want:         []string{"Answer in French.", "Be brief.", "Cite the catalogue.", "Never quote prices."},
			wantOutcomes: []splitOutcome{{Split: true, Called: true}, {Split: true, Called: true}},
			wantCalls:    3,
		},
		{
			name:         "a failed split keeps the prompt whole",
			instructions: []string{rules},
			answers:      map[string]splitAnswer{rules: {split: scoring.InstructionSplit{Usage: scoring.Usage{LLMCalls: 2}}, err: parseErr}},
			want:         []string{rules},
			wantOutcomes: []splitOutcome{{Fallback: string(scoring.ErrorJudgeParse), Called: true}},
			wantCalls:    3,
		},
		{
			name:         "an untyped error is judge_unavailable",
			instructions: []string{rules},
			answers:      map[string]splitAnswer{rules: {err: errors.New("boom")}},
			want:         []string{rules},
			wantOutcomes: []splitOutcome{{Fallback: string(scoring.ErrorJudgeUnavailable), Called: true}},
			wantCalls:    1,
		},
		// A prompt with no rule in it ("You are a helpful assistant.")
		// yields no instruction, so it cannot be followed and score 1
		// (issue 36 item 6).
		{
			name:         "a prompt without instructions gives none",
			instructions: []string{role},
			answers:      map[string]splitAnswer{role: splitCalled()},
			want:         []string{},
			wantOutcomes: []splitOutcome{{None: true, Called: true}},
			wantCalls:    2,
		},
		{
			name:         "a prompt without instructions beside one with",
			instructions: []string{role, rules},
			answers:      map[string]splitAnswer{role: splitCalled(), rules: splitCalled("Be brief.")},
			want:         []string{"Be brief."},
			wantOutcomes: []splitOutcome{{None: true, Called: true}, {Split: true, Called: true}},
			wantCalls:    3,
		},
		{
			name:         "a cached split costs nothing",
			instructions: []string{rules},
			answers:      map[string]splitAnswer{rules: {split: scoring.InstructionSplit{Instructions: []string{"Be brief."}, Cached: true}}},
			want:         []string{"Be brief."},
			wantOutcomes: []splitOutcome{{Split: true}},
			wantCalls:    1,
		},
		{
			name:         "a cut prompt and dropped instructions are reported",
			instructions: []string{rules},
			answers: map[string]splitAnswer{rules: {split: scoring.InstructionSplit{Instructions: []string{"Be brief."},
				Truncated: true, Dropped: 3, Usage: scoring.Usage{LLMCalls: 1}}}},
			want:         []string{"Be brief."},
			wantOutcomes: []splitOutcome{{Split: true, Called: true, Truncated: true, Dropped: 3}},
			wantCalls:    2,
			wantTrunc:    true,
		},
		// A prompt the reader cut at 1 MiB ends with the marker and the
		// caller says so (Case.Cut): the splitter gets it without the
		// marker, and the result is truncated although the split is not
		// (the splitter would neutralise the marker as the text's own).
		{
			name:         "a prompt the caller cut is split and the result truncated",
			instructions: []string{rules + scoring.TruncationMarker},
			cut:          []scoring.Field{scoring.FieldInstructions},
			answers:      map[string]splitAnswer{rules: splitCalled("Be brief.")},
			want:         []string{"Be brief."},
			wantOutcomes: []splitOutcome{{Split: true, Called: true, Truncated: true}},
			wantCalls:    2,
			wantTrunc:    true,
		},
		{
			name:         "a prompt the caller cut is kept whole, marker and all, when its split fails",
			instructions: []string{rules + scoring.TruncationMarker},
			cut:          []scoring.Field{scoring.FieldInstructions},
			answers:      map[string]splitAnswer{rules: {err: parseErr}},
			want:         []string{rules + scoring.TruncationMarker},
			wantOutcomes: []splitOutcome{{Fallback: string(scoring.ErrorJudgeParse), Called: true, Truncated: true}},
			wantCalls:    1,
			wantTrunc:    true,
		},
		{
			name:         "a marker the caller did not mark is the prompt's own",
			instructions: []string{rules + scoring.TruncationMarker},
			cut:          []scoring.Field{scoring.FieldOutput},
			answers:      map[string]splitAnswer{rules + scoring.TruncationMarker: splitCalled("Be brief.")},
			want:         []string{"Be brief."},
			wantOutcomes: []splitOutcome{{Split: true, Called: true}},
			wantCalls:    2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := &scriptedSplitter{answers: tt.answers}
			next := &splitCaseRecorder{}
			var outcomes []splitOutcome
			s := splitInstructionsOf(next, sp, func(_ context.Context, o splitOutcome) { outcomes = append(outcomes, o) })
			c := scoring.Case{Output: "Bonjour.", Instructions: slices.Clone(tt.instructions), Cut: tt.cut}
			r := s.Score(t.Context(), c)
			if !slices.Equal(next.got.Instructions, tt.want) {
				t.Errorf("scorer got %q, want %q", next.got.Instructions, tt.want)
			}
			if !slices.Equal(outcomes, tt.wantOutcomes) {
				t.Errorf("outcomes %+v, want %+v", outcomes, tt.wantOutcomes)
			}
			if r.Usage.LLMCalls != tt.wantCalls || r.Truncated != tt.wantTrunc || r.Label != scoring.LabelPass {
				t.Errorf("result %+v, want %d calls, truncated %v", r, tt.wantCalls, tt.wantTrunc)
			}
			if !slices.Equal(c.Instructions, tt.instructions) {
				t.Errorf("the caller's case changed to %q", c.Instructions)
			}
			if s.Name() != scoring.PromptAlignment {
				t.Errorf("name %q", s.Name())
			}
		})
	}
}

func TestSplitStepWithoutInstructionsDoesNotSplit(t *testing.T) {
	sp := &scriptedSplitter{}
	next := &splitCaseRecorder{}
	r := splitInstructionsOf(next, sp, nil).Score(t.Context(), scoring.Case{Output: "Bonjour."})
	if len(sp.asked) != 0 || r.Usage.LLMCalls != 1 {
		t.Fatalf("asked %q, usage %+v", sp.asked, r.Usage)
	}
}
