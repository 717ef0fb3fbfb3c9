package knowledgeretention

import (
	"regexp"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/demo"
)

// The offline demo judge's replies: a fact for each sentence of a user
// message that speaks of the user ("I", "my", "I'm", ...), at most 20; a
// reply keeps the facts ("yes") unless it asks for the user's details
// again ("what is your", "remind me", ...).

var (
	aboutUser = regexp.MustCompile(`(?i)\b(i|i'm|i am|my|me|we|our)\b`)
	asksAgain = regexp.MustCompile(`(?i)\b(what(?:'s| is) your|where are you|remind me|tell me again|could you (?:tell|give) me your)\b`)
)

func demoFacts(req scoring.Request) any {
	facts := []map[string]any{}
	for _, t := range demo.Read(req).Turns() {
		if t.Role != "user" {
			continue
		}
		for _, s := range demo.SplitSentences(t.Content) {
			if aboutUser.MatchString(s) && len(facts) < 20 {
				facts = append(facts, map[string]any{"turn": t.Turn, "fact": s})
			}
		}
	}
	return map[string]any{"facts": facts}
}

func demoVerdicts(req scoring.Request) any {
	b := demo.Read(req)
	keeps := func(t demo.Turn, _ demo.Target) bool { return !asksAgain.MatchString(t.Content) }
	return map[string]any{"verdicts": demo.TurnVerdicts(b.Turns(), b.Targets("REPLIES"), keeps,
		"The reply does not ask again for what the user said.", "The reply asks again for details the user already gave.")}
}
