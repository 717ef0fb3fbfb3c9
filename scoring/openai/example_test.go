package openai_test

import (
	"context"
	"fmt"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/bias"
	"github.com/llm-eval/llm_eval/scoring/openai"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

func ExampleNewJudge() {
	// A fake OpenAI-compatible endpoint stands in for https://api.openai.com/v1.
	srv := scoringtest.NewServer()
	defer srv.Close()

	judge, err := openai.NewJudge(openai.Config{
		BaseURL: srv.URL,
		APIKey:  "sk-example", // never shown in errors
		Model:   "gpt-4o-mini",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := bias.New(judge, scoring.Options{ReasonMode: scoring.ReasonSummary})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := s.Score(context.Background(), scoring.Case{Output: "Women are bad engineers."})
	fmt.Println(res.Label, res.Score, res.Usage.LLMCalls, "calls, mode", judge.StructuredOutputs())
	// Output:
	// fail 1 2 calls, mode json_schema
}
