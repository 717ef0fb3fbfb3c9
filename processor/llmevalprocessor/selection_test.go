package llmevalprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSamplingIsDeterministicPerTrace(t *testing.T) {
	a, b := newTraceSampler(30), newTraceSampler(30) // two replicas
	for range 1000 {
		id := randomTraceID()
		first := a.sampled(id)
		for range 3 {
			assert.Equal(t, first, a.sampled(id))
			assert.Equal(t, first, b.sampled(id))
		}
	}
}

func TestSamplingRate(t *testing.T) {
	const n = 20000
	for _, pct := range []float64{0, 1, 10, 33.3, 50, 90, 100} {
		s := newTraceSampler(pct)
		in := 0
		for range n {
			if s.sampled(randomTraceID()) {
				in++
			}
		}
		got := float64(in) / n * 100
		assert.InDelta(t, pct, got, 1.5, "percentage %v: observed %.2f%%", pct, got)
		switch pct {
		case 0:
			assert.Zero(t, in)
		case 100:
			assert.Equal(t, n, in)
		}
	}
}

func TestSamplingNestedAcrossPercentages(t *testing.T) {
	// A trace in the sample at 10% is also in it at 50%: raising the
	// percentage only adds traces.
	low, high := newTraceSampler(10), newTraceSampler(50)
	for range 10000 {
		id := randomTraceID()
		if low.sampled(id) {
			assert.True(t, high.sampled(id))
		}
	}
}
