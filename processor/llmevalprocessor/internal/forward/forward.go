// Package forward hands what the processor emits to the next consumer and
// counts it as the processor's output: spans (passed through, annotated,
// late result spans) and result log records. What leaves after its request
// was answered has no caller to return an error to: a failure is logged.
package forward // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/forward"

import (
	"context"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Spans sends spans to the traces instance's next consumer.
type Spans struct {
	Next consumer.Traces
	// Count counts spans sent on as the processor's output.
	Count func(ctx context.Context, spans int)
	// Failed logs a failure no caller sees.
	Failed func(msg string, err error)
}

// Forward sends spans on and counts them.
func (o *Spans) Forward(ctx context.Context, td ptrace.Traces) error {
	o.Count(ctx, td.SpanCount())
	return o.Next.ConsumeTraces(ctx, td)
}

// ForwardLater sends spans that left after their request was answered:
// a failure can only be logged.
func (o *Spans) ForwardLater(ctx context.Context, td ptrace.Traces) {
	if err := o.Forward(ctx, td); err != nil {
		o.Failed("failed to forward evaluated spans", err)
	}
}

// Logs sends result records to the logs instance's next consumer.
type Logs struct {
	Next consumer.Logs
	// Count counts records sent on as the processor's output.
	Count func(ctx context.Context, records int)
	// Failed logs a failure no caller sees.
	Failed func(msg string, err error)
}

// Emit sends result records on and counts them; they leave after their
// request was answered, so a failure can only be logged.
func (o *Logs) Emit(ctx context.Context, ld plog.Logs) {
	o.Count(ctx, ld.LogRecordCount())
	if err := o.Next.ConsumeLogs(ctx, ld); err != nil {
		o.Failed("failed to forward evaluation result records", err)
	}
}
