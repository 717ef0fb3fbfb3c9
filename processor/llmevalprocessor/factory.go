package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadata"
	"github.com/llm-eval/llm_eval/scoring"
)

// Defaults of the configuration.
const (
	defaultJudgeTimeout      = 30 * time.Second
	defaultMaxConcurrency    = 8
	defaultSamplingPercent   = 100
	defaultMaxWait           = 30 * time.Second
	defaultQueueSize         = 1000
	defaultStructuredOutputs = structuredOutputsAuto
	defaultCacheSize         = 10000
	defaultCacheTTL          = time.Hour
	// defaultMaxInputChars keeps one runaway generation (a pasted log, a
	// whole document) from costing a fortune in judge tokens; ordinary
	// answers are far shorter.
	defaultMaxInputChars = 20000
)

// NewFactory returns the factory of the llm_eval processor.
func NewFactory() processor.Factory {
	return processor.NewFactory(
		metadata.Type,
		createDefaultConfig,
		processor.WithTraces(createTracesWith(newJudgeScorers), metadata.TracesStability),
	)
}

func createDefaultConfig() component.Config {
	client := confighttp.NewDefaultClientConfig()
	client.Timeout = defaultJudgeTimeout
	return &Config{
		Judge: JudgeConfig{
			ClientConfig:      client,
			StructuredOutputs: defaultStructuredOutputs,
			MaxConcurrency:    defaultMaxConcurrency,
			CircuitBreaker: CircuitBreakerConfig{
				FailureThreshold:  scoring.DefaultFailureThreshold,
				OpenDuration:      scoring.DefaultOpenDuration,
				AuthRetryInterval: scoring.DefaultAuthRetryInterval,
			},
			Retry: RetryConfig{
				MaxAttempts:    scoring.DefaultMaxAttempts,
				InitialBackoff: scoring.DefaultInitialBackoff,
				MaxBackoff:     scoring.DefaultMaxBackoff,
				MaxRetryAfter:  scoring.DefaultMaxRetryAfter,
			},
		},
		Sampling:      SamplingConfig{Percentage: defaultSamplingPercent},
		MaxWait:       defaultMaxWait,
		QueueSize:     defaultQueueSize,
		Cache:         CacheConfig{Enabled: true, Size: defaultCacheSize, TTL: defaultCacheTTL},
		MaxInputChars: defaultMaxInputChars,
		Redaction:     RedactionConfig{Builtin: scoring.RedactionBuiltins()},
		Scorers: []ScorerConfig{
			defaultScorerConfig(scoring.Bias),
			defaultScorerConfig(scoring.Hallucination),
			defaultScorerConfig(scoring.PromptAlignment),
		},
	}
}

// createTracesWith returns the traces constructor using build to make the
// scorers at Start (tests pass fake scorers here).
func createTracesWith(build scorerBuilder) processor.CreateTracesFunc {
	return func(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
		pcfg, ok := cfg.(*Config)
		if !ok {
			return nil, fmt.Errorf("llm_eval: unexpected config type %T", cfg)
		}
		_, tp, err := newTracesProcessor(ctx, set, pcfg, next, build)
		return tp, err
	}
}

func newTracesProcessor(ctx context.Context, set processor.Settings, cfg *Config, next consumer.Traces, build scorerBuilder) (*llmEvalProcessor, processor.Traces, error) {
	p, err := newLLMEvalProcessor(set, cfg, next, build)
	if err != nil {
		return nil, nil, err
	}
	tp, err := processorhelper.NewTraces(ctx, set, cfg, next, p.processTraces,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}),
		processorhelper.WithStart(p.start),
		processorhelper.WithShutdown(p.shutdown),
	)
	return p, tp, err
}
