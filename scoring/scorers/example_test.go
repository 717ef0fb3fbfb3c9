package scorers_test

import (
	"fmt"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/scorers"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

func ExampleNew() {
	_, err := scorers.New(scoring.Bias, scoringtest.Canned{}, scoring.Options{Threshold: new(2.0)})
	fmt.Println(err)
	_, err = scorers.New("sentiment", scoringtest.Canned{}, scoring.Options{})
	fmt.Println(err)
	// Output:
	// scorer bias: threshold must be between 0 and the scale 1, got 2
	// unknown scorer "sentiment": want one of bias, hallucination, prompt_alignment, task_completion, tool_use, answer_relevancy, context_relevance, toxicity, conversation_completeness, knowledge_retention, role_adherence, conversation_relevancy
}
