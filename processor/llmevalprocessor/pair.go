package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"time"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/heldrecord"
	"github.com/llm-eval/llm_eval/scoring"
	"go.opentelemetry.io/collector/pdata/pcommon"
) // pairedCall is the subject of a call held in the call table: its span,
// its log events, or both once the second half joined. One evaluation
// serves both: the results go on the span and into result records.
type pairedCall struct {
	span   *heldSpan // nil until the span came
	events *logCall  // nil until the events came
}

// add takes a half. A span without content of its own is judged on the
// content of its events.
func (c *pairedCall) add(half evalSubject) {
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

func (c *pairedCall) caseFor(cfg ScorerConfig) scoring.Case {
	if c.span != nil {
		return c.span.caseFor(cfg)
	}
	return c.events.caseFor(cfg)
}

func (c *pairedCall) skips(sc ScorerConfig) bool {
	if c.span != nil {
		return c.span.skips(sc)
	}
	return c.events.skips(sc)
}

func (c *pairedCall) waitsForContext() (pcommon.TraceID, bool) {
	if c.span != nil {
		return c.span.waitsForContext()
	}
	return c.events.of.traceID, false
}

func (c *pairedCall) leave(ctx context.Context, results []evalResult) {
	if c.span != nil {
		c.span.leave(ctx, results)
	}
	if c.events != nil {
		c.events.leave(ctx, results)
	}
}

// late writes a late result to both halves; it is counted once.
func (c *pairedCall) late(ctx context.Context, r evalResult) {
	switch {
	case c.span == nil:
		c.events.late(ctx, r)
	case c.events == nil:
		c.span.late(ctx, r)
	default:
		c.span.late(ctx, r)
		if lateEmitted(c.events.p.core.cfg.LateResults, r) {
			c.events.leave(ctx, []evalResult{r})
		}
	}
}

// record implements storedSubject for a call in the call table: the
// halves it has.
func (c *pairedCall) record(admitted time.Time) ([]byte, error) {
	switch {
	case c.span != nil && c.events != nil:
		return heldrecord.EncodePair(c.span.td, c.events.group.Logs, admitted)
	case c.span != nil:
		return c.span.record(admitted)
	}
	return c.events.record(admitted)
}
