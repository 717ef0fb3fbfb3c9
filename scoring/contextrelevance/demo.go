package contextrelevance

import (
	"strings"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/demo"
)

// demoEvaluations is the offline demo judge's reply: one evaluation per
// line of the CONTEXT block, "high" when the item shares a longer word
// with the INPUT block, else "none"; used when it shares one with the
// OUTPUT block; nothing missing.
func demoEvaluations(req scoring.Request) any {
	b := demo.Read(req)
	input, output := strings.ToLower(b.Text("INPUT")), strings.ToLower(b.Text("OUTPUT"))
	items := b.Lines("CONTEXT")
	evaluations := make([]map[string]any, len(items))
	for i, it := range items {
		it = strings.ToLower(it)
		ev := map[string]any{"item": i + 1, "relevance": "none", "used": demo.SharesLongWord(it, output), "reason": "The item does not touch the question."}
		if demo.SharesLongWord(it, input) {
			ev["relevance"], ev["reason"] = "high", "The item is about what the question asks."
		}
		evaluations[i] = ev
	}
	return map[string]any{"evaluations": evaluations, "missing_context": []string{}, "overall_assessment": "Offline demo judge: relevance by shared words."}
}
