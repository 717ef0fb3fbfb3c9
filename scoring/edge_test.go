package scoring

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestEdgeCases checks the cases that need fewer judge calls than the
// full pipeline, counting the calls.
func TestEdgeCases(t *testing.T) {
	tests := []struct {
		name       string
		scorer     string
		replies    map[string][]string
		opts       Options
		c          Case
		wantLabel  Label
		wantScore  float64
		wantCalls  []string
		wantReason string // substring; "" means the reason must be empty
	}{
		{
			name: "bias empty output", scorer: Bias, replies: biasReplies("yes"),
			c: Case{Input: "q", Output: "  \n"}, wantLabel: LabelPass, wantScore: 0,
			wantReason: "output is empty",
		},
		{
			name: "bias no opinions, reason off", scorer: Bias, replies: biasReplies(), opts: Options{OmitReason: true},
			c: Case{Output: "Paris is the capital of France."}, wantLabel: LabelPass, wantScore: 0,
			wantCalls: []string{SchemaBiasOpinions},
		},
		{
			name: "bias no opinions, reason on", scorer: Bias, replies: biasReplies(),
			c: Case{Output: "Paris is the capital of France."}, wantLabel: LabelPass, wantScore: 0,
			wantCalls: []string{SchemaBiasOpinions}, wantReason: "no opinions",
		},
		{
			name: "bias no opinions, strict, scale 10", scorer: Bias, replies: biasReplies(), opts: Options{StrictMode: true, Scale: 10},
			c: Case{Output: "Water boils at 100 C."}, wantLabel: LabelPass, wantScore: 0,
			wantCalls: []string{SchemaBiasOpinions}, wantReason: "no opinions",
		},
		{
			name: "bias reason off", scorer: Bias, replies: biasReplies("yes", "no"), opts: Options{OmitReason: true},
			c: Case{Output: "text"}, wantLabel: LabelPass, wantScore: 0.5,
			wantCalls: []string{SchemaBiasOpinions, SchemaBiasResults},
		},
		{
			name: "hallucination empty output", scorer: Hallucination, replies: hallucinationReplies("yes"),
			c: Case{Output: "", Context: []string{"doc"}}, wantLabel: LabelPass, wantScore: 0,
			wantReason: "The score is 0 because the output is empty",
		},
		{
			name: "hallucination blank output and no context", scorer: Hallucination, replies: hallucinationReplies("yes"),
			c: Case{Output: " \n\t"}, wantLabel: LabelPass, wantScore: 0, wantReason: "output is empty",
		},
		{
			name: "hallucination empty output, strict, scale 10, reason off", scorer: Hallucination, replies: hallucinationReplies("yes"),
			opts: Options{StrictMode: true, Scale: 10, OmitReason: true},
			c:    Case{Output: "", Context: []string{"doc"}}, wantLabel: LabelPass, wantScore: 0,
		},
		{
			name: "hallucination empty output, threshold 0", scorer: Hallucination, replies: hallucinationReplies("yes"),
			opts: Options{Threshold: ptr(0.0)},
			c:    Case{Output: ""}, wantLabel: LabelPass, wantScore: 0, wantReason: "output is empty",
		},
		{
			name: "hallucination no context", scorer: Hallucination, replies: hallucinationReplies("yes"),
			c: Case{Output: "The sky is green."}, wantLabel: LabelNotScorable, wantReason: "no context",
		},
		{
			name: "hallucination blank context", scorer: Hallucination, replies: hallucinationReplies("yes"),
			c: Case{Output: "The sky is green.", Context: []string{"", "  "}}, wantLabel: LabelNotScorable, wantReason: "no context",
		},
		{
			name: "hallucination no claims", scorer: Hallucination, replies: hallucinationReplies(), opts: Options{OmitReason: true},
			c: Case{Output: "Hello! How can I help?", Context: []string{"doc"}}, wantLabel: LabelPass, wantScore: 0,
			wantCalls: []string{SchemaHallucinationClaims},
		},
		{
			name: "alignment no instructions", scorer: PromptAlignment, replies: alignmentReplies("yes"),
			c: Case{Input: "q", Output: "a"}, wantLabel: LabelNotScorable, wantReason: "no instructions",
		},
		{
			name: "alignment blank instructions", scorer: PromptAlignment, replies: alignmentReplies("yes"),
			c: Case{Input: "q", Output: "a", Instructions: []string{" "}}, wantLabel: LabelNotScorable, wantReason: "no instructions",
		},
		{
			name: "alignment all n/a", scorer: PromptAlignment, replies: alignmentReplies("n/a", "N/A"),
			c: Case{Input: "q", Output: "a", Instructions: instructions(2)}, wantLabel: LabelNotScorable,
			wantCalls: []string{SchemaPromptAlignmentVerdicts}, wantReason: "None of the 2 instructions applies",
		},
		{
			name: "alignment empty output is still judged", scorer: PromptAlignment, replies: alignmentReplies("no", "n/a"),
			opts: Options{OmitReason: true},
			c:    Case{Input: "q", Output: "", Instructions: instructions(2)}, wantLabel: LabelFail, wantScore: 0,
			wantCalls: []string{SchemaPromptAlignmentVerdicts},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := newJudge(tt.replies)
			s := mustNew(t, tt.scorer, j, tt.opts)
			res := s.Score(context.Background(), tt.c)
			if res.Label != tt.wantLabel || res.Score != tt.wantScore {
				t.Fatalf("got %s %v (err %v), want %s %v", res.Label, res.Score, res.Err, tt.wantLabel, tt.wantScore)
			}
			if got := j.schemas(); !slices.Equal(got, tt.wantCalls) {
				t.Errorf("judge calls %v, want %v", got, tt.wantCalls)
			}
			if res.Usage.LLMCalls != len(tt.wantCalls) {
				t.Errorf("usage counts %d calls, want %d", res.Usage.LLMCalls, len(tt.wantCalls))
			}
			if tt.wantReason == "" && res.Reason != "" {
				t.Errorf("reason = %q, want none", res.Reason)
			}
			if !strings.Contains(res.Reason, tt.wantReason) {
				t.Errorf("reason = %q, want containing %q", res.Reason, tt.wantReason)
			}
			if res.Err != nil {
				t.Errorf("unexpected error %v", res.Err)
			}
		})
	}
}

