package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"time"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/heldrecord"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/pairing"
	"github.com/llm-eval/llm_eval/scoring"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// pairedCall is the subject of a call held in the call table: its span,
// its log events, or both once the second half joined. One evaluation
// serves both: the results go on the span and into result records.
type pairedCall struct {
	span   *heldSpan // nil until the span came
	events *logCall  // nil until the events came
}

// newPairedCall is the empty subject of a call seen on both signals.
func newPairedCall() evalstore.Pair[ScorerConfig] { return &pairedCall{} }

// Join takes a half. A span without content of its own is judged on the
// content of its events.
func (c *pairedCall) Join(half evalSubject) {
	switch h := half.(type) {
	case *heldSpan:
		c.span = h
	case *logCall:
		c.events = h
	}
	if c.span == nil || c.events == nil {
		return
	}
	c.events.onSpan = true
	if c.span.gen.Missing != "" {
		c.span.takeContent(c.events.gen)
	}
}

func (c *pairedCall) Case(cfg ScorerConfig) scoring.Case {
	if c.span != nil {
		return c.span.Case(cfg)
	}
	return c.events.Case(cfg)
}

func (c *pairedCall) Skips(sc ScorerConfig) bool {
	if c.span != nil {
		return c.span.Skips(sc)
	}
	return c.events.Skips(sc)
}

func (c *pairedCall) WaitsForContext() (pcommon.TraceID, bool) {
	if c.span != nil {
		return c.span.WaitsForContext()
	}
	return c.events.of.TraceID, false
}

func (c *pairedCall) Leave(ctx context.Context, results []evalResult) {
	if c.span != nil {
		c.span.Leave(ctx, results)
	}
	if c.events != nil {
		c.events.Leave(ctx, results)
	}
}

// late writes a late result to both halves; it is counted once.
func (c *pairedCall) Late(ctx context.Context, r evalResult) {
	switch {
	case c.span == nil:
		c.events.Late(ctx, r)
	case c.events == nil:
		c.span.Late(ctx, r)
	default:
		c.span.Late(ctx, r)
		if lateEmitted(c.events.out.lateResults, r.Label()) {
			c.events.Leave(ctx, []evalResult{r})
		}
	}
}

// Record implements itemstore.Stored for a call in the call table: the
// halves it has.
func (c *pairedCall) Record(admitted time.Time) ([]byte, error) {
	switch {
	case c.span != nil && c.events != nil:
		return heldrecord.EncodePair(c.span.td, c.events.group.Logs, admitted)
	case c.span != nil:
		return c.span.Record(admitted)
	}
	return c.events.Record(admitted)
}

// Call is the call's key, the halves it has, and whether, with one half
// only, it waits for the other: a span without content of its own, or log
// events without their span.
func (c *pairedCall) Call() (key pairing.Key, sides pairing.Side, waits bool) {
	switch {
	case c.span != nil && c.events != nil:
		return pairing.Key{TraceID: c.span.of.TraceID, SpanID: c.span.of.SpanID}, pairing.Span | pairing.Events, false
	case c.span != nil:
		return pairing.Key{TraceID: c.span.of.TraceID, SpanID: c.span.of.SpanID}, pairing.Span, c.span.gen.Missing != ""
	}
	return pairing.Key{TraceID: c.events.of.TraceID, SpanID: c.events.of.SpanID}, pairing.Events, true
}
