package scoringtest

import (
	"context"

	"github.com/llm-eval/llm_eval/scoring"
)

// Canned is an in-process fake judge for examples and unit tests: it
// answers each request with the reply scripted for its schema's name, ""
// when there is none. Real code asks an LLM (openai.NewJudge).
type Canned map[string]string

// Complete answers req with its schema's reply.
func (c Canned) Complete(_ context.Context, req scoring.Request) (scoring.Response, error) {
	return scoring.Response{Content: c[req.Schema.Name], FinishReason: "stop"}, nil
}
