package evalstore // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"

import (
	"container/list"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// waitingItem is an item parked until its trace gains context or
// context_wait passes.
type waitingItem struct {
	item  *item
	trace pcommon.TraceID
	until time.Time
	elem  *list.Element // in contextWaits.order
}

// contextWaits holds the parked items of a Store, guarded by its mu.
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

// add parks one item. Called with the store's mu held.
func (w *contextWaits) add(wi *waitingItem) {
	wi.elem = w.order.PushBack(wi)
	if w.byTrace == nil {
		w.byTrace = make(map[pcommon.TraceID][]*waitingItem)
	}
	w.byTrace[wi.trace] = append(w.byTrace[wi.trace], wi)
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
// that do not wait are dispatched at once. Called with mu held.
func (s *Store) parkForContext(it *item, now time.Time) bool {
	if s.contextWait <= 0 {
		return false
	}
	cw, ok := it.subject.(ContextWaiter)
	if !ok {
		return false
	}
	trace, wait := cw.WaitsForContext()
	if !wait {
		return false
	}
	it.wait = &waitingItem{item: it, trace: trace, until: now.Add(s.contextWait)}
	s.moveTo(it, StateWaitingForContext, now)
	if s.waits.order.Len() == 1 {
		s.armContextWait(s.contextWait)
	}
	s.dispatchWaited(it, false)
	return true
}

// contextWaitEnded dispatches the evaluations of an item that waited for
// context, which it no longer does; arrived says whether the context
// came. Called with mu held.
func (s *Store) contextWaitEnded(it *item, arrived bool) {
	s.obs.ContextWaitEnded(it.ctx, arrived)
	s.dispatchWaited(it, true)
}

// ContextMayHaveArrived dispatches the items of the given traces that
// waited for context and now have some: their trace gained documents, or
// links that connect them to documents it already had.
func (s *Store) ContextMayHaveArrived(traces []pcommon.TraceID) {
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
			if _, still := wi.item.subject.(ContextWaiter).WaitsForContext(); still {
				continue
			}
			s.moveTo(wi.item, StateEvaluating, time.Now())
			s.contextWaitEnded(wi.item, true)
		}
	}
}

// armContextWait makes the wait timer fire after d. Called with mu held.
func (s *Store) armContextWait(d time.Duration) {
	armTimer(&s.waits.timer, d, s.contextWaitExpired)
}

// contextWaitExpired dispatches every parked item whose context_wait has
// passed, without the context it waited for.
func (s *Store) contextWaitExpired() {
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
		s.moveTo(wi.item, StateEvaluating, now)
		s.contextWaitEnded(wi.item, false)
	}
}
