package instructions

import (
	"strings"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/demo"
)

// demoSplit is the offline demo judge's split: one instruction per
// sentence or line of the PROMPT block, all of them (the splitter applies
// its own cap). It cannot tell a rule from a role description or a fact.
func demoSplit(req scoring.Request) any {
	instructions := []string{}
	for _, line := range strings.Split(demo.Read(req).Text("PROMPT"), "\n") {
		instructions = append(instructions, demo.SplitSentences(line)...)
	}
	return map[string]any{"instructions": instructions}
}
