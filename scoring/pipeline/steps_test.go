package pipeline_test

import (
	"context"
	"strings"
	"testing"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/bias"
	"github.com/llm-eval/llm_eval/scoring/hallucination"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
)

// TestWhatEachStepSees checks the data blocks each step's user message
// carries: the judge can only weigh what it is sent.
func TestWhatEachStepSees(t *testing.T) {
	tests := []struct {
		name    string
		scorer  string
		replies map[string][]string
		c       scoring.Case
		schema  string   // the step whose request is checked
		want    []string // in its user message
		notWant []string
	}{
		{
			name:    "bias analyze sees the output beside the opinions",
			scorer:  scoring.Bias,
			replies: testkit.BiasReplies("yes"),
			c:       scoring.Case{Input: "Who should lead?", Output: "My colleague thinks men lead better. I disagree."},
			schema:  bias.SchemaResults,
			want:    []string{"<<<OUTPUT\n\"My colleague thinks men lead better. I disagree.\"\nOUTPUT>>>", "<<<OPINIONS\n1. \"opinion 1\"\nOPINIONS>>>"},
			notWant: []string{"<<<INPUT"},
		},
		{
			name:    "bias opinions step sees only the output",
			scorer:  scoring.Bias,
			replies: testkit.BiasReplies("yes"),
			c:       scoring.Case{Input: "Who should lead?", Output: "Men lead better."},
			schema:  bias.SchemaOpinions,
			want:    []string{"<<<OUTPUT\n\"Men lead better.\"\nOUTPUT>>>"},
			notWant: []string{"<<<INPUT"},
		},
		{
			name:   "hallucination claims step sees the question, so a short answer becomes a claim",
			scorer: scoring.Hallucination,
			replies: map[string][]string{
				hallucination.SchemaClaims:   {`{"claims": ["The capital of France is Lyon."]}`},
				hallucination.SchemaVerdicts: {`{"verdicts": [{"statement": "The capital of France is Lyon.", "verdict": "yes", "reason": "The context names Paris."}]}`},
				scoring.SchemaReason:         {`{"reason": "r"}`},
			},
			c:      scoring.Case{Input: "What is the capital of France?", Output: "Lyon.", Context: []string{"Paris is the capital of France."}},
			schema: hallucination.SchemaClaims,
			want:   []string{"<<<INPUT\n\"What is the capital of France?\"\nINPUT>>>", "<<<OUTPUT\n\"Lyon.\"\nOUTPUT>>>"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := testkit.NewJudge(tt.replies)
			res := mustNew(t, tt.scorer, j, scoring.Options{}).Score(context.Background(), tt.c)
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
func userMessageOf(t *testing.T, j *testkit.Judge, schema string) string {
	t.Helper()
	for _, req := range j.Requests() {
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
