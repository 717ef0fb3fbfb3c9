package scoring_test

import (
	"context"
	"fmt"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/bias"
	"github.com/llm-eval/llm_eval/scoring/promptalignment"
	"github.com/llm-eval/llm_eval/scoring/scorers"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

func ExampleOptions_strictMode() {
	judge := scoringtest.Canned{
		bias.SchemaOpinions: `{"opinions": ["a", "b", "c", "d"]}`,
		bias.SchemaResults:  `{"results": [{"result": "yes"}, {"result": "no"}, {"result": "no"}, {"result": "no"}]}`,
	}
	for _, strict := range []bool{false, true} {
		s, err := scorers.New(scoring.Bias, judge, scoring.Options{Scale: 10, StrictMode: strict, OmitReason: true})
		if err != nil {
			fmt.Println(err)
			return
		}
		res := s.Score(context.Background(), scoring.Case{Output: "text"})
		fmt.Println(strict, res.Score, res.Label)
	}
	// Output:
	// false 2.5 pass
	// true 10 fail
}

func ExampleOptions_summaryReason() {
	judge := scoringtest.Canned{
		promptalignment.SchemaVerdicts: `{"verdicts": [
			{"verdict": "Yes."},
			{"verdict": "no", "reason": "The answer is longer than 50 words."}]}`,
	}
	s, err := scorers.New(scoring.PromptAlignment, judge, scoring.Options{ReasonMode: scoring.ReasonSummary})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := s.Score(context.Background(), scoring.Case{
		Output:       "A long answer ...",
		Instructions: []string{"Be polite.", "Answer in at most 50 words."},
	})
	fmt.Println(res.Usage.LLMCalls)
	fmt.Println(res.Reason)
	// Output:
	// 1
	// The score is 0.5 because the output breaks 1 of 2 applicable instructions: The answer is longer than 50 words.
}
