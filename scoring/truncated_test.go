package scoring

import (
	"context"
	"strings"
	"testing"
)

// TestTruncatedOnlyForFieldsSent checks that Result.Truncated reports a cut
// only in a field the scorer sends to the judge: a long input that bias
// never sends, or long context that prompt alignment never sends, is cut
// but nobody's judgement rests on it.
func TestTruncatedOnlyForFieldsSent(t *testing.T) {
	long := strings.Repeat("long text ", 20)
	criteriaOutputOnly := func(j Judge) (Scorer, error) {
		return NewCriteria(CriteriaConfig{Name: "concise", Criteria: "The response is short.", Fields: []Field{FieldOutput}}, j, Options{MaxInputChars: 20, OmitReason: true})
	}
	criteriaWithContext := func(j Judge) (Scorer, error) {
		return NewCriteria(CriteriaConfig{Name: "grounded", Criteria: "The response uses the context.", Fields: []Field{FieldOutput, FieldContext}}, j, Options{MaxInputChars: 20, OmitReason: true})
	}
	criteriaReply := map[string][]string{SchemaCriteriaSteps: {stepsReply}, SchemaCriteriaScore: {`{"score": 8, "reason": "r"}`}}
	tests := []struct {
		name    string
		scorer  string
		make    func(Judge) (Scorer, error) // instead of scorer
		replies map[string][]string
		c       Case
		want    bool
	}{
		{"bias, long input is not sent", Bias, nil, biasReplies("no"), Case{Input: long, Output: "short"}, false},
		{"bias, long context and instructions are not sent", Bias, nil, biasReplies("no"), Case{Output: "short", Context: []string{long}, Instructions: []string{long}}, false},
		{"bias, long output is sent", Bias, nil, biasReplies("no"), Case{Output: long}, true},
		{"hallucination, long instructions are not sent", Hallucination, nil, hallucinationReplies("no"), Case{Output: "short", Context: []string{"doc"}, Instructions: []string{long}}, false},
		{"hallucination, long input (the question) is sent", Hallucination, nil, hallucinationReplies("no"), Case{Input: long, Output: "short", Context: []string{"doc"}}, true},
		{"hallucination, long context is sent", Hallucination, nil, hallucinationReplies("no"), Case{Output: "short", Context: []string{"doc", long}}, true},
		{"prompt alignment, long context is not sent", PromptAlignment, nil, alignmentReplies("yes"), Case{Output: "short", Context: []string{long}, Instructions: []string{"x"}}, false},
		{"prompt alignment, a long instruction is sent", PromptAlignment, nil, alignmentReplies("yes"), Case{Output: "short", Instructions: []string{long}}, true},
		{"criteria on the output alone, long input is not sent", "", criteriaOutputOnly, criteriaReply, Case{Input: long, Output: "short"}, false},
		{"criteria with context, long context is sent", "", criteriaWithContext, criteriaReply, Case{Output: "short", Context: []string{long}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := newJudge(tt.replies)
			var s Scorer
			var err error
			if tt.make != nil {
				s, err = tt.make(j)
			} else {
				s, err = New(tt.scorer, j, Options{MaxInputChars: 20, OmitReason: true})
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
			for _, req := range j.requests() {
				for _, m := range req.Messages {
					// Cut text is only in user messages; the system
					// prompt names the marker without its leading space.
					sent = sent || m.Role == "user" && strings.Contains(m.Content, TruncationMarker)
				}
			}
			if sent != tt.want {
				t.Errorf("a cut text reached the judge: %v, but Truncated = %v", sent, res.Truncated)
			}
		})
	}
}
