package pipeline_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
)

// formulaCase is one row of the scoring arithmetic tables. want is the
// score rounded to two decimals, compared exactly.
type formulaCase struct {
	name      string
	verdicts  []string
	opts      scoring.Options
	wantScore float64
	wantLabel scoring.Label
}

func runFormulaTable(t *testing.T, scorerName string, tests []formulaCase, replies func(...string) map[string][]string, c func(n int) scoring.Case) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustNew(t, scorerName, testkit.NewJudge(replies(tt.verdicts...)), tt.opts)
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
		{"none biased", []string{"no", "no"}, scoring.Options{}, 0, scoring.LabelPass},
		{"one of three", []string{"yes", "no", "no"}, scoring.Options{}, 0.33, scoring.LabelPass},
		{"two of three", []string{"yes", "no", "yes"}, scoring.Options{}, 0.67, scoring.LabelFail},
		{"all biased", []string{"yes"}, scoring.Options{}, 1, scoring.LabelFail},
		{"boundary equal passes", []string{"yes", "no"}, scoring.Options{Threshold: testkit.Ptr(0.5)}, 0.5, scoring.LabelPass},
		{"just above threshold", []string{"yes", "no"}, scoring.Options{Threshold: testkit.Ptr(0.49)}, 0.5, scoring.LabelFail},
		{"scale 10", []string{"yes", "no", "no"}, scoring.Options{Scale: 10}, 3.33, scoring.LabelPass},
		{"scale 10 two of three", []string{"yes", "yes", "no"}, scoring.Options{Scale: 10}, 6.67, scoring.LabelFail},
		{"scale 10 boundary", []string{"yes", "no", "no", "no"}, scoring.Options{Scale: 10, Threshold: testkit.Ptr(2.5)}, 2.5, scoring.LabelPass},
		{"strict any bias is full scale", []string{"yes", "no", "no"}, scoring.Options{StrictMode: true}, 1, scoring.LabelFail},
		{"strict none biased", []string{"no", "no"}, scoring.Options{StrictMode: true}, 0, scoring.LabelPass},
		{"strict ignores threshold", []string{"yes", "no", "no", "no"}, scoring.Options{StrictMode: true, Threshold: testkit.Ptr(0.9)}, 1, scoring.LabelFail},
		{"strict scale 10", []string{"no", "yes"}, scoring.Options{StrictMode: true, Scale: 10}, 10, scoring.LabelFail},
		{"threshold zero passes only zero", []string{"no"}, scoring.Options{Threshold: testkit.Ptr(0.0)}, 0, scoring.LabelPass},
		// Rounded to two decimals as Mastra does, and labelled on the
		// rounded score: a result exactly at the threshold passes at any
		// scale (3/6 × 0.1 is 0.05000000000000001 unrounded).
		{"scale 0.1 at threshold", []string{"yes", "yes", "yes", "no", "no", "no"}, scoring.Options{Scale: 0.1, Threshold: testkit.Ptr(0.05)}, 0.05, scoring.LabelPass},
		{"scale 0.3 at threshold", []string{"yes", "no", "no"}, scoring.Options{Scale: 0.3, Threshold: testkit.Ptr(0.1)}, 0.1, scoring.LabelPass},
		{"scale 0.7 at threshold", []string{"yes", "yes", "yes", "no", "no", "no"}, scoring.Options{Scale: 0.7, Threshold: testkit.Ptr(0.35)}, 0.35, scoring.LabelPass},
		{"scale 0.7 one of three", []string{"yes", "no", "no"}, scoring.Options{Scale: 0.7, Threshold: testkit.Ptr(0.23)}, 0.23, scoring.LabelPass},
		{"scale 10 two of three at threshold", []string{"yes", "yes", "no"}, scoring.Options{Scale: 10, Threshold: testkit.Ptr(6.67)}, 6.67, scoring.LabelPass},
		// At most MaxOpinions (100) are judged; at scale 0.4 one biased
		// opinion of 100 rounds to 0.
		{"rounds 1 of 100 at scale 0.4 to 0", append([]string{"yes"}, repeat("no", 99)...), scoring.Options{Scale: 0.4, Threshold: testkit.Ptr(0.0)}, 0, scoring.LabelPass},
		{"1 of 100 at scale 1 is 0.01", append([]string{"yes"}, repeat("no", 99)...), scoring.Options{Threshold: testkit.Ptr(0.0)}, 0.01, scoring.LabelFail},
		{"strict decides on counts, not the rounded score", append([]string{"yes"}, repeat("no", 99)...), scoring.Options{Scale: 0.4, StrictMode: true}, 0.4, scoring.LabelFail},
	}
	runFormulaTable(t, scoring.Bias, tests, testkit.BiasReplies, func(int) scoring.Case { return scoring.Case{Input: "q", Output: "answer"} })
}

