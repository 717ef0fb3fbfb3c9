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
// what the verdicts the reason step was given say. Yes/no verdicts: how many
// are yes, with their reasons. Graded verdicts (context_relevance's
// relevance levels): how many have each level.
func demoReason(req scoring.Request) any {
	score := "the given score"
	if m := scoreLine.FindStringSubmatch(demo.Text(req)); m != nil {
		score = m[1]
	}
	verdicts := demo.Read(req).Lines("VERDICTS")
	var yes, levels []string
	graded := false
	for _, line := range verdicts {
		var v map[string]any
		if json.Unmarshal([]byte(demo.Numbered.ReplaceAllString(line, "")), &v) != nil {
			continue
		}
		value := verdictValue(v)
		if value == "" {
			continue // not a verdict: context_relevance's missing_context line
		}
		levels = append(levels, value)
		switch value {
		case "yes":
			if r, ok := v["reason"].(string); ok && r != "" {
				yes = append(yes, r)
			}
		case "no", "unsure", "idk":
		default:
			graded = true
		}
	}
	var reason string
	switch {
	case graded:
		reason = fmt.Sprintf("The score is %s: of the %d verdicts, %s (offline demo judge).", score, len(levels), countLevels(levels))
	case len(yes) > 0:
		reason = fmt.Sprintf("The score is %s: %d of %d verdicts are yes: %s (offline demo judge).", score, len(yes), len(verdicts), strings.Join(yes, " "))
	default:
		reason = fmt.Sprintf("The score is %s: none of the %d verdicts is yes (offline demo judge).", score, len(verdicts))
	}
	return map[string]string{"reason": reason}
}

// verdictValue is a verdict line's value: its verdict, result or
// relevance level, "" when it has none.
func verdictValue(v map[string]any) string {
	for _, key := range []string{"verdict", "result", "relevance", "relevanceLevel"} {
		if s, ok := v[key].(string); ok && s != "" {
			return strings.ToLower(s)
		}
	}
	return ""
}

// countLevels says how many verdicts have each value, in the order the
// values first appear: "1 is high and 2 are none".
func countLevels(levels []string) string {
	var order []string
	count := map[string]int{}
	for _, l := range levels {
		if count[l] == 0 {
			order = append(order, l)
		}
		count[l]++
	}
	parts := make([]string, len(order))
	for i, l := range order {
		verb := "are"
		if count[l] == 1 {
			verb = "is"
		}
		parts[i] = fmt.Sprintf("%d %s %s", count[l], verb, l)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
