package knowledgeretention_test

import (
	"context"
	"fmt"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/knowledgeretention"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

func ExampleNew() {
	judge := scoringtest.Canned{
		knowledgeretention.SchemaFacts: `{"facts": [{"turn": 1, "fact": "The user is vegetarian."}, {"turn": 1, "fact": "The user is in Lyon."}]}`,
		knowledgeretention.SchemaVerdicts: `{"verdicts": [
			{"turn": 2, "verdict": "yes", "reason": "It asks what the user needs."},
			{"turn": 4, "verdict": "no", "reason": "It asks 'Which city are you in?' though the user said Lyon."}]}`,
	}
	s, err := knowledgeretention.New(judge, scoring.Options{ReasonMode: scoring.ReasonSummary})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := s.Score(context.Background(), scoring.Case{Turns: []scoring.Turn{
		{Role: scoring.RoleUser, Content: "I'm vegetarian, and I'm in Lyon this week."},
		{Role: scoring.RoleAssistant, Content: "Noted! What are you looking for?"},
		{Role: scoring.RoleUser, Content: "A dinner place for tonight."},
		{Role: scoring.RoleAssistant, Content: "Happy to help. Which city are you in?"},
	}})
	fmt.Println(res.Score, res.Label, res.Usage.LLMCalls)
	fmt.Println(res.Reason)
	// Output:
	// 0.5 pass 2
	// The score is 0.5 because 1 of the 2 replies that follow facts the user told keeps them; forgotten or contradicted: It asks 'Which city are you in?' though the user said Lyon.
}
