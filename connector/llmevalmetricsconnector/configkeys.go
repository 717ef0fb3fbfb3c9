package llmevalmetricsconnector // import "github.com/llm-eval/llm_eval/connector/llmevalmetricsconnector"

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/confmap"

	"github.com/llm-eval/llm_eval/internal/suggest"
)

// unknownKeys reports each key of conf that is no setting, once, by its
// path ("::"-joined, as the Collector writes it), with the closest setting
// at the same level when one is near enough to be a typo. The settings
// are read from the default Config, so they follow its mapstructure tags.
func unknownKeys(conf *confmap.Conf) error {
	defaults := confmap.New()
	if err := defaults.Marshal(createDefaultConfig()); err != nil {
		return fmt.Errorf("listing the llm_eval_metrics settings: %w", err)
	}
	children := map[string][]string{} // path of a section ("" at the top) -> its keys
	known := map[string]bool{}
	for _, k := range defaults.AllKeys() {
		parts := strings.Split(k, confmap.KeyDelimiter)
		for i := range parts {
			path := strings.Join(parts[:i+1], confmap.KeyDelimiter)
			if !known[path] {
				known[path] = true
				parent := strings.Join(parts[:i], confmap.KeyDelimiter)
				children[parent] = append(children[parent], parts[i])
			}
		}
	}
	var errs []error
	reported := map[string]bool{}
	for _, k := range slices.Sorted(slices.Values(conf.AllKeys())) {
		parts := strings.Split(k, confmap.KeyDelimiter)
		for i := range parts {
			path := strings.Join(parts[:i+1], confmap.KeyDelimiter)
			if known[path] {
				continue
			}
			if !reported[path] {
				reported[path] = true
				siblings := children[strings.Join(parts[:i], confmap.KeyDelimiter)]
				if meant := closestKey(parts[i], siblings); meant != "" {
					errs = append(errs, fmt.Errorf("%s: unknown key (did you mean %s?)", path, meant))
				} else {
					errs = append(errs, fmt.Errorf("%s: unknown key (known keys here: %s)", path, strings.Join(slices.Sorted(slices.Values(siblings)), ", ")))
				}
			}
			break
		}
	}
	return errors.Join(errs...)
}

// keyAliases are the span_metrics connector's names for settings that
// have another name here; edit distance cannot find them.
var keyAliases = map[string]string{
	"flush_interval":                "metrics_flush_interval",
	"expiration":                    "metrics_expiration",
	"aggregation_cardinality_limit": "max_series",
	"cardinality_limit":             "max_series",
}

// closestKey returns the key of known that key most likely meant.
func closestKey(key string, known []string) string {
	key = suggest.Normalize(key)
	if alias, ok := keyAliases[key]; ok && slices.Contains(known, alias) {
		return alias
	}
	return suggest.Closest(key, known)
}
