package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// traceSampler decides from the trace id alone, so every replica that sees
// a trace makes the same choice and a trace is scored everywhere or nowhere.
type traceSampler struct {
	all bool
	// threshold: a trace is sampled when the FNV-1a 64 hash of its id is
	// below it, so zero samples nothing.
	threshold uint64
}

func newTraceSampler(percentage float64) traceSampler {
	switch {
	case percentage >= 100:
		return traceSampler{all: true}
	case !(percentage > 0):
		return traceSampler{}
	}
	f := percentage / 100 * math.Exp2(64)
	if f >= math.Exp2(64) {
		return traceSampler{all: true}
	}
	return traceSampler{threshold: uint64(f)}
}

// sampled reports whether the trace is in the sample.
func (s traceSampler) sampled(id pcommon.TraceID) bool {
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
