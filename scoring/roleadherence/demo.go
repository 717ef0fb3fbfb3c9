package roleadherence

import (
	"regexp"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/demo"
)

// outOfRole matches what the offline demo judge takes for a message out
// of role: an assistant that steps out of its persona to talk about being
// a language model.
var outOfRole = regexp.MustCompile(`(?i)\b(as an ai|language model|i am (?:an? )?(?:ai|chatbot|large language model)|i'm (?:an? )?(?:ai|chatbot))\b`)

// demoVerdicts is the offline demo judge's reply: every listed message is
// in role ("yes") unless it matches outOfRole.
func demoVerdicts(req scoring.Request) any {
	b := demo.Read(req)
	inRole := func(t demo.Turn, _ demo.Target) bool { return !outOfRole.MatchString(t.Content) }
	return map[string]any{"verdicts": demo.TurnVerdicts(b.Turns(), b.Targets("REPLIES"), inRole,
		"The message speaks in the role it was given.", "The message steps out of its role to talk about being an AI.")}
}
