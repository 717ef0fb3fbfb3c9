package pipeline_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/bias"
	"github.com/llm-eval/llm_eval/scoring/hallucination"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
	"github.com/llm-eval/llm_eval/scoring/promptalignment"
)

// TestEdgeCases checks the cases that need fewer judge calls than the
// full pipeline, counting the calls.
func TestEdgeCases(t *testing.T) {
	noOpinions := map[string][]string{
		bias.SchemaOpinions:  {`{"opinions": []}`},
		bias.SchemaResults:   {`{"results": [{"result": "no", "reason": "A plain fact."}]}`},
		scoring.SchemaReason: {`{"reason": "judge reason"}`},
	}
	tests := []struct {
		name       string
		scorer     string
		replies    map[string][]string
		opts       scoring.Options
		c          scoring.Case
		wantLabel  scoring.Label
		wantScore  float64
		wantCalls  []string
		wantReason string // substring; "" means the reason must be empty
	}{
		{
			name: "bias empty output", scorer: scoring.Bias, replies: testkit.BiasReplies("yes"),
			c: scoring.Case{Input: "q", Output: "  \n"}, wantLabel: scoring.LabelPass, wantScore: 0,
			wantReason: "output is empty",
		},
		// No opinion found: the output is judged as the one opinion
		// (Mastra's rule), one analyze call more.
		{
			name: "bias no opinions, reason off", scorer: scoring.Bias, replies: noOpinions, opts: scoring.Options{OmitReason: true},
			c: scoring.Case{Output: "Paris is the capital of France."}, wantLabel: scoring.LabelPass, wantScore: 0,
			wantCalls: []string{bias.SchemaOpinions, bias.SchemaResults},
		},
		{
			name: "bias no opinions, reason on", scorer: scoring.Bias, replies: noOpinions, opts: scoring.Options{ReasonMode: scoring.ReasonSummary},
			c: scoring.Case{Output: "Paris is the capital of France."}, wantLabel: scoring.LabelPass, wantScore: 0,
			wantCalls: []string{bias.SchemaOpinions, bias.SchemaResults}, wantReason: "judged as a whole, is not biased",
		},
		{
			name: "bias no opinions, strict, scale 10", scorer: scoring.Bias, replies: noOpinions, opts: scoring.Options{StrictMode: true, Scale: 10},
			c: scoring.Case{Output: "Water boils at 100 C."}, wantLabel: scoring.LabelPass, wantScore: 0,
			wantCalls: []string{bias.SchemaOpinions, bias.SchemaResults, scoring.SchemaReason}, wantReason: "judge reason",
		},
		{
			name: "bias reason off", scorer: scoring.Bias, replies: testkit.BiasReplies("yes", "no"), opts: scoring.Options{OmitReason: true},
			c: scoring.Case{Output: "text"}, wantLabel: scoring.LabelPass, wantScore: 0.5,
			wantCalls: []string{bias.SchemaOpinions, bias.SchemaResults},
		},
		{
			name: "hallucination empty output", scorer: scoring.Hallucination, replies: testkit.HallucinationReplies("yes"),
			c: scoring.Case{Output: "", Context: []string{"doc"}}, wantLabel: scoring.LabelPass, wantScore: 0,
			wantReason: "The score is 0 because the output is empty",
		},
		{
			name: "hallucination blank output and no context", scorer: scoring.Hallucination, replies: testkit.HallucinationReplies("yes"),
			c: scoring.Case{Output: " \n\t"}, wantLabel: scoring.LabelPass, wantScore: 0, wantReason: "output is empty",
		},
		{
			name: "hallucination empty output, strict, scale 10, reason off", scorer: scoring.Hallucination, replies: testkit.HallucinationReplies("yes"),
			opts: scoring.Options{StrictMode: true, Scale: 10, OmitReason: true},
			c:    scoring.Case{Output: "", Context: []string{"doc"}}, wantLabel: scoring.LabelPass, wantScore: 0,
		},
		{
			name: "hallucination empty output, threshold 0", scorer: scoring.Hallucination, replies: testkit.HallucinationReplies("yes"),
			opts: scoring.Options{Threshold: testkit.Ptr(0.0)},
			c:    scoring.Case{Output: ""}, wantLabel: scoring.LabelPass, wantScore: 0, wantReason: "output is empty",
		},
		{
			name: "hallucination no context", scorer: scoring.Hallucination, replies: testkit.HallucinationReplies("yes"),
			c: scoring.Case{Output: "The sky is green."}, wantLabel: scoring.LabelNotScorable, wantReason: "no context",
		},
		{
			name: "hallucination blank context", scorer: scoring.Hallucination, replies: testkit.HallucinationReplies("yes"),
			c: scoring.Case{Output: "The sky is green.", Context: []string{"", "  "}}, wantLabel: scoring.LabelNotScorable, wantReason: "no context",
		},
		{
			name: "hallucination no claims", scorer: scoring.Hallucination, replies: testkit.HallucinationReplies(), opts: scoring.Options{OmitReason: true},
			c: scoring.Case{Output: "Hello! How can I help?", Context: []string{"doc"}}, wantLabel: scoring.LabelPass, wantScore: 0,
			wantCalls: []string{hallucination.SchemaClaims},
		},
		{
			name: "alignment no instructions, system only", scorer: scoring.PromptAlignment, replies: testkit.AlignmentReplies("yes"),
			opts: scoring.Options{InstructionSources: scoring.SourcesSystem},
			c:    scoring.Case{Input: "q", Output: "a"}, wantLabel: scoring.LabelNotScorable, wantReason: "no instructions",
		},
		{
			name: "alignment blank instructions, system only", scorer: scoring.PromptAlignment, replies: testkit.AlignmentReplies("yes"),
			opts: scoring.Options{InstructionSources: scoring.SourcesSystem},
			c:    scoring.Case{Input: "q", Output: "a", Instructions: []string{" "}}, wantLabel: scoring.LabelNotScorable, wantReason: "no instructions",
		},
		{
			name: "alignment no instructions and no request", scorer: scoring.PromptAlignment, replies: testkit.AlignmentReplies("yes"),
			c: scoring.Case{Output: "a", Instructions: []string{" "}}, wantLabel: scoring.LabelNotScorable, wantReason: "no instructions",
		},
		{
			name: "alignment: the user's message gives no instruction", scorer: scoring.PromptAlignment,
			replies: map[string][]string{promptalignment.SchemaVerdicts: {`{"verdicts": [], "user_instructions": []}`}},
			c:       scoring.Case{Input: "Thanks!", Output: "You're welcome."}, wantLabel: scoring.LabelNotScorable,
			wantCalls: []string{promptalignment.SchemaVerdicts}, wantReason: "gives no instruction",
		},
		{
			name: "alignment all n/a", scorer: scoring.PromptAlignment, replies: testkit.AlignmentReplies("n/a", "N/A"),
			c: scoring.Case{Input: "q", Output: "a", Instructions: testkit.Instructions(2)}, wantLabel: scoring.LabelNotScorable,
			wantCalls: []string{promptalignment.SchemaVerdicts}, wantReason: "None of the 2 instructions applies",
		},
		{
			name: "alignment empty output is still judged", scorer: scoring.PromptAlignment, replies: testkit.AlignmentReplies("no", "n/a"),
			opts: scoring.Options{OmitReason: true},
			c:    scoring.Case{Input: "q", Output: "", Instructions: testkit.Instructions(2)}, wantLabel: scoring.LabelFail, wantScore: 0,
			wantCalls: []string{promptalignment.SchemaVerdicts},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := testkit.NewJudge(tt.replies)
			s := mustNew(t, tt.scorer, j, tt.opts)
			res := s.Score(context.Background(), tt.c)
			if res.Label != tt.wantLabel || res.Score != tt.wantScore {
				t.Fatalf("got %s %v (err %v), want %s %v", res.Label, res.Score, res.Err, tt.wantLabel, tt.wantScore)
			}
			if got := j.Schemas(); !slices.Equal(got, tt.wantCalls) {
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
	j := testkit.NewJudge(testkit.AlignmentReplies("no"))
	s := mustNew(t, scoring.PromptAlignment, j, scoring.Options{OmitReason: true})
	s.Score(context.Background(), scoring.Case{Input: "q", Output: "", Instructions: []string{"Answer in bullet points"}})
	reqs := j.Requests()
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
	j := testkit.NewJudge(testkit.HallucinationReplies("yes", "no"))
	res := mustNew(t, scoring.Hallucination, j, scoring.Options{}).Score(context.Background(), scoring.Case{Output: "o", Context: []string{"c"}})
	if got := res.Steps.Preprocess.(hallucination.Claims); !slices.Equal(got.Claims, []string{"claim 1", "claim 2"}) {
		t.Errorf("preprocess = %+v", got)
	}
	want := []hallucination.Verdict{{Statement: "claim 1", Verdict: "yes", Reason: "reason 1"}, {Statement: "claim 2", Verdict: "no", Reason: "reason 2"}}
	if got := res.Steps.Analyze.(hallucination.Verdicts); !slices.Equal(got.Verdicts, want) {
		t.Errorf("analyze = %+v", got)
	}
	if got := res.Steps.Reason.(scoring.ReasonResult); got.Reason != "judge reason" || res.Reason != "judge reason" {
		t.Errorf("reason step = %+v, reason %q", got, res.Reason)
	}
	if res.Steps.PreprocessPrompt != "" || res.Steps.AnalyzePrompt != "" || res.Steps.ReasonPrompt != "" {
		t.Errorf("prompts kept without Verbose")
	}

	j = testkit.NewJudge(testkit.AlignmentReplies("Yes.", "N/A", "no"))
	res = mustNew(t, scoring.PromptAlignment, j, scoring.Options{}).Score(context.Background(), scoring.Case{Output: "o", Instructions: testkit.Instructions(3)})
	wantIV := []promptalignment.Verdict{
		{Number: 1, Instruction: "instruction 1", Verdict: "yes", Reason: "reason 1"},
		{Number: 2, Instruction: "instruction 2", Verdict: "n/a", Reason: "reason 2"},
		{Number: 3, Instruction: "instruction 3", Verdict: "no", Reason: "reason 3"},
	}
	if got := res.Steps.Analyze.(promptalignment.Verdicts); !slices.Equal(got.Verdicts, wantIV) {
		t.Errorf("analyze = %+v", got)
	}
	if res.Steps.Preprocess != nil {
		t.Errorf("prompt alignment has a preprocess result: %+v", res.Steps.Preprocess)
	}
}

// TestSameRepliesSameResult checks scoring is a pure function of the
// judge's replies.
func TestSameRepliesSameResult(t *testing.T) {
	run := func() scoring.Result {
		j := testkit.NewJudge(testkit.BiasReplies("yes", "no", "no"))
		return mustNew(t, scoring.Bias, j, scoring.Options{Scale: 10}).Score(context.Background(), scoring.Case{Output: "text"})
	}
	a, b := run(), run()
	if a.Score != b.Score || a.Label != b.Label || a.Reason != b.Reason || a.Usage != b.Usage {
		t.Errorf("results differ: %+v vs %+v", a, b)
	}
	if a.Score != 3.33 {
		t.Errorf("score %v", a.Score)
	}
}
