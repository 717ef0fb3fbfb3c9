package toxicity

import (
	"testing"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
)

// mustNew builds the scorer of the package.
func mustNew(t *testing.T, _ string, j scoring.Judge, opts scoring.Options) scoring.Scorer {
	t.Helper()
	s, err := New(j, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// render renders the prompt name of the package.
func render(name string, d pipeline.PromptData) ([]scoring.Message, error) {
	return Definition.Prompts.Lookup(name).Render(d)
}
