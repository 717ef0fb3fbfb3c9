package answerrelevancy

import (
	"strings"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/demo"
)

// The offline demo judge's replies: one statement per sentence of the
// OUTPUT block (at most 20); a statement is "yes" when it shares a word of
// five letters or more with the INPUT block, else "no".

func demoStatements(req scoring.Request) any { return demo.OutputSentences(req, "statements") }

func demoResults(req scoring.Request) any {
	b := demo.Read(req)
	input := strings.ToLower(b.Text("INPUT"))
	relevant := func(s string) bool { return demo.SharesLongWord(strings.ToLower(s), input) }
	return map[string]any{"results": demo.Verdicts(b.Items(req, "STATEMENTS"), "statement", "result", relevant,
		"The statement is about what the question asks.", "The statement does not touch the question.")}
}
