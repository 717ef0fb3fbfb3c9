package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"
)

// emit sends result records on; they are the processor's output too.
// logOutput emits the result records of log calls to the logs
// instance's consumer.
type logOutput struct {
	next        consumer.Logs
	tel         *telemetry
	redact      func(string) string
	now         func() time.Time
	scorers     []ScorerConfig
	lateResults string                   // late_results
	itemAttrs   metric.MeasurementOption // processor, otel.signal=logs
}

// emit sends result records on and counts them as the processor's output.
func (o *logOutput) emit(ctx context.Context, ld plog.Logs) {
	o.tel.tb.ProcessorOutgoingItems.Add(ctx, int64(ld.LogRecordCount()), o.itemAttrs)
	if err := o.next.ConsumeLogs(ctx, ld); err != nil {
		o.tel.logFailure("forward", "failed to forward evaluation result records", zap.Error(err))
	}
}
