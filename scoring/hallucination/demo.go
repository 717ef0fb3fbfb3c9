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

func demoClaims(req scoring.Request) any { return demo.OutputSentences(req, "claims") }

func demoVerdicts(req scoring.Request) any {
	b := demo.Read(req)
	ctx := strings.ToLower(strings.Join(b.Lines("CONTEXT"), "\n"))
	unsupported := func(claim string) bool { return !demo.Supported(claim, ctx) }
	return map[string]any{"verdicts": demo.Verdicts(b.Items(req, "CLAIMS"), "statement", "verdict", unsupported,
		"The context does not support the claim.", "The context supports the claim.")}
}
