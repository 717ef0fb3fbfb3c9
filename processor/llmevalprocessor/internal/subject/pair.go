package subject // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/subject"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/logjoin"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/persistence"
	"github.com/llm-eval/llm_eval/scoring"
)

// Pair is the subject of a call held in the call table: its span, its log
// events, or both once the second half joined. One evaluation serves both:
// the results go on the span and into result records.
type Pair struct {
	span   *HeldSpan // nil until the span came
	events *LogCall  // nil until the events came
}

// pairOf is the subject of the call of a half that came first.
func pairOf(half evalstore.Subject) evalstore.Pair {
	c := &Pair{}
	c.Join(half)
	return c
}

// Join takes a half. A span without content of its own is judged on the
// content of its events.
func (c *Pair) Join(half evalstore.Subject) {
	switch h := half.(type) {
	case *HeldSpan:
		c.span = h
	case *LogCall:
		c.events = h
	}
	if c.span == nil || c.events == nil {
		return
	}
	c.events.onSpan = true
	if c.span.Gen.Missing != "" {
		c.span.TakeContent(c.events.gen)
	}
}

// Case builds what the scorer evaluates: the span's case when it came.
func (c *Pair) Case(sc evalstore.Scorer) scoring.Case {
	if c.span != nil {
		return c.span.Case(sc)
	}
	return c.events.Case(sc)
}

// Skips is the span's answer when it came, else the events'.
func (c *Pair) Skips(sc evalstore.Scorer) bool {
	if c.span != nil {
		return c.span.Skips(sc)
	}
	return c.events.Skips(sc)
}

// WaitsForContext: only a span waits for its trace's context.
func (c *Pair) WaitsForContext() (pcommon.TraceID, bool) {
	if c.span != nil {
		return c.span.WaitsForContext()
	}
	return c.events.of.TraceID, false
}

// Leave writes the results to the halves it has.
func (c *Pair) Leave(ctx context.Context, results []evalstore.Result) {
	if c.span != nil {
		c.span.Leave(ctx, results)
	}
	if c.events != nil {
		c.events.Leave(ctx, results)
	}
}

// Late writes a late result to both halves; it is counted once.
func (c *Pair) Late(ctx context.Context, r evalstore.Result) {
	switch {
	case c.span == nil:
		c.events.Late(ctx, r)
	case c.events == nil:
		c.span.Late(ctx, r)
	default:
		c.span.Late(ctx, r)
		if c.events.out.Policy.EmitsLate(r.Label()) {
			c.events.Leave(ctx, []evalstore.Result{r})
		}
	}
}

// Record implements persistence.Stored for a call in the call table: the
// halves it has.
func (c *Pair) Record(admitted time.Time) ([]byte, error) {
	switch {
	case c.span != nil && c.events != nil:
		return persistence.EncodePair(c.span.td, c.events.group.Logs, admitted)
	case c.span != nil:
		return c.span.Record(admitted)
	}
	return c.events.Record(admitted)
}

// Call is the call's key, the halves it has, and whether, with one half
// only, it waits for the other: a span without content of its own, or log
// events without their span.
func (c *Pair) Call() (key logjoin.Key, sides evalstore.Side, waits bool) {
	switch {
	case c.span != nil && c.events != nil:
		return logjoin.Key{TraceID: c.span.of.TraceID, SpanID: c.span.of.SpanID}, evalstore.SideSpan | evalstore.SideEvents, false
	case c.span != nil:
		return logjoin.Key{TraceID: c.span.of.TraceID, SpanID: c.span.of.SpanID}, evalstore.SideSpan, c.span.Gen.Missing != ""
	}
	return logjoin.Key{TraceID: c.events.of.TraceID, SpanID: c.events.of.SpanID}, evalstore.SideEvents, true
}
