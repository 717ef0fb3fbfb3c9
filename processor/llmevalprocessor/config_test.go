package llmevalprocessor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/confmap"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadata"
	"github.com/llm-eval/llm_eval/scoring"
)

func ptr[T any](v T) *T { return &v }

func TestLoadConfig(t *testing.T) {
	t.Setenv("JUDGE_API_KEY", "sk-from-env")
	cm := resolveConfig(t, filepath.Join("testdata", "config.yaml"))

	full := createDefaultConfig().(*Config)
	full.Judge.Endpoint = "http://vllm.internal:8000/v1"
	full.Judge.APIKey = configopaque.String("sk-from-env")
	full.Judge.Model = "qwen2.5-7b-instruct"
	full.Judge.Timeout = 20 * time.Second
	full.Judge.Headers = configopaque.MapList{{Name: "X-Team", Value: "ml-platform"}}
	full.Judge.StructuredOutputs = "json_object"
	full.Judge.MaxConcurrency = 4
	full.Judge.RequestsPerMinute = 120
	full.Judge.TokensPerMinute = 200000
	full.Judge.CircuitBreaker.FailureThreshold = 3
	full.Judge.CircuitBreaker.OpenDuration = 10 * time.Second
	full.Judge.Retry.MaxAttempts = 5
	full.Judge.Retry.InitialBackoff = 250 * time.Millisecond
	full.Judge.MaxTokens = 512
	full.Judge.Seed = ptr(7)
	full.Sampling.Percentage = 12.5
	full.MaxWait = 45 * time.Second
	full.QueueSize = 200
	full.Cache = CacheConfig{Enabled: true, Size: 500, TTL: 10 * time.Minute}
	full.MaxInputChars = 8000
	full.Redaction = RedactionConfig{Enabled: true, Builtin: []string{"email", "payment_card"}, Patterns: []string{`ACCT-\d{6}`}}
	bias := defaultScorerConfig(scoring.Bias)
	bias.Threshold = ptr(0.3)
	hall := defaultScorerConfig(scoring.Hallucination)
	hall.Scale, hall.StrictMode, hall.IncludeReason = 10, true, false
	align := defaultScorerConfig(scoring.PromptAlignment)
	align.ReasonMode = "summary"
	align.Instructions = []string{"Answer in English", "Cite the provided context"}
	full.Scorers = []ScorerConfig{bias, hall, align}

	minimal := createDefaultConfig().(*Config)
	minimal.Judge.Endpoint = "https://api.openai.com/v1"
	minimal.Judge.Model = "gpt-4o-mini"

	cacheOff := createDefaultConfig().(*Config)
	cacheOff.Judge.Endpoint, cacheOff.Judge.Model = "http://j/v1", "m"
	cacheOff.Cache = CacheConfig{Enabled: false, Size: 0, TTL: defaultCacheTTL}

	tests := []struct {
		name    string
		want    *Config
		wantErr string // substring naming the key
	}{
		{name: "minimal", want: minimal},
		{name: "full", want: full},
		{name: "unknown_scorer", wantErr: `scorers[0]: criteria: must be set: "toxicity" is not a built-in scorer`},
		{name: "bad_percentage", wantErr: "sampling.percentage: must be between 0 and 100"},
		{name: "no_endpoint", wantErr: "judge.endpoint: must be set"},
		{name: "no_model", wantErr: "judge.model: must be set"},
		{name: "bad_max_wait", wantErr: "max_wait: must be positive"},
		{name: "bad_queue_size", wantErr: "queue_size: must be at least 1"},
		{name: "bad_concurrency", wantErr: "judge.max_concurrency: must be at least 1"},
		{name: "duplicate_scorer", wantErr: `scorers[1].name: duplicate scorer "bias"`},
		{name: "alignment_without_instructions", wantErr: "scorers[0]: instructions: prompt_alignment needs instructions"},
		{name: "bad_threshold", wantErr: "scorers[0]: threshold: must be between 0 and scale"},
		{name: "bad_scale", wantErr: "scorers[0]: scale: must be positive"},
		{name: "bad_structured_outputs", wantErr: `judge.structured_outputs: "xml"`},
		{name: "bad_reason_mode", wantErr: `scorers[0]: reason_mode: "poem"`},
		{name: "unknown_judge_key", wantErr: `unknown keys ["modle"]`},
		{name: "bad_tokens_per_minute", wantErr: "judge.tokens_per_minute: must not be negative"},
		{name: "bad_failure_threshold", wantErr: "judge.circuit_breaker.failure_threshold: must be at least 1"},
		{name: "bad_open_duration", wantErr: "judge.circuit_breaker.open_duration: must be positive"},
		{name: "bad_auth_retry_interval", wantErr: "judge.circuit_breaker.auth_retry_interval: must be positive"},
		{name: "bad_retry_attempts", wantErr: "judge.retry.max_attempts: must be at least 1"},
		{name: "bad_retry_backoff", wantErr: "judge.retry.max_backoff: must be at least initial_backoff"},
		{name: "bad_cache_size", wantErr: "cache.size: must be at least 1"},
		{name: "bad_cache_ttl", wantErr: "cache.ttl: must be positive"},
		{name: "cache_off_ignores_size", want: cacheOff},
		{name: "bad_max_input_chars", wantErr: "max_input_chars: must not be negative"},
		{name: "bad_redaction_builtin", wantErr: `redaction: unknown built-in pattern "ssn"`},
		{name: "bad_redaction_pattern", wantErr: `redaction: pattern 0 "(unclosed"`},
		{name: "empty_redaction_pattern", wantErr: `redaction: pattern 0 "x*" matches empty text`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			sub, err := cm.Sub(component.NewIDWithName(metadata.Type, tt.name).String())
			require.NoError(t, err)
			err = sub.Unmarshal(cfg)
			if err == nil {
				err = confmap.Validate(cfg)
			}
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg)
		})
	}
}

