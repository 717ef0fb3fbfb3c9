package scorers_test

import (
	"context"
	"fmt"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/scorers"
)

// cannedJudge answers each request with the reply scripted for its
// schema. Real code uses a Judge that calls an LLM.
type cannedJudge map[string]string

func (j cannedJudge) Complete(_ context.Context, req scoring.Request) (scoring.Response, error) {
	return scoring.Response{Content: j[req.Schema.Name], FinishReason: "stop"}, nil
}

func ExampleNew() {
	_, err := scorers.New(scoring.Bias, cannedJudge{}, scoring.Options{Threshold: new(2.0)})
	fmt.Println(err)
	_, err = scorers.New("sentiment", cannedJudge{}, scoring.Options{})
	fmt.Println(err)
	// Output:
	// scorer bias: threshold must be between 0 and the scale 1, got 2
	// unknown scorer "sentiment": want one of bias, hallucination, prompt_alignment, task_completion, tool_use, answer_relevancy, context_relevance, toxicity
}
