package llmevalmetricsconnector // import "github.com/llm-eval/llm_eval/connector/llmevalmetricsconnector"

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/llm-eval/llm_eval/connector/llmevalmetricsconnector/internal/metadata"
)

// evalMetricsConnector aggregates evaluation events into cumulative series
// and flushes them on an interval. Cumulative, not per-batch delta: the
// prometheus exporter (v0.161.0) only adds a delta point to its running
// total when the point starts exactly where the previous one ended, and
// treats anything else as a reset, so independent per-batch deltas would
// lose counts.
type evalMetricsConnector struct {
	cfg    *Config
	logger *zap.Logger
	next   consumer.Metrics
	now    func() time.Time

	mu            sync.Mutex
	agg           *aggregator
	warnedOverflw bool

	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
	started  bool
}

var _ connector.Traces = (*evalMetricsConnector)(nil)

func newConnector(set connector.Settings, cfg *Config, next consumer.Metrics) *evalMetricsConnector {
	return &evalMetricsConnector{
		cfg:    cfg,
		logger: set.Logger,
		next:   next,
		now:    time.Now,
		agg:    newAggregator(cfg),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
}

// Capabilities reports that spans are only read.
func (*evalMetricsConnector) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// Start begins the periodic flush.
func (c *evalMetricsConnector) Start(context.Context, component.Host) error {
	c.mu.Lock()
	c.started = true
	c.mu.Unlock()
	go c.flushLoop()
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
			if err := c.flush(context.Background()); err != nil {
				c.logger.Warn("failed to send evaluation metrics", zap.Error(err))
			}
		}
	}
}

// Shutdown stops the flush loop and sends the final state once. It is safe
// without Start and when called twice.
func (c *evalMetricsConnector) Shutdown(ctx context.Context) error {
	var err error
	c.stopOnce.Do(func() {
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
		err = c.flush(ctx)
	})
	return err
}

// ConsumeTraces reads the evaluation events of td into the series. It
// never sends; the flush loop does.
func (c *evalMetricsConnector) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	now := pcommon.NewTimestampFromTime(c.now())
	c.mu.Lock()
	defer c.mu.Unlock()
	before := c.agg.overflows
	c.agg.consume(td, now)
	if c.agg.overflows > before && !c.warnedOverflw {
		c.warnedOverflw = true
		c.logger.Warn("max_series reached: results of new series are counted in the otel.metric.overflow series",
			zap.Int("max_series", c.cfg.MaxSeries))
	}
	return nil
}

func (c *evalMetricsConnector) flush(ctx context.Context) error {
	c.mu.Lock()
	md := c.agg.build(metadata.ScopeName, pcommon.NewTimestampFromTime(c.now()))
	c.mu.Unlock()
	if md.DataPointCount() == 0 {
		return nil
	}
	return c.next.ConsumeMetrics(ctx, md)
}
