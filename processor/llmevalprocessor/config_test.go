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
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/confmap"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadata"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/openai"
)

func ptr[T any](v T) *T { return &v }

func TestLoadConfig(t *testing.T) {
	t.Setenv("JUDGE_API_KEY", "sk-from-env")
	cm := resolveConfig(t, filepath.Join("testdata", "config.yaml"))

	full := createDefaultConfig().(*Config)
	full.Judge.ClientConfig.Endpoint = "http://vllm.internal:8000/v1"
	full.Judge.APIKey = configopaque.String("sk-from-env")
	full.Judge.Model = "qwen2.5-7b-instruct"
	full.Judge.ClientConfig.Timeout = 20 * time.Second
	full.Judge.ClientConfig.Headers = configopaque.MapList{{Name: "X-Team", Value: "ml-platform"}}
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
	full.MaxContextChunks = 2
	full.Redaction = RedactionConfig{Enabled: true, Builtin: []string{"email", "payment_card"}, Patterns: []string{`ACCT-\d{6}`}}
	bias := defaultScorerConfig(scoring.Bias)
	bias.Threshold = ptr(0.3)
	hall := defaultScorerConfig(scoring.Hallucination)
	hall.Scale, hall.StrictMode, hall.IncludeReason = 10, true, false
	align := defaultScorerConfig(scoring.PromptAlignment)
	align.ReasonMode = "summary"
	align.Instructions = []string{"Answer in English", "Cite the provided context"}
	align.InstructionSources = "system"
	full.Scorers = []ScorerConfig{bias, hall, align}

	userOnly := withJudge("http://j/v1")
	userAlign := defaultScorerConfig(scoring.PromptAlignment)
	userAlign.UseSystemInstructions, userAlign.InstructionSources = false, "user"
	userOnly.Scorers = []ScorerConfig{userAlign}

	minimal := createDefaultConfig().(*Config)
	minimal.Judge.ClientConfig.Endpoint = "https://api.openai.com/v1"
	minimal.Judge.Model = "gpt-4o-mini"

	cacheOff := createDefaultConfig().(*Config)
	cacheOff.Judge.ClientConfig.Endpoint, cacheOff.Judge.Model = "http://j/v1", "m"
	cacheOff.Cache = CacheConfig{Enabled: false, Size: 0, TTL: defaultCacheTTL}

	largest := withJudge("http://j/v1")
	largest.Judge.MaxConcurrency, largest.QueueSize = maxConcurrency, maxQueueSize

	noTimeout := withJudge("http://j/v1")
	noTimeout.Judge.ClientConfig.Timeout = 0

	smallest := withJudge("http://j/v1")
	smallest.Judge.ClientConfig.Timeout = minJudgeWait
	smallest.Judge.CircuitBreaker.OpenDuration, smallest.Judge.CircuitBreaker.AuthRetryInterval = minJudgeWait, minJudgeWait
	smallest.Judge.Retry.InitialBackoff, smallest.Judge.Retry.MaxBackoff, smallest.Judge.Retry.MaxRetryAfter = minWait, minWait, minWait
	smallest.MaxWait = minWait
	smallest.Cache.TTL = minCacheTTL

	tests := []struct {
		name string
		want *Config
		// wantErr are substrings of the error: the key path as
		// confmap.Validate or Unmarshal prints it, then the reason.
		wantErr []string
		// once are substrings that must appear exactly once.
		once []string
		// notInErr must not appear (secrets).
		notInErr []string
	}{
		{name: "minimal", want: minimal},
		{name: "full", want: full},
		{name: "cache_off_ignores_size", want: cacheOff},
		{name: "unknown_scorer", wantErr: []string{`scorers::0: criteria: must be set: "sentiment" is not a built-in scorer`}},
		{name: "bad_percentage", wantErr: []string{"sampling: percentage: must be between 0 and 100, got 150"}},
		{name: "no_endpoint", wantErr: []string{"judge: endpoint: must be set"}},
		{name: "no_model", wantErr: []string{"judge: model: must be set"}},
		{name: "blank_model", wantErr: []string{"judge: model: must be set"}},
		{name: "bad_max_wait", wantErr: []string{"max_wait: must be at least 1ms, got 0s"}},
		{name: "bad_queue_size", wantErr: []string{"queue_size: must be between 1 and 100000, got 0"}},
		{name: "bad_concurrency", wantErr: []string{"judge: max_concurrency: must be between 1 and 1000, got 0"}},
		{name: "duplicate_scorer", wantErr: []string{`scorers::1::name: duplicate scorer "bias"`}},
		{name: "alignment_without_instructions", wantErr: []string{"scorers::0: instructions: prompt_alignment needs instructions"}},
		{name: "empty_instruction", wantErr: []string{"scorers::0: instructions::1: must not be empty"}},
		{name: "bad_threshold", wantErr: []string{"scorers::0: threshold: must be between 0 and scale (1), got 2"}},
		{name: "bad_threshold_nan", wantErr: []string{"scorers::0: threshold: must be between 0 and scale (1), got NaN"}},
		{name: "bad_scale", wantErr: []string{"scorers::0: scale: must be a finite positive number, got -1"}},
		{name: "bad_scale_inf", wantErr: []string{"scorers::0: scale: must be a finite positive number, got +Inf"}},
		{name: "bad_scale_nan", wantErr: []string{"scorers::0: scale: must be a finite positive number, got NaN"}},
		{name: "bad_structured_outputs", wantErr: []string{`judge: structured_outputs: "xml"`}},
		{name: "bad_reason_mode", wantErr: []string{`scorers::0: reason_mode: "poem"`}},
		{name: "bad_tokens_per_minute", wantErr: []string{"judge: tokens_per_minute: must not be negative"}},
		{name: "bad_failure_threshold", wantErr: []string{"judge::circuit_breaker: failure_threshold: must be at least 1"}},
		{name: "bad_open_duration", wantErr: []string{"judge::circuit_breaker: open_duration: must be at least 100ms, got 0s"}},
		{name: "bad_auth_retry_interval", wantErr: []string{"judge::circuit_breaker: auth_retry_interval: must be at least 100ms, got -1s"}},
		{name: "bad_retry_attempts", wantErr: []string{"judge::retry: max_attempts: must be at least 1"}},
		{name: "bad_retry_backoff", wantErr: []string{"judge::retry: max_backoff: must be at least initial_backoff (20s), got 1s"}},
		{name: "bad_cache_size", wantErr: []string{"cache: size: must be at least 1"}},
		{name: "bad_cache_ttl", wantErr: []string{"cache: ttl: must be at least 1s, got 0s"}},
		{name: "bad_max_input_chars", wantErr: []string{"max_input_chars: must not be negative"}},
		{name: "bad_max_context_chunks", wantErr: []string{"max_context_chunks: must be between 1 and 100, got 0"}},
		{name: "too_many_context_chunks", wantErr: []string{"max_context_chunks: must be between 1 and 100, got 101"}},
		{name: "bad_instruction_sources", wantErr: []string{`scorers::0: instruction_sources: "assistant"`}},
		{name: "instruction_sources_not_alignment", wantErr: []string{`scorers::0: instruction_sources: only prompt_alignment takes it`}},
		{name: "user_instructions_only", want: userOnly},
		{name: "bad_redaction_builtin", wantErr: []string{`redaction: unknown built-in pattern "ssn"`}},
		{name: "bad_redaction_pattern", wantErr: []string{`redaction: pattern 0 "(unclosed"`}},
		{name: "empty_redaction_pattern", wantErr: []string{`redaction: pattern 0 "x*" matches empty text`}},

		// judge.endpoint and proxy_url: what start would reject.
		{name: "endpoint_no_scheme", wantErr: []string{"judge: endpoint: has no scheme", "(did you mean http://localhost:11434/v1?)"}},
		{name: "endpoint_ip_no_scheme", wantErr: []string{"judge: endpoint: has no scheme", "(did you mean http://127.0.0.1:9/v1?)"}},
		{name: "endpoint_host_no_scheme", wantErr: []string{"judge: endpoint: has no scheme", "(did you mean https://api.openai.com/v1?)"}},
		{name: "endpoint_not_url", wantErr: []string{"judge: endpoint: not an absolute http or https URL"}},
		{name: "endpoint_ftp", wantErr: []string{`judge: endpoint: scheme "ftp" is not supported: want http or https`}},
		{name: "endpoint_no_host", wantErr: []string{"judge: endpoint: not an absolute http or https URL"}},
		{name: "endpoint_control_char", wantErr: []string{"judge: endpoint: contains a control character at byte 22"}},
		{
			name:     "endpoint_password_no_scheme",
			wantErr:  []string{"judge: endpoint: has no scheme", "(did you mean http://user:xxxxx@judge.internal:8000/v1?)"},
			notInErr: []string{"s3cret-pw", "s3cret-key"},
		},
		{name: "endpoint_chat_completions", want: withJudge(" http://judge.internal:8000/v1/chat/completions/ ")},
		{name: "bad_proxy_url", wantErr: []string{"judge: proxy_url: not an absolute URL"}, notInErr: []string{"no-scheme-proxy"}},

		// Upper bounds.
		{name: "huge_queue_size", wantErr: []string{"queue_size: must be between 1 and 100000, got 1000000000"}},
		{name: "huge_concurrency", wantErr: []string{"judge: max_concurrency: must be between 1 and 1000, got 1000000"}},
		{name: "largest_bounds", want: largest},

		// Durations without a unit.
		{name: "max_wait_no_unit", wantErr: []string{`max_wait: must be at least 1ms, got 30ns; a number without a unit is read as nanoseconds (write e.g. "30s")`}},
		{name: "judge_timeout_no_unit", wantErr: []string{"judge: timeout: must be at least 100ms, got 20ns; a number without a unit", "(or 0 for no HTTP timeout)"}},
		{name: "judge_timeout_zero", want: noTimeout},
		{name: "cache_ttl_no_unit", wantErr: []string{`cache: ttl: must be at least 1s, got 3.6µs; a number without a unit is read as nanoseconds (write e.g. "3600s")`}},
		{name: "open_duration_no_unit", wantErr: []string{"judge::circuit_breaker: open_duration: must be at least 100ms, got 30ns; a number without a unit"}},
		{name: "auth_retry_interval_no_unit", wantErr: []string{"judge::circuit_breaker: auth_retry_interval: must be at least 100ms, got 300ns; a number without a unit"}},
		{name: "initial_backoff_no_unit", wantErr: []string{"judge::retry: initial_backoff: must be at least 1ms, got 500ns; a number without a unit"}},
		{name: "max_backoff_no_unit", wantErr: []string{"judge::retry: max_backoff: must be at least 1ms, got 10ns; a number without a unit"}},
		{name: "max_retry_after_no_unit", wantErr: []string{"judge::retry: max_retry_after: must be at least 1ms, got 30ns; a number without a unit"}},
		{name: "smallest_durations", want: smallest},
		{name: "short_timeout", wantErr: []string{"judge: timeout: must be at least 100ms, got 50ms (or 0 for no HTTP timeout)"}, notInErr: []string{"without a unit"}},

		// Unknown keys.
		{name: "typo_top", wantErr: []string{"max_wiat: unknown key (did you mean max_wait?)"}, once: []string{"max_wiat"}},
		{name: "typo_scorer", wantErr: []string{"scorers::0::threshhold: unknown key (did you mean threshold?)"}, once: []string{"threshhold"}},
		{name: "unknown_judge_key", wantErr: []string{"judge::modle: unknown key (did you mean model?)"}, once: []string{"modle"}},
		{name: "typo_judge_retry", wantErr: []string{"judge::retry::max_atempts: unknown key (did you mean max_attempts?)"}},
		{name: "typo_judge_tls", wantErr: []string{"judge::tls::insecure_skip_verfy: unknown key (did you mean insecure_skip_verify?)"}},
		{name: "typo_judge_keepalive", wantErr: []string{"judge::keepalive::max_idle_con: unknown key (did you mean max_idle_conns?)"}, notInErr: []string{"enabled"}},
		{name: "typo_sampling", wantErr: []string{"sampling::percent: unknown key (did you mean percentage?)"}},
		{name: "far_from_any_key", wantErr: []string{"sampling::zzz: unknown key (known keys here: percentage)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadTestConfig(cm, tt.name)
			if len(tt.wantErr) > 0 {
				require.Error(t, err)
				for _, want := range tt.wantErr {
					assert.Contains(t, err.Error(), want)
				}
				for _, s := range tt.once {
					assert.Equal(t, 1, strings.Count(err.Error(), s), "reported once: %s", err)
				}
				for _, s := range tt.notInErr {
					assert.NotContains(t, err.Error(), s)
				}
				assert.NotContains(t, err.Error(), "llmevalprocessor.", "no Go type names")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, cfg.Redaction.Enabled, cfg.Redaction.compiled != nil, "validation keeps the compiled redactor while redaction is on")
			cfg.Redaction.compiled = nil // built by Validate, not decoded
			assert.Equal(t, tt.want, cfg)
		})
	}
}

