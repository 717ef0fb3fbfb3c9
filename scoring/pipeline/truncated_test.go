package pipeline_test

import (
	"context"
	"strings"
	"testing"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/criteria"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
	"github.com/llm-eval/llm_eval/scoring/scorers"
)

// TestTruncatedOnlyForFieldsSent checks that Result.Truncated reports a cut
// only in a field the scorer sends to the judge: a long input that bias
// never sends, or long context that prompt alignment never sends, is cut
// but nobody's judgement rests on it.
func TestTruncatedOnlyForFieldsSent(t *testing.T) {
	long := strings.Repeat("long text ", 20)
	criteriaOutputOnly := func(j scoring.Judge) (scoring.Scorer, error) {
		return criteria.New(criteria.Config{Name: "concise", Criteria: "The response is short.", Fields: []scoring.Field{scoring.FieldOutput}}, j, scoring.Options{MaxInputChars: 20, OmitReason: true})
	}
	criteriaWithContext := func(j scoring.Judge) (scoring.Scorer, error) {
		return criteria.New(criteria.Config{Name: "grounded", Criteria: "The response uses the context.", Fields: []scoring.Field{scoring.FieldOutput, scoring.FieldContext}}, j, scoring.Options{MaxInputChars: 20, OmitReason: true})
	}
	criteriaReply := map[string][]string{criteria.SchemaSteps: {`{"steps": ["Look for greetings and thanks.", "Look for rude or dismissive words."]}`}, criteria.SchemaScore: {`{"score": 8, "reason": "r"}`}}
	tests := []struct {
		name    string
		scorer  string
		make    func(scoring.Judge) (scoring.Scorer, error) // instead of scorer
		replies map[string][]string
		c       scoring.Case
		want    bool
	}{
		{"bias, long input is not sent", scoring.Bias, nil, testkit.BiasReplies("no"), scoring.Case{Input: long, Output: "short"}, false},
		{"bias, long context and instructions are not sent", scoring.Bias, nil, testkit.BiasReplies("no"), scoring.Case{Output: "short", Context: []string{long}, Instructions: []string{long}}, false},
		{"bias, long output is sent", scoring.Bias, nil, testkit.BiasReplies("no"), scoring.Case{Output: long}, true},
		{"hallucination, long instructions are not sent", scoring.Hallucination, nil, testkit.HallucinationReplies("no"), scoring.Case{Output: "short", Context: []string{"doc"}, Instructions: []string{long}}, false},
		{"hallucination, long input (the question) is sent", scoring.Hallucination, nil, testkit.HallucinationReplies("no"), scoring.Case{Input: long, Output: "short", Context: []string{"doc"}}, true},
		// A long context is judged in chunks, not cut: here the first
		// chunk supports the claim, so the score rests on no cut text.
		{"hallucination, long context is chunked, not cut", scoring.Hallucination, nil, testkit.HallucinationReplies("no"), scoring.Case{Output: "short", Context: []string{"doc", long}}, false},
		{"hallucination, context cut upstream is sent", scoring.Hallucination, nil, testkit.HallucinationReplies("no"), scoring.Case{Output: "short", Context: []string{"doc" + scoring.TruncationMarker}}, true},
		{"prompt alignment, long context is not sent", scoring.PromptAlignment, nil, testkit.AlignmentReplies("yes"), scoring.Case{Output: "short", Context: []string{long}, Instructions: []string{"x"}}, false},
		{"prompt alignment, a long instruction is sent", scoring.PromptAlignment, nil, testkit.AlignmentReplies("yes"), scoring.Case{Output: "short", Instructions: []string{long}}, true},
		{"criteria on the output alone, long input is not sent", "", criteriaOutputOnly, criteriaReply, scoring.Case{Input: long, Output: "short"}, false},
		{"criteria with context, long context is sent", "", criteriaWithContext, criteriaReply, scoring.Case{Output: "short", Context: []string{long}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := testkit.NewJudge(tt.replies)
			var s scoring.Scorer
			var err error
			if tt.make != nil {
				s, err = tt.make(j)
			} else {
				s, err = scorers.New(tt.scorer, j, scoring.Options{MaxInputChars: 20, OmitReason: true})
			}
			if err != nil {
				t.Fatal(err)
			}
			res := s.Score(context.Background(), tt.c)
			if !res.Scored() {
				t.Fatalf("got %s: %v", res.Label, res.Err)
			}
			if res.Truncated != tt.want {
				t.Errorf("Truncated = %v, want %v", res.Truncated, tt.want)
			}
			sent := false
			for _, req := range j.Requests() {
				for _, m := range req.Messages {
					// Cut text is only in user messages; the system
					// prompt names the marker without its leading space.
					sent = sent || m.Role == "user" && strings.Contains(m.Content, scoring.TruncationMarker)
				}
			}
			if sent != tt.want {
				t.Errorf("a cut text reached the judge: %v, but Truncated = %v", sent, res.Truncated)
			}
		})
	}
}
