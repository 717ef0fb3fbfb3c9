package scoring

import (
	"context"
	"testing"
)

// formulaCase is one row of the scoring arithmetic tables. want is the
// score rounded to two decimals, compared exactly.
type formulaCase struct {
	name      string
	verdicts  []string
	opts      Options
	wantScore float64
	wantLabel Label
}

func runFormulaTable(t *testing.T, scorerName string, tests []formulaCase, replies func(...string) map[string][]string, c func(n int) Case) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustNew(t, scorerName, newJudge(replies(tt.verdicts...)), tt.opts)
			res := s.Score(context.Background(), c(len(tt.verdicts)))
			if res.Err != nil {
				t.Fatalf("unexpected error: %v", res.Err)
			}
			if res.Score != tt.wantScore || res.Label != tt.wantLabel {
				t.Errorf("got score %v label %s, want %v %s", res.Score, res.Label, tt.wantScore, tt.wantLabel)
			}
			if !res.Scored() {
				t.Errorf("Scored() = false for %s", res.Label)
			}
		})
	}
}

func TestBiasFormula(t *testing.T) {
	tests := []formulaCase{
		{"none biased", []string{"no", "no"}, Options{}, 0, LabelPass},
		{"one of three", []string{"yes", "no", "no"}, Options{}, 0.33, LabelPass},
		{"two of three", []string{"yes", "no", "yes"}, Options{}, 0.67, LabelFail},
		{"all biased", []string{"yes"}, Options{}, 1, LabelFail},
		{"boundary equal passes", []string{"yes", "no"}, Options{Threshold: ptr(0.5)}, 0.5, LabelPass},
		{"just above threshold", []string{"yes", "no"}, Options{Threshold: ptr(0.49)}, 0.5, LabelFail},
		{"scale 10", []string{"yes", "no", "no"}, Options{Scale: 10}, 3.33, LabelPass},
		{"scale 10 two of three", []string{"yes", "yes", "no"}, Options{Scale: 10}, 6.67, LabelFail},
		{"scale 10 boundary", []string{"yes", "no", "no", "no"}, Options{Scale: 10, Threshold: ptr(2.5)}, 2.5, LabelPass},
		{"strict any bias is full scale", []string{"yes", "no", "no"}, Options{StrictMode: true}, 1, LabelFail},
		{"strict none biased", []string{"no", "no"}, Options{StrictMode: true}, 0, LabelPass},
		{"strict ignores threshold", []string{"yes", "no", "no", "no"}, Options{StrictMode: true, Threshold: ptr(0.9)}, 1, LabelFail},
		{"strict scale 10", []string{"no", "yes"}, Options{StrictMode: true, Scale: 10}, 10, LabelFail},
		{"threshold zero passes only zero", []string{"no"}, Options{Threshold: ptr(0.0)}, 0, LabelPass},
		// Rounded to two decimals as Mastra does, and labelled on the
		// rounded score: a result exactly at the threshold passes at any
		// scale (3/6 × 0.1 is 0.05000000000000001 unrounded).
		{"scale 0.1 at threshold", []string{"yes", "yes", "yes", "no", "no", "no"}, Options{Scale: 0.1, Threshold: ptr(0.05)}, 0.05, LabelPass},
		{"scale 0.3 at threshold", []string{"yes", "no", "no"}, Options{Scale: 0.3, Threshold: ptr(0.1)}, 0.1, LabelPass},
		{"scale 0.7 at threshold", []string{"yes", "yes", "yes", "no", "no", "no"}, Options{Scale: 0.7, Threshold: ptr(0.35)}, 0.35, LabelPass},
		{"scale 0.7 one of three", []string{"yes", "no", "no"}, Options{Scale: 0.7, Threshold: ptr(0.23)}, 0.23, LabelPass},
		{"scale 10 two of three at threshold", []string{"yes", "yes", "no"}, Options{Scale: 10, Threshold: ptr(6.67)}, 6.67, LabelPass},
		{"rounds 1 of 300 to 0", append([]string{"yes"}, repeat("no", 299)...), Options{Threshold: ptr(0.0)}, 0, LabelPass},
		{"strict decides on counts, not the rounded score", append([]string{"yes"}, repeat("no", 299)...), Options{StrictMode: true}, 1, LabelFail},
	}
	runFormulaTable(t, Bias, tests, biasReplies, func(int) Case { return Case{Input: "q", Output: "answer"} })
}

func TestHallucinationFormula(t *testing.T) {
	tests := []formulaCase{
		{"all supported", []string{"no", "no", "no"}, Options{}, 0, LabelPass},
		{"one of four", []string{"yes", "no", "no", "no"}, Options{}, 1.0 / 4.0 * 1, LabelPass},
		{"two of three", []string{"yes", "yes", "no"}, Options{}, 0.67, LabelFail},
		{"boundary equal passes", []string{"yes", "no"}, Options{}, 0.5, LabelPass},
		{"scale 10", []string{"yes", "no", "no"}, Options{Scale: 10}, 3.33, LabelPass},
		{"scale 10 threshold boundary", []string{"yes", "yes", "no", "no", "no"}, Options{Scale: 10, Threshold: ptr(4.0)}, 4, LabelPass},
		{"scale 10 over threshold", []string{"yes", "yes", "no"}, Options{Scale: 10, Threshold: ptr(6.0)}, 6.67, LabelFail},
		{"strict one hallucination", []string{"no", "no", "yes"}, Options{StrictMode: true}, 1, LabelFail},
		{"strict none", []string{"no"}, Options{StrictMode: true, Scale: 10}, 0, LabelPass},
		{"scale 0.1 at threshold", []string{"yes", "yes", "yes", "no", "no", "no"}, Options{Scale: 0.1, Threshold: ptr(0.05)}, 0.05, LabelPass},
		{"scale 0.7 at threshold", []string{"yes", "yes", "yes", "no", "no", "no"}, Options{Scale: 0.7, Threshold: ptr(0.35)}, 0.35, LabelPass},
	}
	runFormulaTable(t, Hallucination, tests, hallucinationReplies, func(int) Case {
		return Case{Input: "q", Output: "answer", Context: []string{"doc"}}
	})
}

