package evalstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// moveTo keeps the store's books in step with an item's state: the
// waiting area, the context waits, the held list and queue_size's count.
func TestMoveToKeepsTheBooks(t *testing.T) {
	s := New(Settings{MaxWait: time.Hour, Capacity: 10, Workers: 1, ContextWait: time.Hour, Observer: &observer{}})
	s.Start(nil, nil)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()

	it := s.hold(context.Background(), &subject{})
	assert.Equal(t, 1, s.unfinished)
	assert.Equal(t, 1, s.held.Len())

	it.waitBytes = 100
	s.moveTo(it, StateWaitingForEvents, now)
	assert.Equal(t, 0, s.unfinished, "waiting for its events, it takes no queue_size slot")
	assert.Equal(t, 1, s.eventWaits.count)
	assert.Equal(t, 100, s.eventWaits.bytes)

	s.moveTo(it, StateAdmitted, now)
	assert.Equal(t, 1, s.unfinished)
	assert.Zero(t, s.eventWaits.count)
	assert.Zero(t, s.eventWaits.bytes)

	it.wait = &waitingItem{item: it, trace: pcommon.TraceID{1}, until: now.Add(time.Hour)}
	s.moveTo(it, StateWaitingForContext, now)
	assert.Equal(t, 1, s.waits.order.Len())
	s.moveTo(it, StateEvaluating, now)
	assert.Zero(t, s.waits.order.Len())
	assert.Nil(t, it.wait)

	it.pending = 1
	s.moveTo(it, StateLeft, now)
	assert.Zero(t, s.held.Len())
	assert.Equal(t, 1, s.unfinished, "its evaluation still runs: it keeps its slot until it finishes")

	waiting := s.hold(context.Background(), &subject{})
	waiting.pending = 1
	s.moveTo(waiting, StatePairing, now)
	s.moveTo(waiting, StateLeft, now)
	assert.Equal(t, 1, s.unfinished, "never dispatched: its slot is given back")
	assert.Zero(t, waiting.pending)

	span := s.hold(context.Background(), &subject{})
	span.waitBytes = 50
	s.moveTo(span, StateWaitingForEvents, now)
	s.moveTo(span, StateLeft, now)
	assert.Equal(t, 1, s.unfinished)
	assert.Zero(t, s.eventWaits.count)
	assert.Zero(t, s.eventWaits.bytes)
	assert.Zero(t, s.held.Len())
}
