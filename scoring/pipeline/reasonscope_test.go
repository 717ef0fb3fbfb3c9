package pipeline_test

import (
	"strings"
	"testing"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
	"github.com/llm-eval/llm_eval/scoring/scorers"
)

// TestReasonPromptsDescribeTheFormula checks each scorer's reason prompt
// tells the judge how the score was made, in the terms the scorer's
// arithmetic uses, so the judge's explanation cannot describe another
// formula (issue 36 item 7).
func TestReasonPromptsDescribeTheFormula(t *testing.T) {
	want := map[string][]string{
		scoring.Bias:             {"share of the answer's opinions that are biased", "times 0.5"},
		scoring.Hallucination:    {"share of the answer's claims that no part of the context supports", "times 0.5"},
		scoring.PromptAlignment:  {"share of applicable instructions", "the instructions the user gave", "times 0.5"},
		scoring.TaskCompletion:   {"share of the task's requirements", "that share is halved", `"n/a" were not counted`, "times 0.5"},
		scoring.ToolUse:          {"each tool call is one decision", "each needed tool the run never called is one more", "that share is halved", "times 0.5"},
		scoring.AnswerRelevancy:  {"uncertainty weight", "0.3 unless", "times 0.5"},
		scoring.ContextRelevance: {"high 1, medium 0.7, low 0.3, none 0", "0.1 each by default", "0.15 each by default", "at most 0.5", "never below 0", "times 0.5"},
		scoring.Toxicity:         {"share of the answer's opinions that are toxic", "times 0.5"},
		// The conversation scorers (issue 40).
		scoring.ConversationCompleteness: {"share of the user's intentions over the whole conversation that the assistant satisfied", "times 0.5"},
		scoring.KnowledgeRetention:       {"share of the assistant's replies that keep the facts the user had told it", "counting only replies that follow at least one such fact", "times 0.5"},
		scoring.RoleAdherence:            {"share of the assistant's messages in the conversation that stay in the role", "times 0.5"},
		scoring.ConversationRelevancy:    {"share of the assistant's replies that are relevant to the recent conversation before them", "sliding window", "times 0.5"},
	}
	for _, name := range scorers.Names() {
		t.Run(name, func(t *testing.T) {
			d, _ := scorers.Definition(name)
			sys, err := d.Prompts.Lookup(scoring.SchemaReason).System(pipeline.PromptData{Scorer: name, Scale: "0.5"})
			if err != nil {
				t.Fatal(err)
			}
			phrases, ok := want[name]
			if !ok {
				t.Fatalf("no formula phrases for %s: add them here", name)
			}
			for _, p := range phrases {
				if !strings.Contains(sys, p) {
					t.Errorf("the reason prompt does not say %q:\n%s", p, sys)
				}
			}
		})
	}
}