func TestPromptAlignmentFormula(t *testing.T) {
	tests := []formulaCase{
		{"all followed", []string{"yes", "yes"}, Options{}, 1, LabelPass},
		{"none followed", []string{"no", "no"}, Options{}, 0, LabelFail},
		{"n/a excluded", []string{"yes", "yes", "no", "n/a"}, Options{}, 0.67, LabelPass},
		{"one of three", []string{"yes", "no", "no"}, Options{}, 0.33, LabelFail},
		{"boundary equal passes", []string{"yes", "no"}, Options{}, 0.5, LabelPass},
		{"just below threshold", []string{"yes", "no"}, Options{Threshold: ptr(0.51)}, 0.5, LabelFail},
		{"scale 10", []string{"yes", "yes", "no"}, Options{Scale: 10}, 6.67, LabelPass},
		{"scale 10 threshold 7", []string{"yes", "yes", "no"}, Options{Scale: 10, Threshold: ptr(7.0)}, 6.67, LabelFail},
		{"scale 10 boundary", []string{"yes", "yes", "yes", "no", "N/A"}, Options{Scale: 10, Threshold: ptr(7.5)}, 7.5, LabelPass},
		{"strict partial is zero", []string{"yes", "yes", "no"}, Options{StrictMode: true}, 0, LabelFail},
		{"strict all followed", []string{"yes", "n/a", "yes"}, Options{StrictMode: true}, 1, LabelPass},
		{"strict scale 10", []string{"yes", "yes"}, Options{StrictMode: true, Scale: 10}, 10, LabelPass},
		{"strict ignores threshold", []string{"yes", "yes", "yes", "no"}, Options{StrictMode: true, Threshold: ptr(0.1)}, 0, LabelFail},
		{"scale 0.7 two of three at threshold", []string{"yes", "yes", "no"}, Options{Scale: 0.7, Threshold: ptr(0.47)}, 0.47, LabelPass},
		{"scale 0.3 two of three at threshold", []string{"yes", "yes", "no"}, Options{Scale: 0.3, Threshold: ptr(0.2)}, 0.2, LabelPass},
		{"strict decides on counts: 299 of 300 rounds to 1 but fails", append(repeat("yes", 299), "no"), Options{StrictMode: true}, 0, LabelFail},
	}
	runFormulaTable(t, PromptAlignment, tests, alignmentReplies, func(n int) Case {
		return Case{Input: "q", Output: "answer", Instructions: instructions(n)}
	})
}

// TestStrictWithFractionalScale checks ratios are decided on counts, so a
// perfect or clean result at a scale such as 0.7 is exactly the scale or 0,
// never 0.6999… turned into a failure by strict mode.
func TestStrictWithFractionalScale(t *testing.T) {
	tests := []struct {
		scorer    string
		replies   map[string][]string
		c         Case
		opts      Options
		wantScore float64
		wantLabel Label
	}{
		{PromptAlignment, alignmentReplies("yes", "yes", "yes"), Case{Output: "o", Instructions: instructions(3)}, Options{Scale: 0.7, StrictMode: true}, 0.7, LabelPass},
		{PromptAlignment, alignmentReplies("yes", "yes", "yes"), Case{Output: "o", Instructions: instructions(3)}, Options{Scale: 0.7}, 0.7, LabelPass},
		{PromptAlignment, alignmentReplies("yes", "yes", "yes"), Case{Output: "o", Instructions: instructions(3)}, Options{Scale: 0.7, Threshold: ptr(0.7)}, 0.7, LabelPass},
		{PromptAlignment, alignmentReplies("yes", "yes", "yes", "yes", "yes", "yes", "yes"), Case{Output: "o", Instructions: instructions(7)}, Options{Scale: 0.3, StrictMode: true}, 0.3, LabelPass},
		{Bias, biasReplies("yes", "yes", "yes"), Case{Output: "o"}, Options{Scale: 0.7, Threshold: ptr(0.69)}, 0.7, LabelFail},
		{Bias, biasReplies("yes", "yes", "yes"), Case{Output: "o"}, Options{Scale: 0.7, StrictMode: true}, 0.7, LabelFail},
		{Hallucination, hallucinationReplies("no", "no", "no"), Case{Output: "o", Context: []string{"c"}}, Options{Scale: 0.7, StrictMode: true}, 0, LabelPass},
		{Hallucination, hallucinationReplies("yes", "yes", "yes"), Case{Output: "o", Context: []string{"c"}}, Options{Scale: 0.7}, 0.7, LabelFail},
	}
	for _, tt := range tests {
		res := mustNew(t, tt.scorer, newJudge(tt.replies), tt.opts).Score(context.Background(), tt.c)
		if res.Score != tt.wantScore || res.Label != tt.wantLabel {
			t.Errorf("%s %+v: score %v label %s, want %v %s", tt.scorer, tt.opts, res.Score, res.Label, tt.wantScore, tt.wantLabel)
		}
	}
}

// repeat returns n copies of v.
func repeat(v string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = v
	}
	return out
}
