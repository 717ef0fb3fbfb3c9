package conversationcompleteness_test

import (
	"context"
	"fmt"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/conversationcompleteness"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

func ExampleNew() {
	judge := scoringtest.Canned{
		conversationcompleteness.SchemaIntentions: `{"intentions": ["The user wants a hotel in Porto near the river.", "The user wants directions from the airport."]}`,
		conversationcompleteness.SchemaVerdicts: `{"verdicts": [
			{"intention": "The user wants a hotel in Porto near the river.", "verdict": "yes", "reason": "It suggested the Ribeira Guesthouse."},
			{"intention": "The user wants directions from the airport.", "verdict": "no", "reason": "No reply gave directions."}]}`,
	}
	s, err := conversationcompleteness.New(judge, scoring.Options{ReasonMode: scoring.ReasonSummary})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := s.Score(context.Background(), scoring.Case{Turns: []scoring.Turn{
		{Role: scoring.RoleUser, Content: "Can you suggest a hotel in Porto near the river?"},
		{Role: scoring.RoleAssistant, Content: "Try the Ribeira Guesthouse, right on the quay."},
		{Role: scoring.RoleUser, Content: "And how do I get there from the airport?"},
		{Role: scoring.RoleAssistant, Content: "Porto has a great food scene!"},
	}})
	fmt.Println(res.Score, res.Label, res.Usage.LLMCalls)
	fmt.Println(res.Reason)
	// Output:
	// 0.5 pass 2
	// The score is 0.5 because the assistant satisfied 1 of the 2 intentions the user had in the conversation; left unsatisfied: No reply gave directions.
}
