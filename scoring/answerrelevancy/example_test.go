package answerrelevancy_test

import (
	"context"
	"fmt"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/answerrelevancy"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

func ExampleNew() {
	judge := scoringtest.Canned{
		answerrelevancy.SchemaStatements: `{"statements": ["The ferry takes about two hours.", "Ferries leave from the West Harbour.", "Tallinn is lovely."]}`,
		answerrelevancy.SchemaResults: `{"results": [
			{"statement": "The ferry takes about two hours.", "result": "yes", "reason": "Gives the duration."},
			{"statement": "Ferries leave from the West Harbour.", "result": "unsure", "reason": "About the ferry, not its duration."},
			{"statement": "Tallinn is lovely.", "result": "no", "reason": "Unrelated."}]}`,
	}
	s, err := answerrelevancy.New(judge, scoring.Options{ReasonMode: scoring.ReasonSummary})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := s.Score(context.Background(), scoring.Case{
		Input:  "How long is the ferry from Helsinki to Tallinn?",
		Output: "The ferry takes about two hours. Ferries leave from the West Harbour. Tallinn is lovely.",
	})
	// (1 + 0.3 × 1) / 3 = 0.433…, rounded to two decimals.
	fmt.Println(res.Score, res.Label, res.Usage.LLMCalls)
	// Output:
	// 0.43 fail 2
}
