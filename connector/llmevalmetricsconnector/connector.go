package llmevalmetricsconnector // import "github.com/llm-eval/llm_eval/connector/llmevalmetricsconnector"

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/llm-eval/llm_eval/connector/llmevalmetricsconnector/internal/metadata"
	"github.com/llm-eval/llm_eval/internal/sharedcomponent"
)

// evalMetricsConnector aggregates evaluation results, from span events and
// log records alike, into cumulative series and flushes them on an
// interval. Cumulative, not per-batch delta: the prometheus exporter
// (v0.161.0) only adds a delta point to its running total when the point
// starts exactly where the previous one ended, and treats anything else as
// a reset, so independent per-batch deltas would lose counts.
type evalMetricsConnector struct {
	cfg       *Config
	logger    *zap.Logger
	telemetry *metadata.TelemetryBuilder
	next      consumer.Metrics
	now       func() time.Time

	mu             sync.Mutex
	agg            *aggregator
	warnedOverflow bool
	// shared counts the sides (traces, logs) using the connector; nil when
	// it is not shared.
	shared *sharedcomponent.Map[*Config, *evalMetricsConnector]

	startOnce sync.Once
	stopOnce  sync.Once
	stop      chan struct{}
	done      chan struct{}
	started   bool
}

var (
	_ connector.Traces = (*evalMetricsConnector)(nil)
	_ connector.Logs   = (*evalMetricsConnector)(nil)
)

func newConnector(set connector.Settings, cfg *Config, next consumer.Metrics) (*evalMetricsConnector, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, fmt.Errorf("creating llm_eval_metrics telemetry: %w", err)
	}
	return &evalMetricsConnector{
		cfg:       cfg,
		logger:    set.Logger,
		telemetry: tb,
		next:      next,
		now:       time.Now,
		agg:       newAggregator(cfg),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}, nil
}

// Capabilities reports that spans and log records are only read.
func (*evalMetricsConnector) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// Start begins the periodic flush; a shared connector starts once.
func (c *evalMetricsConnector) Start(context.Context, component.Host) error {
	c.startOnce.Do(func() {
		c.mu.Lock()
		c.started = true
		c.mu.Unlock()
		go c.flushLoop()
	})
	return nil
}

func (c *evalMetricsConnector) flushLoop() {
	defer close(c.done)
	ticker := time.NewTicker(c.cfg.MetricsFlushInterval)
	defer ticker.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-ticker.C:
			if err := c.flush(context.Background(), false); err != nil {
				c.logger.Warn("failed to send evaluation metrics", zap.Error(err))
			}
		}
	}
}

// Shutdown stops the flush loop and sends the final state once, when the
// last side using the connector shuts down. It is safe without Start and
// when called more often than the connector was acquired.
func (c *evalMetricsConnector) Shutdown(ctx context.Context) error {
	if c.shared != nil && !c.shared.Release(c.cfg, c) {
		return nil // another side still uses it, or it was stopped already
	}
	var err error
	c.stopOnce.Do(func() {
		defer c.telemetry.Shutdown()
		close(c.stop)
		c.mu.Lock()
		started := c.started
		c.mu.Unlock()
		if started {
			select {
			case <-c.done:
			case <-ctx.Done():
				err = ctx.Err()
				return
			}
		}
		err = c.flush(ctx, true)
	})
	return err
}

// ConsumeTraces reads the evaluation events of td into the series. It
// never sends; the flush loop does.
func (c *evalMetricsConnector) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	now := pcommon.NewTimestampFromTime(c.now())
	c.mu.Lock()
	overflowed := c.agg.consumeTraces(td, now)
	c.mu.Unlock()
	c.recordOverflow(ctx, overflowed)
	return nil
}

// ConsumeLogs reads the evaluation log records of ld into the series. It
// never sends; the flush loop does.
func (c *evalMetricsConnector) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	now := pcommon.NewTimestampFromTime(c.now())
	c.mu.Lock()
	overflowed := c.agg.consumeLogs(ld, now)
	c.mu.Unlock()
	c.recordOverflow(ctx, overflowed)
	return nil
}

func (c *evalMetricsConnector) recordOverflow(ctx context.Context, n int) {
	if n == 0 {
		return
	}
	c.telemetry.ConnectorLlmEvalMetricsOverflowResults.Add(ctx, int64(n))
	c.mu.Lock()
	warn := !c.warnedOverflow
	c.warnedOverflow = true
	c.mu.Unlock()
	if warn {
		c.logger.Warn("max_series reached: results of new series are counted in the otel.metric.overflow series",
			zap.Int("max_series", c.cfg.MaxSeries))
	}
}

// flush sends the state of every series; final is the last flush, at
// shutdown, which holds no value back.
func (c *evalMetricsConnector) flush(ctx context.Context, final bool) error {
	c.mu.Lock()
	now := pcommon.NewTimestampFromTime(c.now())
	expired := c.agg.expire(now)
	md := c.agg.build(metadata.ScopeName, now, final)
	c.mu.Unlock()
	if expired > 0 {
		c.telemetry.ConnectorLlmEvalMetricsSeriesExpired.Add(ctx, int64(expired))
	}
	if md.DataPointCount() == 0 {
		return nil
	}
	return c.next.ConsumeMetrics(ctx, md)
}
