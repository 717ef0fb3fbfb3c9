package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/collector/processor"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadata"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/persistence"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/guard"
	"github.com/llm-eval/llm_eval/scoring/openai"
	"github.com/llm-eval/llm_eval/scoring/redact"
)

// NewFactory returns the factory of the llm_eval processor.
func NewFactory() processor.Factory { return newFactoryWith(newJudge) }

// newFactoryWith returns the factory using build to make the judge at
// Start (tests pass fake scorers here). Its instances of one *Config share
// one evaluator (evaluator.go).
func newFactoryWith(build judgeBuilder) processor.Factory {
	evs := newEvaluators(build)
	return processor.NewFactory(
		metadata.Type,
		createDefaultConfig,
		processor.WithTraces(evs.createTraces, metadata.TracesStability),
		processor.WithLogs(evs.createLogs, metadata.LogsStability),
	)
}

func createDefaultConfig() component.Config {
	client := confighttp.NewDefaultClientConfig()
	client.Timeout = defaultJudgeTimeout
	// HTTP/1.1 over TLS: against an HTTPS judge it cost about a sixth less
	// collector CPU per evaluation than HTTP/2 in load runs (BENCHMARKS.md,
	// round 5), for one connection per busy worker. httpx, the client of
	// OpenAI's Python SDK, also speaks HTTP/1.1 unless told otherwise.
	client.ForceAttemptHTTP2 = false
	return &Config{
		Judge: JudgeConfig{
			ClientConfig:      client,
			StructuredOutputs: defaultStructuredOutputs,
			MaxConcurrency:    defaultMaxConcurrency,
			CircuitBreaker: CircuitBreakerConfig{
				FailureThreshold:  guard.DefaultFailureThreshold,
				OpenDuration:      guard.DefaultOpenDuration,
				AuthRetryInterval: guard.DefaultAuthRetryInterval,
			},
			Retry: RetryConfig{
				MaxAttempts:    openai.DefaultMaxAttempts,
				InitialBackoff: openai.DefaultInitialBackoff,
				MaxBackoff:     openai.DefaultMaxBackoff,
				MaxRetryAfter:  openai.DefaultMaxRetryAfter,
			},
		},
		Sampling:            SamplingConfig{Percentage: defaultSamplingPercent},
		MaxWait:             defaultMaxWait,
		QueueSize:           defaultQueueSize,
		Cache:               CacheConfig{Enabled: true, Size: defaultCacheSize, TTL: defaultCacheTTL},
		MaxInputChars:       defaultMaxInputChars,
		MaxContextChunks:    scoring.DefaultMaxContextChunks,
		LateResults:         lateResultsVerdicts,
		StorageCheckTimeout: persistence.DefaultCheckTimeout,
		LogEvents:           defaultLogEventsConfig(),
		TraceContext:        defaultTraceContextConfig(),
		Conversation:        defaultConversationConfig(),
		Redaction:           RedactionConfig{Builtin: redact.Builtins()},
		Scorers: []ScorerConfig{
			defaultScorerConfig(scoring.Bias),
			defaultScorerConfig(scoring.Hallucination),
			defaultScorerConfig(scoring.PromptAlignment),
		},
	}
}

// createTraces makes the traces instance of a component.
func (es *evaluators) createTraces(_ context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	pcfg, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("llm_eval: unexpected config type %T", cfg)
	}
	ev, err := es.acquire(set, pcfg, pipeline.SignalTraces)
	if err != nil {
		return nil, err
	}
	tp := newTracesInstance(ev, next)
	ev.setTraces(tp)
	return tp, nil
}

// createLogs makes the logs instance of a component.
func (es *evaluators) createLogs(_ context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	pcfg, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("llm_eval: unexpected config type %T", cfg)
	}
	ev, err := es.acquire(set, pcfg, pipeline.SignalLogs)
	if err != nil {
		return nil, err
	}
	lp := newLogsProcessor(set, ev, next)
	ev.setLogs(lp)
	return lp, nil
}
