package scoring

import (
	"context"
	"strings"
	"testing"
)

// TestWhatEachStepSees checks the data blocks each step's user message
// carries: the judge can only weigh what it is sent.
func TestWhatEachStepSees(t *testing.T) {
	tests := []struct {
		name    string
		scorer  string
		replies map[string][]string
		c       Case
		schema  string   // the step whose request is checked
		want    []string // in its user message
		notWant []string
	}{
		{
			name:    "bias analyze sees the output beside the opinions",
			scorer:  Bias,
			replies: biasReplies("yes"),
			c:       Case{Input: "Who should lead?", Output: "My colleague thinks men lead better. I disagree."},
			schema:  SchemaBiasResults,
			want:    []string{"<<<OUTPUT\n\"My colleague thinks men lead better. I disagree.\"\nOUTPUT>>>", "<<<OPINIONS\n1. \"opinion 1\"\nOPINIONS>>>"},
			notWant: []string{"<<<INPUT"},
		},
		{
			name:    "bias opinions step sees only the output",
			scorer:  Bias,
			replies: biasReplies("yes"),
			c:       Case{Input: "Who should lead?", Output: "Men lead better."},
			schema:  SchemaBiasOpinions,
			want:    []string{"<<<OUTPUT\n\"Men lead better.\"\nOUTPUT>>>"},
			notWant: []string{"<<<INPUT"},
		},
		{
			name:   "hallucination claims step sees the question, so a short answer becomes a claim",
			scorer: Hallucination,
			replies: map[string][]string{
				SchemaHallucinationClaims:   {`{"claims": ["The capital of France is Lyon."]}`},
				SchemaHallucinationVerdicts: {`{"verdicts": [{"statement": "The capital of France is Lyon.", "verdict": "yes", "reason": "The context names Paris."}]}`},
				SchemaReason:                {`{"reason": "r"}`},
			},
			c:      Case{Input: "What is the capital of France?", Output: "Lyon.", Context: []string{"Paris is the capital of France."}},
			schema: SchemaHallucinationClaims,
			want:   []string{"<<<INPUT\n\"What is the capital of France?\"\nINPUT>>>", "<<<OUTPUT\n\"Lyon.\"\nOUTPUT>>>"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := newJudge(tt.replies)
			res := mustNew(t, tt.scorer, j, Options{}).Score(context.Background(), tt.c)
			if !res.Scored() {
				t.Fatalf("got %s: %v", res.Label, res.Err)
			}
			msg := userMessageOf(t, j, tt.schema)
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%s user message lacks %q:\n%s", tt.schema, w, msg)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(msg, w) {
					t.Errorf("%s user message has %q:\n%s", tt.schema, w, msg)
				}
			}
		})
	}
}

// userMessageOf returns the user message of the first request for schema.
func userMessageOf(t *testing.T, j *scriptedJudge, schema string) string {
	t.Helper()
	for _, req := range j.requests() {
		if req.Schema == nil || req.Schema.Name != schema {
			continue
		}
		for _, m := range req.Messages {
			if m.Role == "user" {
				return m.Content
			}
		}
	}
	t.Fatalf("no %s request", schema)
	return ""
}
