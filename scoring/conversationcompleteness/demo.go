package conversationcompleteness

import (
	"strings"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/demo"
)

// The offline demo judge's replies: an intention for each user message
// that asks something (its first sentence with a question mark or a
// request word), at most ten; an intention is "yes" when a later
// assistant message shares a word of five letters or more with the
// request, else "no".

// asks matches a user message that asks for something.
func asks(s string) bool {
	l := strings.ToLower(s)
	if strings.Contains(l, "?") {
		return true
	}
	for _, w := range []string{"please", "can you", "could you", "i want", "i need", "help me"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

const demoPrefix = "The user wants: "

func demoIntentions(req scoring.Request) any {
	intentions := []string{}
	for _, t := range demo.Read(req).Turns() {
		if t.Role != "user" || len(intentions) == 10 {
			continue
		}
		for _, s := range demo.SplitSentences(t.Content) {
			if asks(s) {
				intentions = append(intentions, demoPrefix+s)
				break
			}
		}
	}
	return map[string]any{"intentions": intentions}
}

func demoVerdicts(req scoring.Request) any {
	b := demo.Read(req)
	turns := b.Turns()
	met := func(intention string) bool {
		request := strings.ToLower(strings.TrimPrefix(intention, demoPrefix))
		asked := false
		for _, t := range turns {
			switch {
			case t.Role == "user" && strings.Contains(strings.ToLower(t.Content), request):
				asked = true
			case asked && t.Role == "assistant" && demo.SharesLongWord(strings.ToLower(t.Content), request):
				return true
			}
		}
		return false
	}
	return map[string]any{"verdicts": demo.Verdicts(b.Items(req, "INTENTIONS"), "intention", "verdict", met,
		"A later reply takes up the request.", "No later reply takes up the request.")}
}
