package conversation

import (
	"container/list"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// traceIDs remembers the conversation id each recent trace named, so that
// the spans of the trace that name none join the same conversation. It
// keeps at most max traces, each for the pending wait after it was last
// named. Guarded by the Keeper's mu.
type traceIDs struct {
	max   int
	by    map[pcommon.TraceID]*traceNote
	order list.List // of *traceNote, least recently named first
}

type traceNote struct {
	trace pcommon.TraceID
	id    string
	at    time.Time
	elem  *list.Element
}

func newTraceIDs(maxTraces int) traceIDs {
	return traceIDs{max: max(maxTraces, 1), by: map[pcommon.TraceID]*traceNote{}}
}

func (t *traceIDs) get(trace pcommon.TraceID) (string, bool) {
	n, ok := t.by[trace]
	if !ok {
		return "", false
	}
	return n.id, true
}

// note remembers that trace named id at now (the first id a trace names
// stays its id).
func (t *traceIDs) note(trace pcommon.TraceID, id string, now time.Time) {
	if n, ok := t.by[trace]; ok {
		n.at = now
		t.order.MoveToBack(n.elem)
		return
	}
	for len(t.by) >= t.max {
		t.forget(t.order.Front().Value.(*traceNote))
	}
	n := &traceNote{trace: trace, id: id, at: now}
	n.elem = t.order.PushBack(n)
	t.by[trace] = n
}

func (t *traceIDs) forget(n *traceNote) {
	t.order.Remove(n.elem)
	delete(t.by, n.trace)
}

// expire forgets the traces last named before cutoff.
func (t *traceIDs) expire(cutoff time.Time) {
	for e := t.order.Front(); e != nil; e = t.order.Front() {
		n := e.Value.(*traceNote)
		if !n.at.Before(cutoff) {
			return
		}
		t.forget(n)
	}
}

// parked is an exchange waiting for its trace to name its conversation.
type parked struct {
	Exchange
	service string
	stored  uint64
	bytes   int
}

// pendingExchanges holds the parked exchanges by trace, at most max in
// all, each trace's for the pending wait after its first. Guarded by the
// Keeper's mu.
type pendingExchanges struct {
	max   int
	count int
	by    map[pcommon.TraceID]*pendingTrace
	order list.List // of *pendingTrace, oldest first
}

type pendingTrace struct {
	trace     pcommon.TraceID
	exchanges []*parked
	since     time.Time
	elem      *list.Element
}

func newPendingExchanges(maxExchanges int) pendingExchanges {
	return pendingExchanges{max: max(maxExchanges, 1), by: map[pcommon.TraceID]*pendingTrace{}}
}

// add parks p under trace, or reports false when max are parked.
func (p *pendingExchanges) add(trace pcommon.TraceID, ex *parked, now time.Time) bool {
	if p.count >= p.max {
		return false
	}
	pt, ok := p.by[trace]
	if !ok {
		pt = &pendingTrace{trace: trace, since: now}
		pt.elem = p.order.PushBack(pt)
		p.by[trace] = pt
	}
	pt.exchanges = append(pt.exchanges, ex)
	p.count++
	return true
}

// take removes and returns the exchanges parked under trace.
func (p *pendingExchanges) take(trace pcommon.TraceID) []*parked {
	pt, ok := p.by[trace]
	if !ok {
		return nil
	}
	p.remove(pt)
	return pt.exchanges
}

func (p *pendingExchanges) remove(pt *pendingTrace) {
	p.order.Remove(pt.elem)
	delete(p.by, pt.trace)
	p.count -= len(pt.exchanges)
}

// expire removes and returns the exchanges of traces parked before cutoff.
func (p *pendingExchanges) expire(cutoff time.Time) []*parked {
	var out []*parked
	for e := p.order.Front(); e != nil; e = p.order.Front() {
		pt := e.Value.(*pendingTrace)
		if !pt.since.Before(cutoff) {
			break
		}
		p.remove(pt)
		out = append(out, pt.exchanges...)
	}
	return out
}
