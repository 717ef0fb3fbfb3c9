package resultwrite // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/resultwrite"

import (
	"context"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Counter counts what a signal's instance sends on as the processor's
// output, and logs what could not be sent after its request was answered:
// there is no caller left to return the error to.
type Counter interface {
	// Outgoing counts items handed to the next consumer.
	Outgoing(ctx context.Context, items int)
	// ForwardFailed logs a failure no caller sees.
	ForwardFailed(msg string, err error)
}

// Spans sends spans to the traces instance's next consumer: passed
// through, annotated, or late result spans.
type Spans struct {
	Next consumer.Traces
	Tel  Counter
}

// Forward sends spans on and counts them.
func (o *Spans) Forward(ctx context.Context, td ptrace.Traces) error {
	o.Tel.Outgoing(ctx, td.SpanCount())
	return o.Next.ConsumeTraces(ctx, td)
}

// ForwardLater sends spans that left after their request was answered:
// a failure can only be logged.
func (o *Spans) ForwardLater(ctx context.Context, td ptrace.Traces) {
	if err := o.Forward(ctx, td); err != nil {
		o.Tel.ForwardFailed("failed to forward evaluated spans", err)
	}
}

// Logs sends result records to the logs instance's next consumer.
type Logs struct {
	Next consumer.Logs
	Tel  Counter
}

// Emit sends result records on and counts them; they leave after their
// request was answered, so a failure can only be logged.
func (o *Logs) Emit(ctx context.Context, ld plog.Logs) {
	o.Tel.Outgoing(ctx, ld.LogRecordCount())
	if err := o.Next.ConsumeLogs(ctx, ld); err != nil {
		o.Tel.ForwardFailed("failed to forward evaluation result records", err)
	}
}
