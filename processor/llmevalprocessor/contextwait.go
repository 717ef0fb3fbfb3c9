package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"container/list"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// contextWaiter is a subject that may wait for its trace's context (or,
// for an agent span, the steps of its run) before its evaluations are
// dispatched (trace_context.context_wait).
type contextWaiter interface {
	// waitsForContext reports the trace whose context the item needs and
	// whether it still waits for it. The store calls it with its lock held.
	waitsForContext() (pcommon.TraceID, bool)
}

// waitingItem is an admitted item parked until its trace gains context or
// context_wait passes.
type waitingItem struct {
	item  *admittedItem
	trace pcommon.TraceID
	until time.Time
	elem  *list.Element // in contextWaits.order
}

// contextWaits holds the parked items of an evalStore, guarded by its mu.
// context_wait is the same for every item, so parking order is expiry
// order: one list and one timer, as for max_wait.
type contextWaits struct {
	order   list.List // of *waitingItem, oldest first
	byTrace map[pcommon.TraceID][]*waitingItem
	timer   *time.Timer
}

func (w *contextWaits) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
	w.order.Init()
	w.byTrace = nil
}

// remove unparks one item. Called with the store's mu held.
func (w *contextWaits) remove(wi *waitingItem) {
	w.order.Remove(wi.elem)
	items := w.byTrace[wi.trace]
	for i, other := range items {
		if other == wi {
			items = append(items[:i], items[i+1:]...)
			break
		}
	}
	if len(items) == 0 {
		delete(w.byTrace, wi.trace)
	} else {
		w.byTrace[wi.trace] = items
	}
	wi.item.wait = nil
}

// parkForContext parks a just-admitted item whose subject has no context
// yet but needs it, and reports whether it did. The evaluations of scorers
// that do not read context are dispatched at once. Called with mu held.
func (s *evalStore) parkForContext(item *admittedItem, now time.Time) bool {
	if s.contextWait <= 0 {
		return false
	}
	cw, ok := item.subject.(contextWaiter)
	if !ok {
		return false
	}
	trace, wait := cw.waitsForContext()
	if !wait {
		return false
	}
	wi := &waitingItem{item: item, trace: trace, until: now.Add(s.contextWait)}
	wi.elem = s.waits.order.PushBack(wi)
	if s.waits.byTrace == nil {
		s.waits.byTrace = make(map[pcommon.TraceID][]*waitingItem)
	}
	s.waits.byTrace[trace] = append(s.waits.byTrace[trace], wi)
	item.wait = wi
	if s.waits.order.Len() == 1 {
		s.armContextWait(s.contextWait)
	}
	s.dispatchWaited(item, false)
	return true
}

// dispatchWaited dispatches the item's evaluations by scorers that wait
// (readers: those reading context or a trajectory, scorerWaits) or the
// others, which do not wait. Called with mu held.
func (s *evalStore) dispatchWaited(item *admittedItem, readers bool) {
	for i, sc := range s.scorers {
		if scorerWaits(sc.cfg) == readers {
			s.dispatchScorer(item, i)
		}
	}
}

// contextMayHaveArrived dispatches the items of the given traces that
// waited for context and now have some: their trace gained documents, or
// links that connect them to documents it already had.
func (s *evalStore) contextMayHaveArrived(traces []pcommon.TraceID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase != phaseRunning {
		return
	}
	for _, trace := range traces {
		waiting := s.waits.byTrace[trace]
		if len(waiting) == 0 {
			continue
		}
		for _, wi := range append([]*waitingItem(nil), waiting...) {
			if _, still := wi.item.subject.(contextWaiter).waitsForContext(); still {
				continue
			}
			s.waits.remove(wi)
			s.tel.contextWaitEnded(wi.item.ctx, true)
			s.dispatchWaited(wi.item, true)
		}
	}
}

// armContextWait makes the wait timer fire after d. Called with mu held.
func (s *evalStore) armContextWait(d time.Duration) {
	armTimer(&s.waits.timer, d, s.contextWaitExpired)
}

// contextWaitExpired dispatches every parked item whose context_wait has
// passed, without the context it waited for.
func (s *evalStore) contextWaitExpired() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase != phaseRunning {
		return
	}
	now := time.Now()
	for e := s.waits.order.Front(); e != nil; e = s.waits.order.Front() {
		wi := e.Value.(*waitingItem)
		if now.Before(wi.until) {
			s.armContextWait(wi.until.Sub(now))
			break
		}
		s.waits.remove(wi)
		s.tel.contextWaitEnded(wi.item.ctx, false)
		s.dispatchWaited(wi.item, true)
	}
}

// dispatchWaiting dispatches an item leaving at max_wait while it still
// waits for context: its results follow as late results. Called with mu
// held.
func (s *evalStore) dispatchWaiting(item *admittedItem) {
	if item.wait == nil {
		return
	}
	s.waits.remove(item.wait)
	s.tel.contextWaitEnded(item.ctx, false)
	s.dispatchWaited(item, true)
}
