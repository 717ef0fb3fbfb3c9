package pairing

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

var t0 = time.Unix(1_000_000, 0)

func key(n byte) Key {
	return Key{TraceID: pcommon.TraceID{n, 1}, SpanID: pcommon.SpanID{n, 2}}
}

func TestSpanFirstThenEvents(t *testing.T) {
	tb := New[string](10*time.Second, time.Minute, 10)
	k := key(1)
	st, _, _ := tb.State(k, t0)
	require.Equal(t, Unknown, st)

	tb.Wait(k, Span, "span", t0)
	st, sides, item := tb.State(k, t0)
	assert.Equal(t, Waiting, st)
	assert.Equal(t, Span, sides)
	assert.Equal(t, "span", item)

	got, ok := tb.Join(k, Events)
	require.True(t, ok)
	assert.Equal(t, "span", got)
	st, sides, _ = tb.State(k, t0)
	assert.Equal(t, Active, st, "joined: no longer waiting")
	assert.Equal(t, Span|Events, sides)
	assert.Empty(t, tb.Expire(t0.Add(time.Hour)), "an active call never expires")
	_, ok = tb.Join(k, Events)
	assert.False(t, ok, "a side joins once")

	tb.Leave(k, t0.Add(time.Second))
	st, sides, _ = tb.State(k, t0.Add(2*time.Second))
	assert.Equal(t, Left, st)
	assert.Equal(t, Span|Events, sides)
	assert.Zero(t, tb.Held())
	st, _, _ = tb.State(k, t0.Add(2*time.Minute))
	assert.Equal(t, Unknown, st, "forgotten after remember")
}

func TestWaitExpiresInOrder(t *testing.T) {
	tb := New[string](10*time.Second, time.Minute, 10)
	tb.Wait(key(1), Events, "first", t0)
	tb.Wait(key(2), Span, "second", t0.Add(time.Second))
	tb.Track(key(3), Span, "active")
	at, ok := tb.NextExpiry()
	require.True(t, ok)
	assert.Equal(t, t0.Add(10*time.Second), at)

	assert.Empty(t, tb.Expire(t0.Add(9*time.Second)))
	assert.Equal(t, []string{"first"}, tb.Expire(t0.Add(10*time.Second)))
	st, _, _ := tb.State(key(1), t0)
	assert.Equal(t, Active, st, "expired calls stay held while their owner evaluates them alone")
	assert.Equal(t, []string{"second"}, tb.Expire(t0.Add(time.Hour)))
	_, ok = tb.NextExpiry()
	assert.False(t, ok)
	assert.Equal(t, 3, tb.Held())

	_, ok = tb.Join(key(3), Events)
	assert.True(t, ok, "a late half joins an active call")
}

func TestLeftIsBounded(t *testing.T) {
	tb := New[string](time.Second, time.Hour, 4)
	for n := range byte(3) {
		tb.Track(key(n), Span|Events, "x")
		tb.Leave(key(n), t0)
	}
	// Two halves per call: room for the last two calls only.
	st, _, _ := tb.State(key(0), t0)
	assert.Equal(t, Unknown, st, "the oldest halves are forgotten first")
	for _, n := range []byte{1, 2} {
		st, sides, _ := tb.State(key(n), t0)
		assert.Equal(t, Left, st)
		assert.Equal(t, Span|Events, sides)
	}
	tb.Leave(key(9), t0) // not held: nothing to remember
	st, _, _ = tb.State(key(9), t0)
	assert.Equal(t, Unknown, st)
}

func TestLeaveWhileWaiting(t *testing.T) {
	tb := New[string](time.Second, time.Minute, 4)
	tb.Wait(key(1), Span, "span", t0)
	tb.Leave(key(1), t0)
	assert.Empty(t, tb.Expire(t0.Add(time.Hour)), "a call that left does not expire later")
	st, sides, _ := tb.State(key(1), t0)
	assert.Equal(t, Left, st)
	assert.Equal(t, Span, sides)
}

func TestKeyValid(t *testing.T) {
	assert.True(t, key(1).Valid())
	assert.False(t, Key{TraceID: pcommon.TraceID{1}}.Valid())
	assert.False(t, Key{SpanID: pcommon.SpanID{1}}.Valid())
}
