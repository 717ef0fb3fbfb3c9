package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/selection"
)

// Selection (sampling, include/exclude) is internal/selection; this file
// turns the configuration into it.
type (
	spanFilter   = selection.Filter
	traceSampler = selection.Sampler
)

// scorerSelection is what leaves a scorer out of an item: its include and
// exclude (scorers[].include, exclude) and its own sampling
// (scorers[].sampling.percentage).
type scorerSelection struct {
	filters selection.PerScorer
	// samplers are those of the scorers that sample fewer traces than
	// every trace, by scorer name.
	samplers map[string]selection.Sampler
}

// empty reports a selection that never leaves a scorer out.
func (s scorerSelection) empty() bool { return len(s.filters) == 0 && len(s.samplers) == 0 }

// Excluded lists the scorers that do not score an item of trace with
// these resource and item attributes, or nil. The scorer's sample is
// decided by the trace id with the processor's own hash, so a trace is
// in a scorer's sample on every replica, and a scorer with a smaller
// percentage samples a subset of the traces one with a larger samples.
func (s scorerSelection) Excluded(res, attrs pcommon.Map, trace pcommon.TraceID) map[string]bool {
	out := s.filters.Excluded(res, attrs)
	for name, sm := range s.samplers {
		if sm.Sampled(trace) {
			continue
		}
		if out == nil {
			out = map[string]bool{}
		}
		out[name] = true
	}
	return out
}

// newTraceSampler samples sampling.percentage of the traces.
func newTraceSampler(percentage float64) traceSampler { return selection.NewSampler(percentage) }

func compileScorerSelection(scorers []ScorerConfig) (scorerSelection, error) {
	var out scorerSelection
	for _, sc := range scorers {
		if p := sc.Sampling; p != nil && p.Percentage < 100 {
			if out.samplers == nil {
				out.samplers = map[string]selection.Sampler{}
			}
			out.samplers[sc.Name] = selection.NewSampler(p.Percentage)
		}
		f, err := sc.SpanFilterConfig.compile()
		if err != nil {
			return scorerSelection{}, err
		}
		if f.Empty() {
			continue
		}
		if out.filters == nil {
			out.filters = selection.PerScorer{}
		}
		out.filters[sc.Name] = f
	}
	return out, nil
}

// appliesTo says whether the scorer scores an item of target whose
// per-scorer include/exclude left out the excluded scorers. A scorer that
// does not apply writes neither a result nor a marker.
func (sc ScorerConfig) appliesTo(target string, excluded map[string]bool) bool {
	return sc.hasTarget(target) && !excluded[sc.Name]
}
