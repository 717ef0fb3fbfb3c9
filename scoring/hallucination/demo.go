package hallucination

import (
	"strings"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/demo"
)

// The offline demo judge's replies: one claim per sentence of the OUTPUT
// block (at most 20), judged "yes" (unsupported) when it holds a number
// missing from the CONTEXT block or fewer than half of its longer words
// appear in it.

func demoClaims(req scoring.Request) any {
	return map[string]any{"claims": demo.Sentences(demo.Read(req).Text("OUTPUT"))}
}

func demoVerdicts(req scoring.Request) any {
	b := demo.Read(req)
	items := b.Items(req, "CLAIMS")
	ctx := strings.ToLower(strings.Join(b.Lines("CONTEXT"), "\n"))
	verdicts := make([]map[string]string, len(items))
	for i, it := range items {
		verdicts[i] = map[string]string{"statement": it, "verdict": "no", "reason": "The context supports the claim."}
		if !demo.Supported(it, ctx) {
			verdicts[i] = map[string]string{"statement": it, "verdict": "yes", "reason": "The context does not support the claim."}
		}
	}
	return map[string]any{"verdicts": verdicts}
}
