package criteria

import (
	"strings"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/demo"
)

// The offline demo judge's replies: one evaluation step per sentence of
// the CRITERION block, and full marks ("score": 10, "verdict": "yes")
// unless the OUTPUT block is empty.

func demoSteps(req scoring.Request) any {
	steps := []string{}
	for _, s := range demo.Sentences(demo.Read(req).Text("CRITERION")) {
		steps = append(steps, "Check whether the response meets this: "+s)
	}
	return map[string]any{"steps": steps}
}

func demoScore(req scoring.Request) any {
	met, reason := demoMet(req)
	return map[string]any{"reason": reason, "score": map[bool]int{true: 10, false: 0}[met]}
}

func demoBinary(req scoring.Request) any {
	met, reason := demoMet(req)
	return map[string]string{"reason": reason, "verdict": map[bool]string{true: "yes", false: "no"}[met]}
}

// demoMet says a criterion is met when the output is not empty.
func demoMet(req scoring.Request) (bool, string) {
	if strings.TrimSpace(demo.Read(req).Text("OUTPUT")) == "" {
		return false, "The response is empty."
	}
	return true, "The response addresses the criterion (offline demo judge)."
}