func TestHallucinationFormula(t *testing.T) {
	tests := []formulaCase{
		{"all supported", []string{"no", "no", "no"}, scoring.Options{}, 0, scoring.LabelPass},
		{"one of four", []string{"yes", "no", "no", "no"}, scoring.Options{}, 1.0 / 4.0 * 1, scoring.LabelPass},
		{"two of three", []string{"yes", "yes", "no"}, scoring.Options{}, 0.67, scoring.LabelFail},
		{"boundary equal passes", []string{"yes", "no"}, scoring.Options{}, 0.5, scoring.LabelPass},
		{"scale 10", []string{"yes", "no", "no"}, scoring.Options{Scale: 10}, 3.33, scoring.LabelPass},
		{"scale 10 threshold boundary", []string{"yes", "yes", "no", "no", "no"}, scoring.Options{Scale: 10, Threshold: testkit.Ptr(4.0)}, 4, scoring.LabelPass},
		{"scale 10 over threshold", []string{"yes", "yes", "no"}, scoring.Options{Scale: 10, Threshold: testkit.Ptr(6.0)}, 6.67, scoring.LabelFail},
		{"strict one hallucination", []string{"no", "no", "yes"}, scoring.Options{StrictMode: true}, 1, scoring.LabelFail},
		{"strict none", []string{"no"}, scoring.Options{StrictMode: true, Scale: 10}, 0, scoring.LabelPass},
		{"scale 0.1 at threshold", []string{"yes", "yes", "yes", "no", "no", "no"}, scoring.Options{Scale: 0.1, Threshold: testkit.Ptr(0.05)}, 0.05, scoring.LabelPass},
		{"scale 0.7 at threshold", []string{"yes", "yes", "yes", "no", "no", "no"}, scoring.Options{Scale: 0.7, Threshold: testkit.Ptr(0.35)}, 0.35, scoring.LabelPass},
	}
	runFormulaTable(t, scoring.Hallucination, tests, testkit.HallucinationReplies, func(int) scoring.Case {
		return scoring.Case{Input: "q", Output: "answer", Context: []string{"doc"}}
	})
}

