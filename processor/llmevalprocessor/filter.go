package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/selection"
)

// Selection (sampling, include/exclude) is internal/selection; this file
// turns the configuration into it.
type (
	spanFilter    = selection.Filter
	scorerFilters = selection.PerScorer
	traceSampler  = selection.Sampler
)

// newTraceSampler samples sampling.percentage of the traces.
func newTraceSampler(percentage float64) traceSampler { return selection.NewSampler(percentage) }

// compile checks and compiles the filter. Its errors start at include or
// exclude; the collector adds the path of the section holding them.
func (c SpanFilterConfig) compile() (spanFilter, error) {
	return selection.Compile(matches(c.Include), matches(c.Exclude))
}

func matches(entries []AttributeMatchConfig) []selection.Match {
	out := make([]selection.Match, len(entries))
	for i, e := range entries {
		out[i] = selection.Match{Resource: values(e.Resource), Span: values(e.Span)}
	}
	return out
}

func values(m map[string]ValueMatchConfig) map[string]selection.Value {
	if m == nil {
		return nil
	}
	out := make(map[string]selection.Value, len(m))
	for k, v := range m {
		out[k] = selection.Value{Equals: v.Equals, Regexp: v.Regexp}
	}
	return out
}

func compileScorerFilters(scorers []ScorerConfig) (scorerFilters, error) {
	var out scorerFilters
	for _, sc := range scorers {
		f, err := sc.SpanFilterConfig.compile()
		if err != nil {
			return nil, err
		}
		if f.Empty() {
			continue
		}
		if out == nil {
			out = scorerFilters{}
		}
		out[sc.Name] = f
	}
	return out, nil
}

// appliesTo says whether the scorer scores an item of target whose
// per-scorer include/exclude left out the excluded scorers. A scorer that
// does not apply writes neither a result nor a marker.
func (sc ScorerConfig) appliesTo(target string, excluded map[string]bool) bool {
	return sc.hasTarget(target) && !excluded[sc.Name]
}
