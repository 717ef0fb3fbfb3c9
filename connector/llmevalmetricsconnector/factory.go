package llmevalmetricsconnector // import "github.com/llm-eval/llm_eval/connector/llmevalmetricsconnector"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"

	"github.com/llm-eval/llm_eval/connector/llmevalmetricsconnector/internal/metadata"
	"github.com/llm-eval/llm_eval/internal/sharedcomponent"
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
	return acquire(set, cfg.(*Config), next)
}

func createLogsToMetrics(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Logs, error) {
	return acquire(set, cfg.(*Config), next)
}

// shared holds one connector per configured llm_eval_metrics, used by both
// its traces and its logs side. Two instances would send the same series
// (same resource and attributes) with different cumulative values, which a
// metrics backend cannot tell apart. The Collector passes the same *Config
// to both sides of one component id.
var shared sharedcomponent.Map[*Config, *evalMetricsConnector]

// acquire returns the connector of cfg, creating it on first use. Each
// acquire is matched by one Shutdown; the last one stops the connector.
func acquire(set connector.Settings, cfg *Config, next consumer.Metrics) (*evalMetricsConnector, error) {
	return shared.Acquire(cfg, func() (*evalMetricsConnector, error) {
		c, err := newConnector(set, cfg, next)
		if err != nil {
			return nil, err
		}
		c.shared = &shared
		return c, nil
	})
}
