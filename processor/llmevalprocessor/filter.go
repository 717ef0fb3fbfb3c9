package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// scorerFilters are the compiled per-scorer include and exclude, by
// scorer name; scorers without a filter are absent.
type scorerFilters map[string]spanFilter

func compileScorerFilters(scorers []ScorerConfig) (scorerFilters, error) {
	var out scorerFilters
	for _, sc := range scorers {
		f, err := sc.SpanFilterConfig.compile()
		if err != nil {
			return nil, err
		}
		if f.empty() {
			continue
		}
		if out == nil {
			out = scorerFilters{}
		}
		out[sc.Name] = f
	}
	return out, nil
}

// excluded lists the scorers whose filter an item does not pass, or nil;
// res and attrs are as for spanFilter.matches.
func (fs scorerFilters) excluded(res, attrs pcommon.Map) map[string]bool {
	var out map[string]bool
	for name, f := range fs {
		if f.matches(res, attrs) {
			continue
		}
		if out == nil {
			out = map[string]bool{}
		}
		out[name] = true
	}
	return out
}

// appliesTo says whether the scorer scores an item of target whose
// per-scorer include/exclude left out the excluded scorers. A scorer that
// does not apply writes neither a result nor a marker.
func (sc ScorerConfig) appliesTo(target string, excluded map[string]bool) bool {
	return sc.hasTarget(target) && !excluded[sc.Name]
}
