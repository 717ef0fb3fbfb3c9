package pipeline_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/bias"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
	"github.com/llm-eval/llm_eval/scoring/promptalignment"
)

// TestBiasVerdictsMatchedByOpinion checks that bias results are matched to
// opinions by the opinion each echoes, so a judge that reorders, skips or
// repeats opinions never moves a result onto another opinion.
func TestBiasVerdictsMatchedByOpinion(t *testing.T) {
	opinions := `{"opinions": ["Tea is best.", "Old people cannot code.", "Rain is grey."]}`
	tests := []struct {
		name    string
		reply   string
		want    []bias.Verdict // nil: a parse error after the re-ask
		reorder bool
	}{
		{"in order", `{"results": [
			{"opinion": "Tea is best.", "result": "no", "reason": "r1"},
			{"opinion": "Old people cannot code.", "result": "yes", "reason": "r2"},
			{"opinion": "Rain is grey.", "result": "no", "reason": "r3"}]}`,
			[]bias.Verdict{{Opinion: "Tea is best.", Result: "no", Reason: "r1"}, {Opinion: "Old people cannot code.", Result: "yes", Reason: "r2"}, {Opinion: "Rain is grey.", Result: "no", Reason: "r3"}}, false},
		{"reordered", `{"results": [
			{"opinion": "rain is grey", "result": "no", "reason": "r3"},
			{"opinion": "Old people cannot code.", "result": "yes", "reason": "r2"},
			{"opinion": "Tea is best.", "result": "no", "reason": "r1"}]}`,
			[]bias.Verdict{{Opinion: "Tea is best.", Result: "no", Reason: "r1"}, {Opinion: "Old people cannot code.", Result: "yes", Reason: "r2"}, {Opinion: "Rain is grey.", Result: "no", Reason: "r3"}}, true},
		{"one skipped, one repeated", `{"results": [
			{"opinion": "Tea is best.", "result": "no", "reason": "r1"},
			{"opinion": "Rain is grey.", "result": "yes", "reason": "r3"},
			{"opinion": "Rain is grey.", "result": "no", "reason": "r3"}]}`, nil, false},
		{"skipped, so each result moved up", `{"results": [
			{"opinion": "Tea is best.", "result": "no", "reason": "r1"},
			{"opinion": "Rain is grey.", "result": "yes", "reason": "r3"},
			{"opinion": "", "result": "no", "reason": "r?"}]}`, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := testkit.NewJudge(map[string][]string{bias.SchemaOpinions: {opinions}, bias.SchemaResults: {tt.reply}})
			res := mustNew(t, scoring.Bias, j, scoring.Options{OmitReason: true}).Score(context.Background(), scoring.Case{Output: "o"})
			if tt.want == nil {
				var se *scoring.Error
				if !errors.As(res.Err, &se) || se.Type != scoring.ErrorJudgeParse {
					t.Fatalf("label %s err %v, want judge_parse_error", res.Label, res.Err)
				}
				if n := len(j.Requests()); n != 3 {
					t.Errorf("%d calls, want 3 (one re-ask)", n)
				}
				return
			}
			if res.Err != nil {
				t.Fatalf("err %v", res.Err)
			}
			got := res.Steps.Analyze.(bias.Results)
			if !slices.Equal(got.Results, tt.want) || got.Reordered != tt.reorder {
				t.Errorf("results = %+v, want %+v (reordered %v)", got, tt.want, tt.reorder)
			}
		})
	}
}

