package selection // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/selection"

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Sampler decides from the trace id alone, so every replica that sees
// a trace makes the same choice and a trace is scored everywhere or nowhere.
type Sampler struct {
	all bool
	// threshold: a trace is sampled when the FNV-1a 64 hash of its id is
	// below it, so zero samples nothing.
	threshold uint64
}

// NewSampler samples percentage of the traces.
func NewSampler(percentage float64) Sampler {
	switch {
	case percentage >= 100:
		return Sampler{all: true}
	case !(percentage > 0):
		return Sampler{}
	}
	f := percentage / 100 * math.Exp2(64)
	if f >= math.Exp2(64) {
		return Sampler{all: true}
	}
	return Sampler{threshold: uint64(f)}
}

// Sampled reports whether the trace is in the sample.
func (s Sampler) Sampled(id pcommon.TraceID) bool {
	return s.all || fnv1a64(id) < s.threshold
}

// fnv1a64 hashes the 16 bytes of a trace id without allocating.
func fnv1a64(id pcommon.TraceID) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	for _, b := range id {
		h ^= uint64(b)
		h *= prime
	}
	return h
}
