package llmevaleventsconnector // import "github.com/llm-eval/llm_eval/connector/llmevaleventsconnector"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// eventsConnector sends the evaluation results of each traces batch as one
// logs batch. It keeps no state: a batch without results sends nothing.
type eventsConnector struct {
	component.StartFunc
	component.ShutdownFunc

	next consumer.Logs
	now  func() time.Time
}

var _ connector.Traces = (*eventsConnector)(nil)

func newConnector(next consumer.Logs) *eventsConnector {
	return &eventsConnector{next: next, now: time.Now}
}

// Capabilities reports that spans are only read.
func (*eventsConnector) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// ConsumeTraces turns the evaluation events of td into log records and
// passes them on, with the caller's context (and so its client metadata).
func (c *eventsConnector) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	ld := resultsToLogs(td, pcommon.NewTimestampFromTime(c.now()))
	if ld.LogRecordCount() == 0 {
		return nil
	}
	return c.next.ConsumeLogs(ctx, ld)
}
