package pipeline_test

import (
	"flag"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/bias"
	"github.com/llm-eval/llm_eval/scoring/hallucination"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
	"github.com/llm-eval/llm_eval/scoring/promptalignment"
	"github.com/llm-eval/llm_eval/scoring/scorers"
)

// mustNew builds the built-in scorer name with a clock that advances one
// second per read, so latency is deterministic.
func mustNew(t *testing.T, name string, j scoring.Judge, opts scoring.Options) scoring.Scorer {
	t.Helper()
	s, err := scorers.New(name, j, opts)
	if err != nil {
		t.Fatalf("scorers.New(%q): %v", name, err)
	}
	var mu sync.Mutex
	clock := time.Unix(0, 0)
	pipeline.SetClock(s, func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Second)
		return clock
	})
	return s
}

// prompt returns the prompt name: the reason step of scorer's set, or the
// one prompt of that name.
func prompt(name, scorer string) (*pipeline.Prompt, error) {
	if name == scoring.SchemaReason {
		d, ok := scorers.Definition(scorer)
		if !ok {
			d, _ = scorers.Definition(scoring.PromptAlignment)
		}
		return d.Prompts.Lookup(name), nil
	}
	for _, set := range scorers.Prompts() {
		if p := set.Lookup(name); p != nil {
			return p, nil
		}
	}
	return nil, fmt.Errorf("no prompt %s", name)
}

// render renders the prompt name with d; the reason step is d.Scorer's.
func render(name string, d pipeline.PromptData) ([]scoring.Message, error) {
	p, err := prompt(name, d.Scorer)
	if err != nil {
		return nil, err
	}
	return p.Render(d)
}

// schemaOf is the schema of the prompt name.
func schemaOf(name string) *scoring.Schema {
	p, err := prompt(name, scoring.PromptAlignment)
	if err != nil {
		panic(err)
	}
	return p.Schema
}

// The verdict specs of bias and hallucination, as their packages read
// their analyze replies.
var (
	biasSpec        = pipeline.VerdictSpec{Schema: schemaOf(bias.SchemaResults), Field: "results", Keys: []string{"result", "verdict"}, Unit: "opinion", Echo: "opinion"}
	instructionSpec = pipeline.VerdictSpec{Schema: schemaOf(promptalignment.SchemaVerdicts), Field: "verdicts", Keys: []string{"verdict", "result"}, AllowNA: true, Unit: "instruction", Echo: "instruction"}
	claimSpec       = pipeline.VerdictSpec{Schema: schemaOf(hallucination.SchemaVerdicts), Field: "verdicts", Keys: []string{"verdict", "result"}, Unit: "claim"}
)

var updatePrompts = flag.Bool("update", false, "rewrite ../testdata/prompts/*.golden from the rendered prompts")
