package evalstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/logjoin"
)

var tableT0 = time.Unix(1_000_000, 0)

func tableKey(n byte) logjoin.Key {
	return logjoin.Key{TraceID: pcommon.TraceID{n, 1}, SpanID: pcommon.SpanID{n, 2}}
}

// items stand for the store's items in the table tests.
var spanItem, firstItem, secondItem, activeItem = &item{}, &item{}, &item{}, &item{}

func TestCallTableSpanFirstThenEvents(t *testing.T) {
	tb := newCallTable(10*time.Second, time.Minute, 10)
	k := tableKey(1)
	st, _, _ := tb.state(k, tableT0)
	require.Equal(t, callUnknown, st)

	tb.hold(k, SideSpan, spanItem, tableT0)
	st, sides, it := tb.state(k, tableT0)
	assert.Equal(t, callWaiting, st)
	assert.Equal(t, SideSpan, sides)
	assert.Same(t, spanItem, it)

	got, ok := tb.join(k, SideEvents)
	require.True(t, ok)
	assert.Same(t, spanItem, got)
	st, sides, _ = tb.state(k, tableT0)
	assert.Equal(t, callActive, st, "joined: no longer waiting")
	assert.Equal(t, SideSpan|SideEvents, sides)
	assert.Empty(t, tb.expire(tableT0.Add(time.Hour)), "an active call never expires")
	_, ok = tb.join(k, SideEvents)
	assert.False(t, ok, "a side joins once")

	tb.leave(k, tableT0.Add(time.Second))
	st, sides, _ = tb.state(k, tableT0.Add(2*time.Second))
	assert.Equal(t, callLeft, st)
	assert.Equal(t, SideSpan|SideEvents, sides)
	assert.Zero(t, tb.held())
	st, _, _ = tb.state(k, tableT0.Add(2*time.Minute))
	assert.Equal(t, callUnknown, st, "forgotten after remember")
}

func TestCallTableWaitExpiresInOrder(t *testing.T) {
	tb := newCallTable(10*time.Second, time.Minute, 10)
	tb.hold(tableKey(1), SideEvents, firstItem, tableT0)
	tb.hold(tableKey(2), SideSpan, secondItem, tableT0.Add(time.Second))
	tb.track(tableKey(3), SideSpan, activeItem)
	at, ok := tb.nextExpiry()
	require.True(t, ok)
	assert.Equal(t, tableT0.Add(10*time.Second), at)

	assert.Empty(t, tb.expire(tableT0.Add(9*time.Second)))
	assert.Equal(t, []*item{firstItem}, tb.expire(tableT0.Add(10*time.Second)))
	st, _, _ := tb.state(tableKey(1), tableT0)
	assert.Equal(t, callActive, st, "expired calls stay held while their owner evaluates them alone")
	assert.Equal(t, []*item{secondItem}, tb.expire(tableT0.Add(time.Hour)))
	_, ok = tb.nextExpiry()
	assert.False(t, ok)
	assert.Equal(t, 3, tb.held())

	_, ok = tb.join(tableKey(3), SideEvents)
	assert.True(t, ok, "a late half joins an active call")
}

func TestCallTableLeftIsBounded(t *testing.T) {
	tb := newCallTable(time.Second, time.Hour, 4)
	for n := range byte(3) {
		tb.track(tableKey(n), SideSpan|SideEvents, activeItem)
		tb.leave(tableKey(n), tableT0)
	}
	// Two halves per call: room for the last two calls only.
	st, _, _ := tb.state(tableKey(0), tableT0)
	assert.Equal(t, callUnknown, st, "the oldest halves are forgotten first")
	for _, n := range []byte{1, 2} {
		st, sides, _ := tb.state(tableKey(n), tableT0)
		assert.Equal(t, callLeft, st)
		assert.Equal(t, SideSpan|SideEvents, sides)
	}
	tb.leave(tableKey(9), tableT0) // not held: nothing to remember
	st, _, _ = tb.state(tableKey(9), tableT0)
	assert.Equal(t, callUnknown, st)
}

func TestCallTableLeaveWhileWaiting(t *testing.T) {
	tb := newCallTable(time.Second, time.Minute, 4)
	tb.hold(tableKey(1), SideSpan, spanItem, tableT0)
	tb.leave(tableKey(1), tableT0)
	assert.Empty(t, tb.expire(tableT0.Add(time.Hour)), "a call that left does not expire later")
	st, sides, _ := tb.state(tableKey(1), tableT0)
	assert.Equal(t, callLeft, st)
	assert.Equal(t, SideSpan, sides)
}
