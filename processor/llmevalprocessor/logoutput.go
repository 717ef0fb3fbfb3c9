package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"
)

// logOutput emits the result records of log calls to the logs
// instance's consumer; it is the subject.LogSink of the logs instance.
type logOutput struct {
	next      consumer.Logs
	tel       *telemetry
	itemAttrs metric.MeasurementOption // processor, otel.signal=logs
}

// Emit sends result records on and counts them as the processor's output.
func (o *logOutput) Emit(ctx context.Context, ld plog.Logs) {
	o.tel.tb.ProcessorOutgoingItems.Add(ctx, int64(ld.LogRecordCount()), o.itemAttrs)
	if err := o.next.ConsumeLogs(ctx, ld); err != nil {
		o.tel.logFailure("forward", "failed to forward evaluation result records", zap.Error(err))
	}
}
