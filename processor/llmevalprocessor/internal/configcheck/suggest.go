package configcheck // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/configcheck"

import (
	"fmt"
	"slices"
	"strings"

	"github.com/llm-eval/llm_eval/internal/suggest"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/scorers"
)

// keyAliases maps keys that other OpenAI clients and collector components
// use to the key that means the same here. Edit distance cannot find these
// (url is five edits from endpoint), so they are named outright.
var keyAliases = map[string]string{
	"url":           "endpoint",
	"base_url":      "endpoint",
	"baseurl":       "endpoint",
	"api_base":      "endpoint",
	"api_url":       "endpoint",
	"host":          "endpoint",
	"key":           "api_key",
	"apikey":        "api_key",
	"token":         "api_key",
	"api_token":     "api_key",
	"model_name":    "model",
	"rate":          "percentage",
	"sample_rate":   "percentage",
	"sampling_rate": "percentage",
	"ratio":         "percentage",
}

// SuggestKey returns the known key that key most likely meant: a named
// alias first, then the nearest by edit distance.
func SuggestKey[V any](key string, known map[string]V) string {
	if alias, ok := keyAliases[strings.ToLower(key)]; ok {
		if _, exists := known[alias]; exists {
			return alias
		}
	}
	return closestKey(suggest.Normalize(key), known)
}

// NotOneOf reports a value outside allowed, with the allowed value it most
// likely meant.
func NotOneOf(value string, allowed ...string) error {
	known := make(map[string]struct{}, len(allowed))
	for _, a := range allowed {
		known[a] = struct{}{}
	}
	return notOneOf(value, allowed, closestKey(suggest.Normalize(value), known))
}

// NotAScorer reports a scorer type outside allowed, with the scorer it
// most likely meant (suggest.Scorer).
func NotAScorer(value string, allowed ...string) error {
	return notOneOf(value, allowed, suggest.Scorer(value, allowed))
}

func notOneOf(value string, allowed []string, meant string) error {
	msg := fmt.Sprintf("%q is not one of %s", value, strings.Join(allowed, ", "))
	if meant != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", meant)
	}
	return fmt.Errorf("%s", msg)
}

// MisspeltScorer returns the built-in scorer that name most likely meant,
// or "" when name is far from all of them (a custom criteria scorer).
func MisspeltScorer(name string) string {
	names := append(scorers.Names(), scoring.Checks)
	if slices.Contains(names, name) {
		return ""
	}
	return suggest.Scorer(name, names)
}

// closestKey returns the known key nearest to key, if it is near enough
// to be a typo (see suggest.Closest).
func closestKey[V any](key string, known map[string]V) string {
	return suggest.Closest(key, sortedKeys(known))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
