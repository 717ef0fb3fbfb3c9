package conversationrelevancy

import (
	"strings"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/demo"
)

// demoVerdicts is the offline demo judge's reply: a reply is relevant
// ("yes") when it shares a word of five letters or more with a user
// message of its window, or when those messages have no such word
// (greetings, small talk).
func demoVerdicts(req scoring.Request) any {
	b := demo.Read(req)
	turns := b.Turns()
	relevant := func(reply demo.Turn, tg demo.Target) bool {
		var asked strings.Builder
		for _, t := range turns {
			if t.Role == "user" && t.Turn >= tg.From && t.Turn < tg.Turn {
				asked.WriteString(strings.ToLower(t.Content) + " ")
			}
		}
		words := asked.String()
		return !demo.SharesLongWord(words, words) || demo.SharesLongWord(strings.ToLower(reply.Content), words)
	}
	return map[string]any{"verdicts": demo.TurnVerdicts(turns, b.Targets("REPLIES"), relevant,
		"The reply takes up what the user said.", "The reply shares nothing with what the user said.")}
}
