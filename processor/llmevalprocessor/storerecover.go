package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"errors"
	"time"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/durable"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/heldrecord" // recoveredResult turns a stored result back into the one it was.
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/pairing"
	"github.com/llm-eval/llm_eval/scoring"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

func recoveredResult(rec heldrecord.Result) evalResult {
	r := evalResult{scorer: rec.Scorer, at: rec.At, ran: rec.Ran, result: scoring.Result{
		Scorer: rec.Scorer, Score: rec.Score, Label: scoring.Label(rec.Label), Reason: rec.Reason,
	}}
	if r.result.Label == scoring.LabelError {
		r.result.Err = storedError{typ: scoring.ErrorType(rec.ErrorType), text: rec.ErrorMessage}
	}
	return r
}

// storedError is a recorded evaluation failure: its type for error.type,
// its message as it was written before.
type storedError struct {
	typ  scoring.ErrorType
	text string
}

func (e storedError) Error() string { return e.text }

// As lets errors.As find the scoring error type.
func (e storedError) As(target any) bool {
	if t, ok := target.(**scoring.Error); ok {
		*t = &scoring.Error{Type: e.typ, Err: errors.New(e.text)}
		return true
	}
	return false
}

// recover takes an item found in storage at start. While its max_wait
// (counted from its first admission) has not passed and the store has
// room, it goes back into the store with its recorded results and the
// missing evaluations are dispatched; it keeps its place in storage.
// Otherwise it is forwarded with the results it has and a restarted
// marker for each scorer that applies and has none, from a goroutine, so
// Start does not wait for the consumers.
func (s *evalStore) recover(subject evalSubject, rec durable.Recovered) {
	recorded := make(map[string]evalResult, len(rec.Results))
	for _, r := range rec.Results {
		recorded[r.Scorer] = recoveredResult(r)
	}
	ctx := context.Background() // the request's client.Info is not stored
	s.mu.Lock()
	now := time.Now()
	item := &admittedItem{
		subject:   subject,
		ctx:       ctx,
		admitted:  rec.Item.Admitted,
		expiresAt: rec.Item.Admitted.Add(s.maxWait),
		deadline:  rec.Item.Admitted.Add(s.maxWait + s.evalTimeout),
		results:   make([]*evalResult, len(s.scorers)),
		stored:    rec.ID,
	}
	for i, sc := range s.scorers {
		if r, ok := recorded[sc.cfg.Name]; ok {
			item.results[i] = &r
		} else {
			item.pending++
		}
	}
	resume := s.phase == phaseRunning && now.Before(item.expiresAt) && s.unfinished < s.capacity && item.pending > 0
	if resume {
		s.insertHeld(item)
		s.unfinished++
		if !s.recoverCall(item, now) {
			s.dispatch(item) // the scorers without a recorded result
		}
	} else {
		s.skipUnapplied(item, now) // scorers that do not apply get no marker
		s.workers.Add(1)           // shutdown waits for it to be forwarded
	}
	s.mu.Unlock()

	outcome := "resumed"
	if !resume {
		outcome = "forwarded"
		go func() {
			defer s.workers.Done()
			s.leave(item, leftRestarted)
		}()
	}
	s.tel.tb.ProcessorLlmEvalStorageRecovered.Add(ctx, 1, metric.WithAttributes(attribute.String("outcome", outcome)))
}

// recoverCall puts a recovered call back into the call table: a half
// waits for its other half again (its wait starts anew) and is not
// dispatched; a pair is tracked, so a late half is recognised. It reports
// whether the item waits. Called with mu held.
func (s *evalStore) recoverCall(item *admittedItem, now time.Time) bool {
	call, ok := item.subject.(*pairedCall)
	if !ok || s.calls == nil {
		return false
	}
	var key pairing.Key
	var side pairing.Side
	switch {
	case call.span != nil:
		key, side = pairing.Key{TraceID: call.span.of.traceID, SpanID: call.span.of.spanID}, pairing.Span
	default:
		key, side = pairing.Key{TraceID: call.events.of.traceID, SpanID: call.events.of.spanID}, pairing.Events
	}
	if st, _, _ := s.calls.State(key, now); !key.Valid() || st != pairing.Unknown {
		return false
	}
	item.call = key
	if call.span != nil && call.events != nil {
		s.calls.Track(key, pairing.Span, item)
		s.calls.Join(key, pairing.Events)
		return false
	}
	if side == pairing.Span && call.span.gen.Missing == "" {
		s.calls.Track(key, side, item) // a span with content is evaluated at once
		return false
	}
	s.calls.Wait(key, side, item, now)
	s.armCallTimer()
	return true
}

// insertHeld puts a recovered item into held in expiry order and re-arms
// the expiry timer when it expires first. Called with mu held.
func (s *evalStore) insertHeld(item *admittedItem) {
	e := s.held.Back()
	for e != nil && e.Value.(*admittedItem).expiresAt.After(item.expiresAt) {
		e = e.Prev()
	}
	if e == nil {
		item.elem = s.held.PushFront(item)
	} else {
		item.elem = s.held.InsertAfter(item, e)
	}
	if s.held.Front() == item.elem {
		s.armExpiry(max(time.Until(item.expiresAt), 0))
	}
}
