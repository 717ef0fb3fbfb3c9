package llmevaleventsconnector // import "github.com/llm-eval/llm_eval/connector/llmevaleventsconnector"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"

	"github.com/llm-eval/llm_eval/connector/llmevaleventsconnector/internal/metadata"
)

// NewFactory returns the factory of the llm_eval_events connector.
func NewFactory() connector.Factory {
	return connector.NewFactory(
		metadata.Type,
		func() component.Config { return createDefaultConfig() },
		connector.WithTracesToLogs(createTracesToLogs, metadata.TracesToLogsStability),
	)
}

func createTracesToLogs(_ context.Context, _ connector.Settings, _ component.Config, next consumer.Logs) (connector.Traces, error) {
	return newConnector(next), nil
}