// TestRedactorCompiledOnce: start uses the redactor validation compiled;
// validating again (a changed configuration) compiles it anew.
func TestRedactorCompiledOnce(t *testing.T) {
	rc := RedactionConfig{Enabled: true, Builtin: []string{"email"}}
	require.NoError(t, rc.Validate())
	first, err := rc.redactor()
	require.NoError(t, err)
	assert.Same(t, rc.compiled, first, "start reuses what Validate compiled")
	assert.Equal(t, "mail [REDACTED:email]", first.Redact("mail a@b.example"))

	rc.Patterns = []string{"ACCT-[0-9]+"}
	require.NoError(t, rc.Validate())
	second, err := rc.redactor()
	require.NoError(t, err)
	assert.NotSame(t, first, second)
	assert.Equal(t, "[REDACTED:custom]", second.Redact("ACCT-42"))

	rc.Enabled = false
	require.NoError(t, rc.Validate())
	assert.Nil(t, rc.compiled, "nothing is kept while redaction is off")
}

// loadTestConfig decodes and validates the testdata/config.yaml entry
// llm_eval/<name> as the collector does.
func loadTestConfig(cm *confmap.Conf, name string) (*Config, error) {
	cfg := createDefaultConfig().(*Config)
	sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
	if err != nil {
		return nil, err
	}
	if err := sub.Unmarshal(cfg); err != nil {
		return nil, err
	}
	return cfg, confmap.Validate(cfg)
}

