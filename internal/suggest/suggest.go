// Package suggest finds the name a user most likely meant, for error
// messages that suggest the fix ("did you mean hallucination?").
package suggest // import "github.com/llm-eval/llm_eval/internal/suggest"

import (
	"slices"
	"strings"
)

// Closest returns the candidate nearest to name by edit distance, if it is
// near enough to be a typo (at most 2 edits, or a quarter of the name),
// else a candidate that name is a prefix of or extends (percent for
// percentage), else "". Ties go to the candidate first in sorted order.
func Closest(name string, candidates []string) string {
	sorted := slices.Clone(candidates)
	slices.Sort(sorted)
	best, bestDist := "", max(2, len(name)/4)+1
	for _, c := range sorted {
		if d := Distance(name, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	if best != "" || len(name) < 3 {
		return best
	}
	for _, c := range sorted {
		if strings.HasPrefix(c, name) || strings.HasPrefix(name, c) {
			return c
		}
	}
	return ""
}

// scorerAliases maps the names other evaluation libraries give a metric
// (squashed, see squashScorer) to the llm_eval scorer of the same purpose
// (docs/scorers.md). Edit distance cannot find these: turn_relevancy is
// nine edits from conversation_relevancy.
var scorerAliases = map[string]string{
	"turnrelevancy":    "conversation_relevancy", // deepeval's TurnRelevancyMetric
	"toolcallaccuracy": "tool_use",               // Mastra's createToolCallAccuracyScorerLLM
}

// Scorer returns the scorer among known that name most likely meant:
// another library's name for it (turn_relevancy for
// conversation_relevancy), the same name spelt as another library does
// (AnswerRelevancyMetric, answer-relevancy), else Closest.
func Scorer(name string, known []string) string {
	sq := squashScorer(name)
	if alias, ok := scorerAliases[sq]; ok && slices.Contains(known, alias) {
		return alias
	}
	for _, k := range known {
		if squashScorer(k) == sq {
			return k
		}
	}
	return Closest(Normalize(name), known)
}

// squashScorer folds the spellings of a metric's name in other libraries:
// case, separators, and a Metric or Scorer suffix.
func squashScorer(name string) string {
	s := strings.ReplaceAll(Normalize(name), "_", "")
	return strings.TrimSuffix(strings.TrimSuffix(s, "metric"), "scorer")
}

// Normalize folds what a typo of a name rarely means: case, and dashes or
// spaces for underscores.
func Normalize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == ' ' {
			return '_'
		}
		return r
	}, strings.ToLower(strings.TrimSpace(s)))
}

// Distance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of two neighbours cost
// one each.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
