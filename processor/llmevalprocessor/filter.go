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
