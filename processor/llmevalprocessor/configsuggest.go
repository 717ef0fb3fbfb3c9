package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/llm-eval/llm_eval/internal/suggest"
	"github.com/llm-eval/llm_eval/scoring"
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

// suggestKey returns the known key that key most likely meant: a named
// alias first, then the nearest by edit distance.
func suggestKey[V any](key string, known map[string]V) string {
	if alias, ok := keyAliases[strings.ToLower(key)]; ok {
		if _, exists := known[alias]; exists {
			return alias
		}
	}
	return closestKey(suggest.Normalize(key), known)
}

// notOneOf reports a value outside allowed, with the allowed value it most
// likely meant.
func notOneOf(value string, allowed ...string) error {
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

// misspeltScorer returns the built-in scorer that name most likely meant,
// or "" when name is far from all of them (a custom criteria scorer).
func misspeltScorer(name string) string {
	known := map[string]struct{}{scoring.Checks: {}}
	for _, n := range scoring.Names() {
		known[n] = struct{}{}
	}
	if _, exact := known[name]; exact {
		return ""
	}
	return closestKey(suggest.Normalize(name), known)
}

// checkMinDuration rejects a duration below lowest. A positive value under
// a millisecond is almost always a number written without a unit, which
// decoding reads as nanoseconds; the error then suggests the reading the
// writer most likely meant: seconds, unless that is longer than likelyMax
// (30000 as a judge timeout is 30s, not 8h20m).
func checkMinDuration(d, lowest, likelyMax time.Duration) error {
	switch {
	case d >= lowest:
		return nil
	case d > 0 && d < time.Millisecond:
		return fmt.Errorf("must be at least %s, got %s; a number without a unit is read as nanoseconds (write e.g. %s)", lowest, d, unitHint(int64(d), lowest, likelyMax))
	default:
		return fmt.Errorf("must be at least %s, got %s", lowest, d)
	}
}

// unitHint spells the number n with the unit it most likely lacked.
func unitHint(n int64, lowest, likelyMax time.Duration) string {
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