func TestPromptAlignmentFormula(t *testing.T) {
	tests := []formulaCase{
		{"all followed", []string{"yes", "yes"}, scoring.Options{}, 1, scoring.LabelPass},
		{"none followed", []string{"no", "no"}, scoring.Options{}, 0, scoring.LabelFail},
		{"n/a excluded", []string{"yes", "yes", "no", "n/a"}, scoring.Options{}, 0.67, scoring.LabelPass},
		{"one of three", []string{"yes", "no", "no"}, scoring.Options{}, 0.33, scoring.LabelFail},
		{"boundary equal passes", []string{"yes", "no"}, scoring.Options{}, 0.5, scoring.LabelPass},
		{"just below threshold", []string{"yes", "no"}, scoring.Options{Threshold: testkit.Ptr(0.51)}, 0.5, scoring.LabelFail},
		{"scale 10", []string{"yes", "yes", "no"}, scoring.Options{Scale: 10}, 6.67, scoring.LabelPass},
		{"scale 10 threshold 7", []string{"yes", "yes", "no"}, scoring.Options{Scale: 10, Threshold: testkit.Ptr(7.0)}, 6.67, scoring.LabelFail},
		{"scale 10 boundary", []string{"yes", "yes", "yes", "no", "N/A"}, scoring.Options{Scale: 10, Threshold: testkit.Ptr(7.5)}, 7.5, scoring.LabelPass},
		{"strict partial is zero", []string{"yes", "yes", "no"}, scoring.Options{StrictMode: true}, 0, scoring.LabelFail},
		{"strict all followed", []string{"yes", "n/a", "yes"}, scoring.Options{StrictMode: true}, 1, scoring.LabelPass},
		{"strict scale 10", []string{"yes", "yes"}, scoring.Options{StrictMode: true, Scale: 10}, 10, scoring.LabelPass},
		{"strict ignores threshold", []string{"yes", "yes", "yes", "no"}, scoring.Options{StrictMode: true, Threshold: testkit.Ptr(0.1)}, 0, scoring.LabelFail},
		{"scale 0.7 two of three at threshold", []string{"yes", "yes", "no"}, scoring.Options{Scale: 0.7, Threshold: testkit.Ptr(0.47)}, 0.47, scoring.LabelPass},
		{"scale 0.3 two of three at threshold", []string{"yes", "yes", "no"}, scoring.Options{Scale: 0.3, Threshold: testkit.Ptr(0.2)}, 0.2, scoring.LabelPass},
		{"strict decides on counts: 299 of 300 rounds to 1 but fails", append(repeat("yes", 299), "no"), scoring.Options{StrictMode: true}, 0, scoring.LabelFail},
	}
	runFormulaTable(t, scoring.PromptAlignment, tests, testkit.AlignmentReplies, func(n int) scoring.Case {
		return scoring.Case{Input: "q", Output: "answer", Instructions: testkit.Instructions(n)}
	})
}

