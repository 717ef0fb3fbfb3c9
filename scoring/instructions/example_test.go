package instructions_test

import (
	"context"
	"fmt"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/instructions"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

func ExampleNewSplitter() {
	judge := scoringtest.Canned{
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