func withJudge(endpoint string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Judge.ClientConfig.Endpoint, cfg.Judge.Model = endpoint, "m"
	return cfg
}

// TestJudgeClientKeysDecode checks that the squashed HTTP client keys and
// the judge's own keys decode side by side.
func TestJudgeClientKeysDecode(t *testing.T) {
	cm := resolveConfig(t, filepath.Join("testdata", "config.yaml"))
	cfg, err := loadTestConfig(cm, "client_keys")
	require.NoError(t, err)

	jc := cfg.Judge
	assert.Equal(t, configopaque.String("sk-client-keys"), jc.APIKey)
	assert.Equal(t, "m", jc.Model)
	assert.Equal(t, "json_schema", jc.StructuredOutputs)
	assert.Equal(t, 2, jc.Retry.MaxAttempts)
	assert.Equal(t, openai.DefaultInitialBackoff, jc.Retry.InitialBackoff, "keys left out keep their defaults")
	assert.Equal(t, defaultMaxConcurrency, jc.MaxConcurrency)

	cc := jc.ClientConfig
	assert.Equal(t, "https://judge.internal/v1", cc.Endpoint)
	assert.Equal(t, 15*time.Second, cc.Timeout)
	assert.Equal(t, "http://proxy.internal:3128", cc.ProxyURL)
	assert.Equal(t, 4096, cc.ReadBufferSize)
	assert.Equal(t, 8192, cc.WriteBufferSize)
	assert.Equal(t, 16, cc.MaxConnsPerHost)
	assert.Equal(t, configopaque.MapList{{Name: "api-key", Value: "azure-secret"}}, cc.Headers)
	assert.True(t, cc.TLS.InsecureSkipVerify)
	assert.Equal(t, "1.3", cc.TLS.MinVersion)
	idle, maxIdle := keepalive(cc)
	assert.Equal(t, 45*time.Second, idle)
	assert.Equal(t, 50, maxIdle)
}

