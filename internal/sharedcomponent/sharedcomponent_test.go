package sharedcomponent

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type value struct{ n int }

func TestOneValuePerKeyUntilTheLastRelease(t *testing.T) {
	var m Map[string, *value]
	created := 0
	create := func() (*value, error) {
		created++
		return &value{n: created}, nil
	}
	a, err := m.Acquire("a", create)
	require.NoError(t, err)
	again, err := m.Acquire("a", create)
	require.NoError(t, err)
	b, err := m.Acquire("b", create)
	require.NoError(t, err)
	assert.Same(t, a, again, "one value per key")
	assert.NotSame(t, a, b)
	assert.Equal(t, 2, created)
	assert.Equal(t, 2, m.Uses("a"))

	assert.False(t, m.Release("a", a), "one use is left")
	assert.Equal(t, 1, m.Uses("a"))
	assert.True(t, m.Release("a", a), "the last use")
	assert.Zero(t, m.Uses("a"))
	assert.False(t, m.Release("a", a), "a value no longer held is not released twice")

	next, err := m.Acquire("a", create)
	require.NoError(t, err)
	assert.NotSame(t, a, next, "after the last release, a new value")
	assert.False(t, m.Release("a", a), "a stale value does not release the new one")
	assert.Equal(t, 1, m.Uses("a"))
}

func TestFailedCreateKeepsNothing(t *testing.T) {
	var m Map[string, *value]
	boom := errors.New("boom")
	_, err := m.Acquire("a", func() (*value, error) { return nil, boom })
	require.ErrorIs(t, err, boom)
	assert.Zero(t, m.Uses("a"))
	v, err := m.Acquire("a", func() (*value, error) { return &value{}, nil })
	require.NoError(t, err)
	assert.NotNil(t, v)
}

func TestConcurrentUse(t *testing.T) {
	var m Map[int, *value]
	var wg sync.WaitGroup
	got := make([]*value, 16)
	for i := range got {
		wg.Go(func() {
			v, err := m.Acquire(1, func() (*value, error) { return &value{}, nil })
			assert.NoError(t, err)
			got[i] = v
		})
	}
	wg.Wait()
	for _, v := range got {
		assert.Same(t, got[0], v)
	}
	assert.Equal(t, len(got), m.Uses(1))
	last := 0
	for _, v := range got {
		if m.Release(1, v) {
			last++
		}
	}
	assert.Equal(t, 1, last, "exactly one release is the last")
}
