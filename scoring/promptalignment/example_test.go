package promptalignment_test

import (
	"context"
	"fmt"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/promptalignment"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

func ExampleNew() {
	judge := scoringtest.Canned{
		promptalignment.SchemaVerdicts: `{"verdicts": [
			{"verdict": "yes", "reason": "The answer is in English."},
			{"verdict": "no", "reason": "The items are not bullets."},
			{"verdict": "n/a", "reason": "No prices are involved."}]}`,
		scoring.SchemaReason: `{"reason": "The score is 0.5 because the list is not bulleted."}`,
	}
	s, err := promptalignment.New(judge, scoring.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := s.Score(context.Background(), scoring.Case{
		Input:        "What should I pack for a hike?",
		Output:       "Water, snacks and a map.",
		Instructions: []string{"Answer in English.", "Use bullet points.", "Quote prices in euros."},
	})
	fmt.Println(res.Score, res.Label)
	// Output: 0.5 pass
}
