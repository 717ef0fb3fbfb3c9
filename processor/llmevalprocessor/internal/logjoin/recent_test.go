package logjoin

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRecentSet(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s := NewRecentSet[int](3)
	for i := range 3 {
		s.Add(i, t0.Add(time.Duration(i+1)*time.Second))
	}
	assert.Equal(t, 3, s.Len())
	s.Add(3, t0.Add(4*time.Second))
	assert.False(t, s.Has(0), "the oldest is forgotten when full")
	assert.True(t, s.Has(1))
	assert.Equal(t, 3, s.Len())

	s.Forget(t0.Add(2 * time.Second))
	assert.False(t, s.Has(1), "remembered until 2s: forgotten at 2s")
	assert.True(t, s.Has(2))

	s.Add(2, t0.Add(10*time.Second)) // again, later
	s.Forget(t0.Add(3 * time.Second))
	assert.True(t, s.Has(2), "the later time of a key added again wins")
	s.Forget(t0.Add(10 * time.Second))
	assert.Zero(t, s.Len())

	var zero RecentSet[int]
	zero.Add(1, t0)
	assert.False(t, zero.Has(1), "the zero value remembers nothing")
}
