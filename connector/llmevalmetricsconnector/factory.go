package llmevalmetricsconnector // import "github.com/llm-eval/llm_eval/connector/llmevalmetricsconnector"

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"

	"github.com/llm-eval/llm_eval/connector/llmevalmetricsconnector/internal/metadata"
)

// NewFactory returns the factory of the llm_eval_metrics connector.
func NewFactory() connector.Factory {
	return connector.NewFactory(
		metadata.Type,
		func() component.Config { return createDefaultConfig() },
		connector.WithTracesToMetrics(createTracesToMetrics, metadata.TracesToMetricsStability),
		connector.WithLogsToMetrics(createLogsToMetrics, metadata.LogsToMetricsStability),
	)
}

func createTracesToMetrics(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Traces, error) {
	return shared.acquire(set, cfg.(*Config), next)
}

func createLogsToMetrics(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Logs, error) {
	return shared.acquire(set, cfg.(*Config), next)
}

// shared holds one connector per configured llm_eval_metrics, used by both
// its traces and its logs side. Two instances would send the same series
// (same resource and attributes) with different cumulative values, which a
// metrics backend cannot tell apart. The Collector passes the same *Config
// to both sides of one component id.
var shared = &instances{byConfig: map[*Config]*evalMetricsConnector{}}

type instances struct {
	mu       sync.Mutex
	byConfig map[*Config]*evalMetricsConnector
}

// acquire returns the connector of cfg, creating it on first use. Each
// acquire is matched by one Shutdown; the last one stops the connector.
func (in *instances) acquire(set connector.Settings, cfg *Config, next consumer.Metrics) (*evalMetricsConnector, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if c, ok := in.byConfig[cfg]; ok {
		c.mu.Lock()
		c.users++
		c.mu.Unlock()
		return c, nil
	}
	c, err := newConnector(set, cfg, next)
	if err != nil {
		return nil, err
	}
	c.release = func() { in.remove(cfg, c) }
	in.byConfig[cfg] = c
	return c, nil
}

func (in *instances) remove(cfg *Config, c *evalMetricsConnector) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.byConfig[cfg] == c {
		delete(in.byConfig, cfg)
	}
}
