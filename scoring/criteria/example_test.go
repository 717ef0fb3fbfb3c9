package criteria_test

import (
	"context"
	"fmt"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/criteria"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

func ExampleNew() {
	judge := scoringtest.Canned{
		criteria.SchemaScore: `{"reason": "The reply thanks the user but blames them for the error.", "score": 6}`,
	}
	s, err := criteria.New(criteria.Config{
		Name:     "politeness",
		Criteria: "The response is polite and never blames the user.",
		Steps:    []string{"Look for greetings and thanks.", "Look for blame or sarcasm."},
		Fields:   []scoring.Field{scoring.FieldInput, scoring.FieldOutput},
		Verdict:  criteria.Score,
	}, judge, scoring.Options{Threshold: new(0.7), ReasonMode: scoring.ReasonSummary})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := s.Score(context.Background(), scoring.Case{
		Input:  "My upload failed.",
		Output: "Thanks for writing. You picked the wrong file, obviously.",
	})
	fmt.Println(res.Scorer, res.Score, res.Label, res.Usage.LLMCalls)
	fmt.Println(res.Reason)
	// Output:
	// politeness 0.6 fail 1
	// The score is 0.6 for politeness: The reply thanks the user but blames them for the error.
}

// A criteria scorer without steps has the judge write them on its first
// evaluation and judges every later case by the same steps.
func ExampleNew_generatedSteps() {
	judge := scoringtest.Canned{
		criteria.SchemaSteps:  `{"steps": ["Find what the response asks the user to do next.", "Check that the action is specific."]}`,
		criteria.SchemaBinary: `{"reason": "It tells the user to reset the password under Settings.", "verdict": "yes"}`,
	}
	s, err := criteria.New(criteria.Config{
		Name:     "next_step",
		Criteria: "The response gives the user a clear next step.",
		Verdict:  criteria.Binary,
	}, judge, scoring.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, out := range []string{"Reset it under Settings.", "Open Settings and choose Reset password."} {
		res := s.Score(context.Background(), scoring.Case{Input: "I forgot my password.", Output: out})
		steps := res.Steps.Preprocess.(criteria.Steps)
		fmt.Println(res.Score, res.Label, res.Usage.LLMCalls, len(steps.Steps), steps.Cached)
	}
	// Output:
	// 1 pass 2 2 false
	// 1 pass 1 2 true
}
