package selection

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

func TestSamplingIsDeterministicPerTrace(t *testing.T) {
	a, b := NewSampler(30), NewSampler(30) // two replicas
	for range 1000 {
		id := randomTraceID()
		first := a.Sampled(id)
		for range 3 {
			assert.Equal(t, first, a.Sampled(id))
			assert.Equal(t, first, b.Sampled(id))
		}
	}
}

func TestSamplingRate(t *testing.T) {
	const n = 20000
	for _, pct := range []float64{0, 1, 10, 33.3, 50, 90, 100} {
		s := NewSampler(pct)
		in := 0
		for range n {
			if s.Sampled(randomTraceID()) {
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
	low, high := NewSampler(10), NewSampler(50)
	for range 10000 {
		id := randomTraceID()
		if low.Sampled(id) {
			assert.True(t, high.Sampled(id))
		}
	}
}

func randomTraceID() pcommon.TraceID {
	var id pcommon.TraceID
	binary.BigEndian.PutUint64(id[:8], rand.Uint64())
	binary.BigEndian.PutUint64(id[8:], rand.Uint64()|1)
	return id
}