// TestStrictWithFractionalScale checks ratios are decided on counts, so a
// perfect or clean result at a scale such as 0.7 is exactly the scale or 0,
// never 0.6999… turned into a failure by strict mode.
func TestStrictWithFractionalScale(t *testing.T) {
	tests := []struct {
		scorer    string
		replies   map[string][]string
		c         scoring.Case
		opts      scoring.Options
		wantScore float64
		wantLabel scoring.Label
	}{
		{scoring.PromptAlignment, testkit.AlignmentReplies("yes", "yes", "yes"), scoring.Case{Output: "o", Instructions: testkit.Instructions(3)}, scoring.Options{Scale: 0.7, StrictMode: true}, 0.7, scoring.LabelPass},
		{scoring.PromptAlignment, testkit.AlignmentReplies("yes", "yes", "yes"), scoring.Case{Output: "o", Instructions: testkit.Instructions(3)}, scoring.Options{Scale: 0.7}, 0.7, scoring.LabelPass},
		{scoring.PromptAlignment, testkit.AlignmentReplies("yes", "yes", "yes"), scoring.Case{Output: "o", Instructions: testkit.Instructions(3)}, scoring.Options{Scale: 0.7, Threshold: testkit.Ptr(0.7)}, 0.7, scoring.LabelPass},
		{scoring.PromptAlignment, testkit.AlignmentReplies("yes", "yes", "yes", "yes", "yes", "yes", "yes"), scoring.Case{Output: "o", Instructions: testkit.Instructions(7)}, scoring.Options{Scale: 0.3, StrictMode: true}, 0.3, scoring.LabelPass},
		{scoring.Bias, testkit.BiasReplies("yes", "yes", "yes"), scoring.Case{Output: "o"}, scoring.Options{Scale: 0.7, Threshold: testkit.Ptr(0.69)}, 0.7, scoring.LabelFail},
		{scoring.Bias, testkit.BiasReplies("yes", "yes", "yes"), scoring.Case{Output: "o"}, scoring.Options{Scale: 0.7, StrictMode: true}, 0.7, scoring.LabelFail},
		{scoring.Hallucination, testkit.HallucinationReplies("no", "no", "no"), scoring.Case{Output: "o", Context: []string{"c"}}, scoring.Options{Scale: 0.7, StrictMode: true}, 0, scoring.LabelPass},
		{scoring.Hallucination, testkit.HallucinationReplies("yes", "yes", "yes"), scoring.Case{Output: "o", Context: []string{"c"}}, scoring.Options{Scale: 0.7}, 0.7, scoring.LabelFail},
	}
	for _, tt := range tests {
		res := mustNew(t, tt.scorer, testkit.NewJudge(tt.replies), tt.opts).Score(context.Background(), tt.c)
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

// TestEveryScoreIsRounded checks the ends of the scale are rounded like
// every score in between (issue 36 item 10): at scale 0.125 an all-biased,
// all-hallucinated, all-followed or all-toxic result is 0.13, as Mastra's
// roundToTwoDecimals gives, not 0.125. A perfect result still passes at a
// threshold equal to the scale and in strict mode, whose ends are the
// rounded scale too.
func TestEveryScoreIsRounded(t *testing.T) {
	toxic := func(vs ...string) map[string][]string {
		var out []map[string]string
		for i, v := range vs {
			out = append(out, map[string]string{"opinion": fmt.Sprintf("opinion %d", i+1), "verdict": v, "reason": "r"})
		}
		return map[string][]string{"toxicity_verdicts": {testkit.MustJSON(map[string]any{"verdicts": out})}}
	}
	tests := []struct {
		name      string
		scorer    string
		replies   map[string][]string
		c         scoring.Case
		opts      scoring.Options
		wantScore float64
		wantLabel scoring.Label
	}{
		{"all biased at 0.125", scoring.Bias, testkit.BiasReplies("yes", "yes"), scoring.Case{Output: "o"}, scoring.Options{Scale: 0.125}, 0.13, scoring.LabelFail},
		{"all hallucinated at 0.125", scoring.Hallucination, testkit.HallucinationReplies("yes"), scoring.Case{Output: "o", Context: []string{"c"}}, scoring.Options{Scale: 0.125}, 0.13, scoring.LabelFail},
		{"all toxic at 0.125", scoring.Toxicity, toxic("yes", "yes"), scoring.Case{Output: "o"}, scoring.Options{Scale: 0.125}, 0.13, scoring.LabelFail},
		{"all followed at 0.125", scoring.PromptAlignment, testkit.AlignmentReplies("yes", "yes"), scoring.Case{Output: "o", Instructions: testkit.Instructions(2)}, scoring.Options{Scale: 0.125}, 0.13, scoring.LabelPass},
		{"all followed at 0.333, threshold the scale", scoring.PromptAlignment, testkit.AlignmentReplies("yes"), scoring.Case{Output: "o", Instructions: testkit.Instructions(1)}, scoring.Options{Scale: 0.333, Threshold: testkit.Ptr(0.333)}, 0.33, scoring.LabelPass},
		{"all followed at 0.333, strict", scoring.PromptAlignment, testkit.AlignmentReplies("yes"), scoring.Case{Output: "o", Instructions: testkit.Instructions(1)}, scoring.Options{Scale: 0.333, StrictMode: true}, 0.33, scoring.LabelPass},
		{"one broken at 0.333, strict", scoring.PromptAlignment, testkit.AlignmentReplies("yes", "no"), scoring.Case{Output: "o", Instructions: testkit.Instructions(2)}, scoring.Options{Scale: 0.333, StrictMode: true}, 0, scoring.LabelFail},
		{"one biased at 0.125, strict", scoring.Bias, testkit.BiasReplies("yes", "no"), scoring.Case{Output: "o"}, scoring.Options{Scale: 0.125, StrictMode: true}, 0.13, scoring.LabelFail},
		// Half the scale passes at the default threshold at any scale:
		// 1 of 2 × 0.125 rounds to 0.06, as does the threshold 0.0625.
		{"half followed at 0.125, default threshold", scoring.PromptAlignment, testkit.AlignmentReplies("yes", "no"), scoring.Case{Output: "o", Instructions: testkit.Instructions(2)}, scoring.Options{Scale: 0.125}, 0.06, scoring.LabelPass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustNew(t, tt.scorer, testkit.NewJudge(tt.replies), tt.opts).Score(context.Background(), tt.c)
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if res.Score != tt.wantScore || res.Label != tt.wantLabel {
				t.Errorf("score %v label %s, want %v %s", res.Score, res.Label, tt.wantScore, tt.wantLabel)
			}
		})
	}
}
