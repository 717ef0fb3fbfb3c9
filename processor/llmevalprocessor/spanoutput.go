package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
)

// spanOutput annotates held spans and hands them, and late results, to
// the next consumer.
type spanOutput struct {
	next        consumer.Traces
	tel         *telemetry
	redact      func(string) string
	lateResults string // late_results
}

// forward sends spans on and counts them as the processor's output.
func (o *spanOutput) forward(ctx context.Context, td ptrace.Traces) error {
	o.tel.outgoing(ctx, td.SpanCount())
	return o.next.ConsumeTraces(ctx, td)
}

// forwardLater sends spans that left after their request was answered:
// a failure can only be logged.
func (o *spanOutput) forwardLater(ctx context.Context, td ptrace.Traces) {
	if err := o.forward(ctx, td); err != nil {
		o.tel.logFailure("forward", "failed to forward evaluated spans", zap.Error(err))
	}
}

// emitsLate reports whether a late result becomes a child span.
func (o *spanOutput) emitsLate(r evalstore.Result) bool { return lateEmitted(o.lateResults, r.Label()) }
