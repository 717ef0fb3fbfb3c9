package answerrelevancy_test

import (
	"context"
	"fmt"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/answerrelevancy"
)

// cannedJudge answers each request with the reply scripted for its
// schema. Real code uses a Judge that calls an LLM.
type cannedJudge map[string]string

func (j cannedJudge) Complete(_ context.Context, req scoring.Request) (scoring.Response, error) {
	return scoring.Response{Content: j[req.Schema.Name], FinishReason: "stop"}, nil
}

func ExampleNew() {
	judge := cannedJudge{
		answerrelevancy.SchemaStatements: `{"statements": ["The ferry takes about two hours.", "Ferries leave from the West Harbour.", "Tallinn is lovely."]}`,
		answerrelevancy.SchemaResults: `{"results": [
			{"statement": "The ferry takes about two hours.", "result": "yes", "reason": "Gives the duration."},
			{"statement": "Ferries leave from the West Harbour.", "result": "unsure", "reason": "About the ferry, not its duration."},
			{"statement": "Tallinn is lovely.", "result": "no", "reason": "Unrelated."}]}`,
	}
	s, err := answerrelevancy.New(judge, scoring.Options{ReasonMode: scoring.ReasonSummary})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := s.Score(context.Background(), scoring.Case{
		Input:  "How long is the ferry from Helsinki to Tallinn?",
		Output: "The ferry takes about two hours. Ferries leave from the West Harbour. Tallinn is lovely.",
	})
	// (1 + 0.3 × 1) / 3 = 0.433…, rounded to two decimals.
	fmt.Println(res.Score, res.Label, res.Usage.LLMCalls)
	// Output:
	// 0.43 fail 2
}