// keepalive returns the idle timeout and idle connection cap ToClient uses;
// zero when keep-alives are off.
func keepalive(cc confighttp.ClientConfig) (time.Duration, int) {
	if ka := cc.Keepalive.Get(); ka != nil {
		return ka.IdleConnTimeout, ka.MaxIdleConns
	}
	return 0, 0
}

// TestValidateErrorAsCollectorPrintsIt checks the full key path of a
// nested error when the collector validates its whole configuration:
// confmap joins the path with "::" and ends it with ": ".
func TestValidateErrorAsCollectorPrintsIt(t *testing.T) {
	cm := resolveConfig(t, filepath.Join("testdata", "config.yaml"))
	tests := []struct {
		name string
		want string
	}{
		{name: "bad_retry_attempts", want: "processors::llm_eval/bad_retry_attempts::judge::retry: max_attempts: must be at least 1, got 0"},
		{name: "endpoint_no_scheme", want: "processors::llm_eval/endpoint_no_scheme::judge: endpoint: has no scheme"},
		{name: "bad_scale_inf", want: "processors::llm_eval/bad_scale_inf::scorers::0: scale: must be a finite positive number"},
		{name: "max_wait_no_unit", want: "processors::llm_eval/max_wait_no_unit: max_wait: must be at least 1ms"},
		{name: "bad_context_sources", want: `processors::llm_eval/bad_context_sources::scorers::0: context_sources[1]: "prompt" is not one of trace, tool_messages, system; context_sources[2]: duplicate source "trace"`},
		{name: "empty_context_sources", want: "processors::llm_eval/empty_context_sources::scorers::0: context_sources: must name at least one of trace, tool_messages, system"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			id := component.NewIDWithName(metadata.Type, tt.name)
			sub, err := cm.Sub(id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			// The shape of otelcol.Config that matters for the path.
			collector := struct {
				Processors map[component.ID]component.Config `mapstructure:"processors"`
			}{Processors: map[component.ID]component.Config{id: cfg}}
			err = confmap.Validate(&collector)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestDefaultConfig(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	assert.Equal(t, 30*time.Second, cfg.Judge.ClientConfig.Timeout)
	assert.Equal(t, 8, cfg.Judge.MaxConcurrency)
	assert.Equal(t, "auto", cfg.Judge.StructuredOutputs)
	assert.Equal(t, 100.0, cfg.Sampling.Percentage)
	assert.Equal(t, 30*time.Second, cfg.MaxWait)
	assert.Equal(t, 1000, cfg.QueueSize)
	assert.Equal(t, 0, cfg.Judge.RequestsPerMinute, "unlimited")
	assert.Equal(t, 0, cfg.Judge.TokensPerMinute, "unlimited")
	assert.Equal(t, CircuitBreakerConfig{FailureThreshold: 5, OpenDuration: 30 * time.Second, AuthRetryInterval: 5 * time.Second}, cfg.Judge.CircuitBreaker)
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
	err := confmap.Validate(cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "judge: endpoint: must be set")
	assert.Contains(t, err.Error(), "; model: must be set", "one line per section, each problem named")
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
