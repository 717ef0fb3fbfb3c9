package contextrelevance_test

import (
	"context"
	"fmt"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/contextrelevance"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

func ExampleNew() {
	judge := scoringtest.Canned{
		contextrelevance.SchemaEvaluations: `{"evaluations": [
			{"item": 1, "relevance": "high", "used": true, "reason": "Gives the opening time."},
			{"item": 2, "relevance": "low", "used": false, "reason": "About tickets, not hours."}],
			"missing_context": [], "overall_assessment": "One item answers the question."}`,
	}
	penalties := scoring.DefaultContextPenalties()
	penalties.UnusedHighRelevance = 0.2
	s, err := contextrelevance.New(judge, scoring.Options{OmitReason: true, ContextPenalties: &penalties})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := s.Score(context.Background(), scoring.Case{
		Input:   "When does the box office open?",
		Output:  "It opens at 10:00.",
		Context: []string{"The box office is open daily from 10:00 to 18:00.", "Tickets can also be bought online."},
	})
	// (1 + 0.3) / 2 = 0.65: no high-relevance item went unused, nothing was missing.
	ev := res.Steps.Analyze.(contextrelevance.Evaluations)
	fmt.Println(res.Score, res.Label, ev.Evaluations[1].RelevanceLevel)
	// Output:
	// 0.65 pass low
}
