package hallucination_test

import (
	"context"
	"fmt"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/hallucination"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

func ExampleNew() {
	judge := scoringtest.Canned{
		hallucination.SchemaClaims: `{"claims": ["The bridge opened in 1932.", "The bridge is 3 km long."]}`,
		hallucination.SchemaVerdicts: `{"verdicts": [
			{"statement": "The bridge opened in 1932.", "verdict": "no", "reason": "The context gives 1932."},
			{"statement": "The bridge is 3 km long.", "verdict": "yes", "reason": "The context gives no length."}]}`,
		scoring.SchemaReason: `{"reason": "The score is 0.5 because the length is not in the context."}`,
	}
	s, err := hallucination.New(judge, scoring.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := s.Score(context.Background(), scoring.Case{
		Output:  "The bridge opened in 1932 and is 3 km long.",
		Context: []string{"The bridge opened to traffic in 1932."},
	})
	fmt.Println(res.Score, res.Label)
	fmt.Println(res.Steps.Analyze.(hallucination.Verdicts).Verdicts[1].Verdict)

	// Without context there is nothing to check against.
	res = s.Score(context.Background(), scoring.Case{Output: "The bridge is 3 km long."})
	fmt.Println(res.Label, res.Usage.LLMCalls)
	// Output:
	// 0.5 pass
	// yes
	// not_scorable 0
}
