package taskcompletion

import (
	"strings"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/demo"
)

// demoTask is the offline demo judge's task: the INPUT block, its
// requirements its sentences (at most 5).
func demoTask(req scoring.Request) any {
	input := strings.TrimSpace(demo.Read(req).Text("INPUT"))
	requirements := demo.Sentences(input)
	if len(requirements) > 5 {
		requirements = requirements[:5]
	}
	return map[string]any{"task": input, "requirements": requirements}
}

// demoVerdicts is the offline demo judge's reply: one verdict per line of
// the REQUIREMENTS block, "no" when a word of four letters or more of a
// failed tool's name is in it, else "yes" (accomplished) when the OUTPUT
// block, the generation texts and the results of tool steps that did not
// fail hold its numbers and at least half of its longer words.
func demoVerdicts(req scoring.Request) any {
	b := demo.Read(req)
	evidence := runEvidence(b)
	items := b.Items(req, "REQUIREMENTS")
	verdicts := make([]map[string]string, len(items))
	failed := failedTools(b)
	for i, it := range items {
		verdicts[i] = map[string]string{"requirement": it, "verdict": "yes", "reason": "The run shows the requirement met (offline demo judge)."}
		if tool := failedToolFor(it, failed); tool != "" {
			verdicts[i] = map[string]string{"requirement": it, "verdict": "no", "reason": "The tool " + tool + " failed (offline demo judge)."}
		} else if !demo.Supported(it, evidence) {
			verdicts[i] = map[string]string{"requirement": it, "verdict": "no", "reason": "Nothing in the run shows the requirement met (offline demo judge)."}
		}
	}
	return map[string]any{"verdicts": verdicts}
}

// failedTools are the names of the tools whose steps failed in the
// TRAJECTORY block.
func failedTools(b demo.Blocks) []string {
	var out []string
	for _, s := range b.Steps() {
		if s.Kind == "tool" && s.Error != "" {
			out = append(out, s.Tool)
		}
	}
	return out
}

// failedToolFor returns the failed tool a requirement is about: one a
// word of four letters or more of whose name the requirement holds.
func failedToolFor(requirement string, failed []string) string {
	words := map[string]bool{}
	for _, w := range demo.Words(requirement) {
		words[w] = true
	}
	for _, tool := range failed {
		for _, w := range demo.Words(tool) {
			if len(w) >= 4 && words[w] {
				return tool
			}
		}
	}
	return ""
}

// runEvidence is what the verdicts are checked against, lower-cased: the
// OUTPUT block, the text of every generation step and the result of every
// tool step that did not fail.
func runEvidence(b demo.Blocks) string {
	var e strings.Builder
	e.WriteString(b.Text("OUTPUT"))
	for _, s := range b.Steps() {
		switch {
		case s.Kind == "generation":
			e.WriteString("\n" + s.Text)
		case s.Kind == "tool" && s.Error == "":
			e.WriteString("\n" + s.Result)
		}
	}
	return strings.ToLower(e.String())
}
