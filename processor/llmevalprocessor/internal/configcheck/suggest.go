package configcheck // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/configcheck"

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

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
	msg := fmt.Sprintf("%q is not one of %s", value, strings.Join(allowed, ", "))
	if best := closestKey(suggest.Normalize(value), known); best != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", best)
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
	return suggest.Closest(suggest.Normalize(name), names)
}

// CheckMinDuration rejects a duration below lowest. A positive value under
// a millisecond is almost always a number written without a unit, which
// decoding reads as nanoseconds; the error then suggests the reading the
// writer most likely meant: seconds, unless that is longer than likelyMax
// (30000 as a judge timeout is 30s, not 8h20m).
func CheckMinDuration(d, lowest, likelyMax time.Duration) error {
	switch {
	case d >= lowest:
		return nil
	case d > 0 && d < time.Millisecond:
		return fmt.Errorf("must be at least %s, got %s; a number without a unit is read as nanoseconds (write e.g. %s)", lowest, d, UnitHint(int64(d), lowest, likelyMax))
	default:
		return fmt.Errorf("must be at least %s, got %s", lowest, d)
	}
}

// UnitHint spells the number n with the unit it most likely lacked.
func UnitHint(n int64, lowest, likelyMax time.Duration) string {
	num := strconv.FormatInt(n, 10)
	asSeconds := time.Duration(n) * time.Second
	asMillis := time.Duration(n) * time.Millisecond
	if asSeconds <= likelyMax || asMillis < lowest {
		return strconv.Quote(num + "s")
	}
	if n%1000 == 0 {
		return fmt.Sprintf("%q or %q", strconv.FormatInt(n/1000, 10)+"s", num+"ms")
	}
	return strconv.Quote(num + "ms")
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
