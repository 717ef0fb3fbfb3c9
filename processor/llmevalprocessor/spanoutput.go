package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
)

// spanOutput hands spans, annotated held spans and late results to the
// next consumer; it is the subject.SpanSink of the traces instance.
type spanOutput struct {
	next consumer.Traces
	tel  *telemetry
}

// forward sends spans on and counts them as the processor's output.
func (o *spanOutput) forward(ctx context.Context, td ptrace.Traces) error {
	o.tel.outgoing(ctx, td.SpanCount())
	return o.next.ConsumeTraces(ctx, td)
}

// ForwardLater sends spans that left after their request was answered:
// a failure can only be logged.
func (o *spanOutput) ForwardLater(ctx context.Context, td ptrace.Traces) {
	if err := o.forward(ctx, td); err != nil {
		o.tel.logFailure("forward", "failed to forward evaluated spans", zap.Error(err))
	}
}
