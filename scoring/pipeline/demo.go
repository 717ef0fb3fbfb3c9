package pipeline

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/demo"
)

var scoreLine = regexp.MustCompile(`(?m)^Score:\s*([0-9.]+)`)

// demoReason is the offline demo judge's reason: it names the score and
// lists the reasons of the "yes" verdicts the reason step was given, so
// the demo's reason says what it rests on.
func demoReason(req scoring.Request) any {
	score := "the given score"
	if m := scoreLine.FindStringSubmatch(demo.Text(req)); m != nil {
		score = m[1]
	}
	verdicts := demo.Read(req).Lines("VERDICTS")
	var yes []string
	for _, line := range verdicts {
		var v map[string]any
		if json.Unmarshal([]byte(demo.Numbered.ReplaceAllString(line, "")), &v) != nil {
			continue
		}
		if v["verdict"] == "yes" || v["result"] == "yes" {
			if r, ok := v["reason"].(string); ok && r != "" {
				yes = append(yes, r)
			}
		}
	}
	reason := fmt.Sprintf("The score is %s: none of the %d verdicts is yes (offline demo judge).", score, len(verdicts))
	if len(yes) > 0 {
		reason = fmt.Sprintf("The score is %s: %d of %d verdicts are yes: %s (offline demo judge).", score, len(yes), len(verdicts), strings.Join(yes, " "))
	}
	return map[string]string{"reason": reason}
}
