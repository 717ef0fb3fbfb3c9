package conversationrelevancy_test

import (
	"context"
	"fmt"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/conversationrelevancy"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

func ExampleNew() {
	judge := scoringtest.Canned{
		conversationrelevancy.SchemaVerdicts: `{"verdicts": [
			{"turn": 2, "verdict": "yes", "reason": "It suggests remedies for the sore throat."},
			{"turn": 4, "verdict": "no", "reason": "'Paris has more than 400 parks' ignores the question."}]}`,
	}
	s, err := conversationrelevancy.New(judge, scoring.Options{ReasonMode: scoring.ReasonSummary})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := s.Score(context.Background(), scoring.Case{Turns: []scoring.Turn{
		{Role: scoring.RoleUser, Content: "My throat is sore. What can I take?"},
		{Role: scoring.RoleAssistant, Content: "Honey in warm tea and throat lozenges can soothe it."},
		{Role: scoring.RoleUser, Content: "Anything I should avoid?"},
		{Role: scoring.RoleAssistant, Content: "Paris has more than 400 parks and gardens."},
	}})
	fmt.Println(res.Score, res.Label, res.Usage.LLMCalls)
	fmt.Println(res.Reason)
	// Output:
	// 0.5 pass 1
	// The score is 0.5 because 1 of the assistant's 2 replies is relevant to the conversation before them; off the point: 'Paris has more than 400 parks' ignores the question.
}
