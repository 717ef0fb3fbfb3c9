package resultwrite

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func spans(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	for range n {
		ss.Spans().AppendEmpty()
	}
	return td
}

func records(n int) plog.Logs {
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	for range n {
		sl.LogRecords().AppendEmpty()
	}
	return ld
}

// counter records what the senders count and log.
type counter struct {
	t       *testing.T
	boom    error
	counted int
	failed  []string
}

func (c *counter) Outgoing(_ context.Context, n int) { c.counted += n }

func (c *counter) ForwardFailed(msg string, err error) {
	assert.ErrorIs(c.t, err, c.boom)
	c.failed = append(c.failed, msg)
}

func TestForwardCountsAndLogsFailures(t *testing.T) {
	boom := errors.New("downstream refused")
	tests := []struct {
		name       string
		failing    bool
		wantFailed []string
	}{
		{name: "delivered"},
		{name: "refused", failing: true, wantFailed: []string{"failed to forward evaluated spans", "failed to forward evaluation result records"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &counter{t: t, boom: boom}
			traceSink, logSink := new(consumertest.TracesSink), new(consumertest.LogsSink)
			s := &Spans{Next: traceSink, Tel: c}
			l := &Logs{Next: logSink, Tel: c}
			if tt.failing {
				s.Next, l.Next = consumertest.NewErr(boom), consumertest.NewErr(boom)
			}
			s.ForwardLater(context.Background(), spans(2))
			l.Emit(context.Background(), records(3))
			assert.Equal(t, 5, c.counted, "what was handed on is counted, delivered or not")
			assert.Equal(t, tt.wantFailed, c.failed)
			if !tt.failing {
				assert.Equal(t, 2, traceSink.SpanCount())
				assert.Equal(t, 3, logSink.LogRecordCount())
			}
		})
	}
}
