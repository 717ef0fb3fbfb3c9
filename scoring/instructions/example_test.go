package instructions_test

import (
	"context"
	"fmt"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/instructions"
)

// cannedJudge answers each request with the reply scripted for its
// schema. Real code uses a Judge that calls an LLM.
type cannedJudge map[string]string

func (j cannedJudge) Complete(_ context.Context, req scoring.Request) (scoring.Response, error) {
	return scoring.Response{Content: j[req.Schema.Name], FinishReason: "stop"}, nil
}

func ExampleNewSplitter() {
	judge := cannedJudge{
		scoring.SchemaInstructionSplit: `{"instructions": ["Answer in French.", "Keep answers under 50 words.", "Cite the catalogue number of every book you name."]}`,
	}
	splitter, err := instructions.NewSplitter(judge, instructions.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	system := "You are Quill, the assistant of a bookshop. Answer in French. " +
		"Keep answers under 50 words. Cite the catalogue number of every book you name."
	split, err := splitter.Split(context.Background(), system)
	if err != nil || len(split.Instructions) == 0 {
		// Judge the whole prompt as one instruction instead.
		split.Instructions = []string{system}
	}
	for i, in := range split.Instructions {
		fmt.Printf("%d. %s\n", i+1, in)
	}
	fmt.Println("judge calls:", split.Usage.LLMCalls)
	// Output:
	// 1. Answer in French.
	// 2. Keep answers under 50 words.
	// 3. Cite the catalogue number of every book you name.
	// judge calls: 1
}
