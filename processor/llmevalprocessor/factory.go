package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/collector/processor"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadata"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/guard"
	"github.com/llm-eval/llm_eval/scoring/openai"
	"github.com/llm-eval/llm_eval/scoring/redact"
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
		processor.WithTraces(createTracesWith(newJudge), metadata.TracesStability),
		processor.WithLogs(createLogsWith(newJudge), metadata.LogsStability),
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
		Sampling:      SamplingConfig{Percentage: defaultSamplingPercent},
		MaxWait:       defaultMaxWait,
		QueueSize:     defaultQueueSize,
		Cache:         CacheConfig{Enabled: true, Size: defaultCacheSize, TTL: defaultCacheTTL},
		MaxInputChars: defaultMaxInputChars,
		LateResults:   lateResultsVerdicts,
		LogEvents:     defaultLogEventsConfig(),
		TraceContext:  defaultTraceContextConfig(),
		Redaction:     RedactionConfig{Builtin: redact.Builtins()},
		Scorers: []ScorerConfig{
			defaultScorerConfig(scoring.Bias),
			defaultScorerConfig(scoring.Hallucination),
			defaultScorerConfig(scoring.PromptAlignment),
		},
	}
}

// createTracesWith returns the traces constructor using build to make the
// judge at Start (tests pass fake scorers here).
func createTracesWith(build judgeBuilder) processor.CreateTracesFunc {
	return func(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
		pcfg, ok := cfg.(*Config)
		if !ok {
			return nil, fmt.Errorf("llm_eval: unexpected config type %T", cfg)
		}
		ev, err := acquireEvaluator(set, pcfg, build, pipeline.SignalTraces)
		if err != nil {
			return nil, err
		}
		tp := *ev.core
		tp.out = &spanOutput{next: next, tel: tp.tel, redact: tp.redact, lateResults: pcfg.LateResults}
		tp.shared = ev
		ev.setTraces(&tp)
		return &tp, nil
	}
}

func newTracesProcessor(_ context.Context, set processor.Settings, cfg *Config, next consumer.Traces, build judgeBuilder) (*llmEvalProcessor, processor.Traces, error) {
	p, err := newLLMEvalProcessor(set, cfg, next, build)
	if err != nil {
		return nil, nil, err
	}
	return p, p, nil
}