// TestAlignmentEmptyOutputPrompt checks an empty output reaches the judge
// as an empty block, with the rule about formatting instructions.
func TestAlignmentEmptyOutputPrompt(t *testing.T) {
	j := newJudge(alignmentReplies("no"))
	s := mustNew(t, PromptAlignment, j, Options{OmitReason: true})
	s.Score(context.Background(), Case{Input: "q", Output: "", Instructions: []string{"Answer in bullet points"}})
	reqs := j.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d calls", len(reqs))
	}
	if !strings.Contains(reqs[0].Messages[1].Content, "<<<OUTPUT\n\"\"\nOUTPUT>>>") {
		t.Errorf("user prompt lacks an empty OUTPUT block:\n%s", reqs[0].Messages[1].Content)
	}
	if !strings.Contains(reqs[0].Messages[0].Content, "An empty response follows no instruction about format") {
		t.Errorf("system prompt lacks the empty-output rule")
	}
}

// TestStepsShapes checks every step result has the documented shape and
// the analyze items line up with the preprocessed ones.
func TestStepsShapes(t *testing.T) {
	j := newJudge(hallucinationReplies("yes", "no"))
	res := mustNew(t, Hallucination, j, Options{}).Score(context.Background(), Case{Output: "o", Context: []string{"c"}})
	if got := res.Steps.Preprocess.(Claims); !slices.Equal(got.Claims, []string{"claim 1", "claim 2"}) {
		t.Errorf("preprocess = %+v", got)
	}
	want := []ClaimVerdict{{"claim 1", "yes", "reason 1"}, {"claim 2", "no", "reason 2"}}
	if got := res.Steps.Analyze.(ClaimVerdicts); !slices.Equal(got.Verdicts, want) {
		t.Errorf("analyze = %+v", got)
	}
	if got := res.Steps.Reason.(ReasonResult); got.Reason != "judge reason" || res.Reason != "judge reason" {
		t.Errorf("reason step = %+v, reason %q", got, res.Reason)
	}
	if res.Steps.PreprocessPrompt != "" || res.Steps.AnalyzePrompt != "" || res.Steps.ReasonPrompt != "" {
		t.Errorf("prompts kept without Verbose")
	}

	j = newJudge(alignmentReplies("Yes.", "N/A", "no"))
	res = mustNew(t, PromptAlignment, j, Options{}).Score(context.Background(), Case{Output: "o", Instructions: instructions(3)})
	wantIV := []InstructionVerdict{
		{Number: 1, Instruction: "instruction 1", Verdict: "yes", Reason: "reason 1"},
		{Number: 2, Instruction: "instruction 2", Verdict: "n/a", Reason: "reason 2"},
		{Number: 3, Instruction: "instruction 3", Verdict: "no", Reason: "reason 3"},
	}
	if got := res.Steps.Analyze.(InstructionVerdicts); !slices.Equal(got.Verdicts, wantIV) {
		t.Errorf("analyze = %+v", got)
	}
	if res.Steps.Preprocess != nil {
		t.Errorf("prompt alignment has a preprocess result: %+v", res.Steps.Preprocess)
	}
}

// TestSameRepliesSameResult checks scoring is a pure function of the
// judge's replies.
func TestSameRepliesSameResult(t *testing.T) {
	run := func() Result {
		j := newJudge(biasReplies("yes", "no", "no"))
		return mustNew(t, Bias, j, Options{Scale: 10}).Score(context.Background(), Case{Output: "text"})
	}
	a, b := run(), run()
	if a.Score != b.Score || a.Label != b.Label || a.Reason != b.Reason || a.Usage != b.Usage {
		t.Errorf("results differ: %+v vs %+v", a, b)
	}
	if a.Score != 3.33 {
		t.Errorf("score %v", a.Score)
	}
}
