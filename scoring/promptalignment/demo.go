package promptalignment

import (
	"strings"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/demo"
)

// demoVerdicts is the offline demo judge's reply: one verdict per line of
// the INSTRUCTIONS block, "yes" (followed) unless the output is empty,
// echoing the instruction and its number; when the user's instructions are
// asked for, the INPUT text as the user's one instruction, judged the same
// way.
func demoVerdicts(req scoring.Request) any {
	b := demo.Read(req)
	items := b.Items(req, "INSTRUCTIONS")
	verdict, reason := "yes", "The response follows the instruction."
	if strings.TrimSpace(b.Text("OUTPUT")) == "" {
		verdict, reason = "no", "The response is empty."
	}
	verdicts := make([]map[string]any, len(items))
	for i, it := range items {
		verdicts[i] = map[string]any{"number": i + 1, "instruction": it, "verdict": verdict, "reason": reason}
	}
	user := []map[string]any{}
	if strings.Contains(demo.Text(req), "In user_instructions, list") {
		if in := strings.TrimSpace(b.Text("INPUT")); in != "" {
			user = append(user, map[string]any{"instruction": in, "verdict": verdict, "reason": reason})
		}
	}
	return map[string]any{"verdicts": verdicts, "user_instructions": user}
}
