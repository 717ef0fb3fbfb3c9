package answerrelevancy

import (
	"strings"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/demo"
)

// The offline demo judge's replies: one statement per sentence of the
// OUTPUT block (at most 20); a statement is "yes" when it shares a word of
// five letters or more with the INPUT block, else "no".

func demoStatements(req scoring.Request) any {
	return map[string]any{"statements": demo.Sentences(demo.Read(req).Text("OUTPUT"))}
}

func demoResults(req scoring.Request) any {
	b := demo.Read(req)
	input := strings.ToLower(b.Text("INPUT"))
	items := b.Items(req, "STATEMENTS")
	results := make([]map[string]string, len(items))
	for i, it := range items {
		results[i] = map[string]string{"statement": it, "result": "no", "reason": "The statement does not touch the question."}
		if demo.SharesLongWord(strings.ToLower(it), input) {
			results[i] = map[string]string{"statement": it, "result": "yes", "reason": "The statement is about what the question asks."}
		}
	}
	return map[string]any{"results": results}
}