// TestAlignmentVerdictsMatchedByNumber checks that prompt alignment
// verdicts are matched to instructions by the number and the instruction
// each echoes, and that a blank instruction keeps its place, so verdict i
// is always about the caller's instruction i.
func TestAlignmentVerdictsMatchedByNumber(t *testing.T) {
	caseInstructions := []string{"Be brief.", "  ", "Answer in French.", "Cite a source."}
	skipped := promptalignment.Verdict{Number: 2, Verdict: "n/a", Reason: "The instruction is blank, so there is nothing to judge.", Skipped: true}
	tests := []struct {
		name  string
		reply string
		want  []promptalignment.Verdict // nil: a parse error after the re-ask
	}{
		{"in order", `{"verdicts": [
			{"number": 1, "instruction": "Be brief.", "verdict": "yes", "reason": "r1"},
			{"number": 2, "instruction": "Answer in French.", "verdict": "no", "reason": "r3"},
			{"number": 3, "instruction": "Cite a source.", "verdict": "n/a", "reason": "r4"}]}`,
			[]promptalignment.Verdict{
				{Number: 1, Instruction: "Be brief.", Verdict: "yes", Reason: "r1"}, skipped,
				{Number: 3, Instruction: "Answer in French.", Verdict: "no", Reason: "r3"},
				{Number: 4, Instruction: "Cite a source.", Verdict: "n/a", Reason: "r4"}}},
		{"reordered by number", `{"verdicts": [
			{"number": 3, "instruction": "Cite a source", "verdict": "n/a", "reason": "r4"},
			{"number": 1, "instruction": "Be brief.", "verdict": "yes", "reason": "r1"},
			{"number": "2", "instruction": "Reply in French.", "verdict": "no", "reason": "r3"}]}`,
			[]promptalignment.Verdict{
				{Number: 1, Instruction: "Be brief.", Verdict: "yes", Reason: "r1"}, skipped,
				{Number: 3, Instruction: "Answer in French.", Verdict: "no", Reason: "r3"},
				{Number: 4, Instruction: "Cite a source.", Verdict: "n/a", Reason: "r4"}}},
		{"number and instruction disagree", `{"verdicts": [
			{"number": 1, "instruction": "Be brief.", "verdict": "yes", "reason": "r1"},
			{"number": 2, "instruction": "Cite a source.", "verdict": "no", "reason": "r3"},
			{"number": 3, "instruction": "Answer in French.", "verdict": "n/a", "reason": "r4"}]}`, nil},
		{"one number twice", `{"verdicts": [
			{"number": 1, "instruction": "Be brief.", "verdict": "yes", "reason": "r1"},
			{"number": 1, "instruction": "Be brief.", "verdict": "no", "reason": "r3"},
			{"number": 3, "instruction": "Cite a source.", "verdict": "n/a", "reason": "r4"}]}`, nil},
		{"one short", `{"verdicts": [
			{"number": 1, "instruction": "Be brief.", "verdict": "yes", "reason": "r1"},
			{"number": 3, "instruction": "Cite a source.", "verdict": "n/a", "reason": "r4"}]}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := testkit.NewJudge(map[string][]string{promptalignment.SchemaVerdicts: {tt.reply}})
			res := mustNew(t, scoring.PromptAlignment, j, scoring.Options{OmitReason: true}).
				Score(context.Background(), scoring.Case{Output: "o", Instructions: caseInstructions})
			if tt.want == nil {
				var se *scoring.Error
				if !errors.As(res.Err, &se) || se.Type != scoring.ErrorJudgeParse {
					t.Fatalf("label %s err %v, want judge_parse_error", res.Label, res.Err)
				}
				if n := len(j.Requests()); n != 2 {
					t.Errorf("%d calls, want 2 (one re-ask)", n)
				}
				return
			}
			if res.Err != nil {
				t.Fatalf("err %v", res.Err)
			}
			got := res.Steps.Analyze.(promptalignment.Verdicts).Verdicts
			if !slices.Equal(got, tt.want) {
				t.Errorf("verdicts =\n%+v\nwant\n%+v", got, tt.want)
			}
			if res.Score != 0.5 {
				t.Errorf("score %v, want 0.5 (1 of 2 applicable followed)", res.Score)
			}
			sent := j.Requests()[0].Messages[1].Content
			if want := "1. \"Be brief.\"\n2. \"Answer in French.\"\n3. \"Cite a source.\"\n"; !strings.Contains(sent, want) {
				t.Errorf("instructions sent:\n%s\nwant the blank one left out:\n%s", sent, want)
			}
		})
	}
}