func TestDefaultConfig(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	assert.Equal(t, 30*time.Second, cfg.Judge.Timeout)
	assert.Equal(t, 8, cfg.Judge.MaxConcurrency)
	assert.Equal(t, "auto", cfg.Judge.StructuredOutputs)
	assert.Equal(t, 100.0, cfg.Sampling.Percentage)
	assert.Equal(t, 30*time.Second, cfg.MaxWait)
	assert.Equal(t, 1000, cfg.QueueSize)
	assert.Equal(t, 0, cfg.Judge.RequestsPerMinute, "unlimited")
	assert.Equal(t, 0, cfg.Judge.TokensPerMinute, "unlimited")
	assert.Equal(t, CircuitBreakerConfig{FailureThreshold: 5, OpenDuration: 30 * time.Second, AuthRetryInterval: 5 * time.Minute}, cfg.Judge.CircuitBreaker)
	assert.Equal(t, CacheConfig{Enabled: true, Size: 10000, TTL: time.Hour}, cfg.Cache)
	assert.Equal(t, 20000, cfg.MaxInputChars)
	assert.False(t, cfg.Redaction.Enabled)
	assert.Equal(t, []string{"email", "phone", "payment_card"}, cfg.Redaction.Builtin)
	require.Len(t, cfg.Scorers, 3)
	for _, sc := range cfg.Scorers {
		assert.True(t, sc.IncludeReason)
		assert.True(t, sc.UseSystemInstructions)
		assert.Equal(t, 1.0, sc.Scale)
	}
	// Without a judge the default config does not validate.
	err := cfg.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "judge.endpoint")
	assert.Contains(t, err.Error(), "judge.model")
}

func TestAPIKeyNotPrinted(t *testing.T) {
	cfg := testConfig(scoring.Bias)
	cfg.Judge.APIKey = "sk-very-secret"
	conf := confmap.New()
	require.NoError(t, conf.Marshal(cfg))
	assert.NotContains(t, conf.ToStringMap()["judge"].(map[string]any)["api_key"], "sk-very-secret")
}

// resolveConfig loads a YAML file the way the collector does, expanding
// ${env:VAR} references, with minimal file and env providers.
func resolveConfig(t *testing.T, path string) *confmap.Conf {
	t.Helper()
	resolver, err := confmap.NewResolver(confmap.ResolverSettings{
		URIs: []string{"file:" + path},
		ProviderFactories: []confmap.ProviderFactory{
			confmap.NewProviderFactory(func(confmap.ProviderSettings) confmap.Provider {
				return testProvider{scheme: "file", read: func(s string) ([]byte, error) { return os.ReadFile(filepath.Clean(s)) }}
			}),
			confmap.NewProviderFactory(func(confmap.ProviderSettings) confmap.Provider {
				return testProvider{scheme: "env", read: func(s string) ([]byte, error) { return []byte(os.Getenv(s)), nil }}
			}),
		},
		DefaultScheme: "env",
	})
	require.NoError(t, err)
	conf, err := resolver.Resolve(context.Background())
	require.NoError(t, err)
	return conf
}

type testProvider struct {
	scheme string
	read   func(string) ([]byte, error)
}

func (p testProvider) Retrieve(_ context.Context, uri string, _ confmap.WatcherFunc) (*confmap.Retrieved, error) {
	b, err := p.read(strings.TrimPrefix(uri, p.scheme+":"))
	if err != nil {
		return nil, err
	}
	return confmap.NewRetrievedFromYAML(b)
}

func (p testProvider) Scheme() string { return p.scheme }

func (testProvider) Shutdown(context.Context) error { return nil }
