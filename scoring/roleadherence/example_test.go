package roleadherence_test

import (
	"context"
	"fmt"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/roleadherence"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

func ExampleNew() {
	judge := scoringtest.Canned{
		roleadherence.SchemaVerdicts: `{"verdicts": [
			{"turn": 2, "verdict": "yes", "reason": "It answers the opening hours warmly."},
			{"turn": 4, "verdict": "no", "reason": "'Dear Hiring Manager' starts a cover letter, outside the museum-only role."}]}`,
	}
	s, err := roleadherence.New(judge, scoring.Options{ReasonMode: scoring.ReasonSummary})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := s.Score(context.Background(), scoring.Case{
		Instructions: []string{"You are Ada, the guide of the City Science Museum. Answer questions about the museum only."},
		Turns: []scoring.Turn{
			{Role: scoring.RoleUser, Content: "When do you open tomorrow?"},
			{Role: scoring.RoleAssistant, Content: "Good morning! We open at 9 tomorrow."},
			{Role: scoring.RoleUser, Content: "Write me a cover letter for a banking job."},
			{Role: scoring.RoleAssistant, Content: "Dear Hiring Manager, I am writing to apply..."},
		},
	})
	fmt.Println(res.Score, res.Label, res.Usage.LLMCalls)
	fmt.Println(res.Reason)
	// Output:
	// 0.5 pass 1
	// The score is 0.5 because 1 of the assistant's 2 messages stays in the role its system prompt gives it; out of role: 'Dear Hiring Manager' starts a cover letter, outside the museum-only role.
}
