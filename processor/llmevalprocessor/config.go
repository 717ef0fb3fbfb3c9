package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/confmap"

	"github.com/llm-eval/llm_eval/scoring"
)

// Structured output modes of the judge.
const (
	structuredOutputsAuto       = "auto"
	structuredOutputsJSONSchema = "json_schema"
	structuredOutputsJSONObject = "json_object"
	structuredOutputsOff        = "off"
)

// Config is the configuration of the llm_eval processor.
type Config struct {
	// Judge is the OpenAI-compatible endpoint that scores the spans.
	Judge JudgeConfig `mapstructure:"judge"`
	// Sampling decides, per trace, whether its generation spans are scored.
	Sampling SamplingConfig `mapstructure:"sampling"`
	// MaxWait is how long a sampled span is held for its results before it
	// is forwarded with whatever results are in.
	MaxWait time.Duration `mapstructure:"max_wait"`
	// QueueSize is the maximum number of spans with unfinished evaluations.
	// Sampled spans beyond it pass through unscored.
	QueueSize int `mapstructure:"queue_size"`
	// Scorers run on every sampled generation span.
	Scorers []ScorerConfig `mapstructure:"scorers"`
	// Cache reuses results of identical evaluations.
	Cache CacheConfig `mapstructure:"cache"`
	// MaxInputChars caps each text sent to the judge (input, output, each
	// context item and instruction), in characters; 0 means no cap. Cut
	// text ends with a visible marker.
	MaxInputChars int `mapstructure:"max_input_chars"`
	// Redaction removes personal data from what is sent to the judge.
	Redaction RedactionConfig `mapstructure:"redaction"`
	// LateResults says which results that finish after their span left
	// become child spans: verdicts (default: pass, fail, not_scorable),
	// all (errors too) or none. The others are only counted.
	LateResults string `mapstructure:"late_results"`

	_ struct{} // prevent unkeyed literals
}

// CacheConfig sizes the result cache shared by the processor's scorers.
type CacheConfig struct {
	// Enabled turns the cache on (default true).
	Enabled bool `mapstructure:"enabled"`
	// Size is the most results kept (default 10000).
	Size int `mapstructure:"size"`
	// TTL is how long a result is reused (default 1h).
	TTL time.Duration `mapstructure:"ttl"`
}

// RedactionConfig selects what is removed from text before the judge sees it.
type RedactionConfig struct {
	// Enabled turns redaction on (default false).
	Enabled bool `mapstructure:"enabled"`
	// Builtin names built-in patterns: email, phone, payment_card (default all three).
	Builtin []string `mapstructure:"builtin"`
	// Patterns are extra RE2 regular expressions.
	Patterns []string `mapstructure:"patterns"`
}

// RetryConfig tunes the judge client's retries. 400, 401, 403 and 404 are
// never retried; waits are jittered and never outlast the evaluation.
type RetryConfig struct {
	// MaxAttempts counts the first try (default 3; 1 disables retries).
	MaxAttempts int `mapstructure:"max_attempts"`
	// InitialBackoff bounds the first wait (default 500ms).
	InitialBackoff time.Duration `mapstructure:"initial_backoff"`
	// MaxBackoff caps the doubling wait (default 10s).
	MaxBackoff time.Duration `mapstructure:"max_backoff"`
	// MaxRetryAfter caps a server's Retry-After on 429 and 503 (default 30s).
	MaxRetryAfter time.Duration `mapstructure:"max_retry_after"`
}

// policy is the library's retry policy for these settings.
func (rc RetryConfig) policy() scoring.RetryPolicy {
	return scoring.RetryPolicy{
		MaxAttempts:    rc.MaxAttempts,
		InitialBackoff: rc.InitialBackoff,
		MaxBackoff:     rc.MaxBackoff,
		MaxRetryAfter:  rc.MaxRetryAfter,
	}
}

func (rc RetryConfig) validate() []error {
	var errs []error
	if rc.MaxAttempts < 1 {
		errs = append(errs, fmt.Errorf("judge.retry.max_attempts: must be at least 1, got %d", rc.MaxAttempts))
	}
	if rc.InitialBackoff <= 0 {
		errs = append(errs, fmt.Errorf("judge.retry.initial_backoff: must be positive, got %s", rc.InitialBackoff))
	}
	if rc.MaxBackoff < rc.InitialBackoff {
		errs = append(errs, fmt.Errorf("judge.retry.max_backoff: must be at least initial_backoff (%s), got %s", rc.InitialBackoff, rc.MaxBackoff))
	}
	if rc.MaxRetryAfter <= 0 {
		errs = append(errs, fmt.Errorf("judge.retry.max_retry_after: must be positive, got %s", rc.MaxRetryAfter))
	}
	return errs
}

// CircuitBreakerConfig tunes the breaker in front of the judge endpoint.
type CircuitBreakerConfig struct {
	// FailureThreshold is how many consecutive failed calls open the
	// circuit (default 5).
	FailureThreshold int `mapstructure:"failure_threshold"`
	// OpenDuration is how long an open circuit waits before one probe
	// call (default 30s).
	OpenDuration time.Duration `mapstructure:"open_duration"`
	// AuthRetryInterval is how long evaluation stays suspended after the
	// judge rejected the API key (401/403) before one probe (default 5m).
	AuthRetryInterval time.Duration `mapstructure:"auth_retry_interval"`
}

// JudgeConfig is the judge's HTTP client plus what the model needs.
type JudgeConfig struct {
	confighttp.ClientConfig `mapstructure:",squash"`
	JudgeSettings           `mapstructure:",squash"`
}

// JudgeSettings are the judge keys that are not HTTP client settings.
type JudgeSettings struct {
	// APIKey is sent as a bearer token. It is never logged or written out.
	APIKey configopaque.String `mapstructure:"api_key"`
	// Model is the judge model name.
	Model string `mapstructure:"model"`
	// StructuredOutputs is auto, json_schema, json_object or off.
	StructuredOutputs string `mapstructure:"structured_outputs"`
	// MaxConcurrency is the number of evaluations running at once.
	MaxConcurrency int `mapstructure:"max_concurrency"`
	// RequestsPerMinute caps judge calls of all scorers; 0 means unlimited.
	RequestsPerMinute int `mapstructure:"requests_per_minute"`
	// TokensPerMinute caps judge tokens (prompt + completion) of all
	// scorers; 0 means unlimited.
	TokensPerMinute int `mapstructure:"tokens_per_minute"`
	// CircuitBreaker stops calling a failing judge endpoint.
	CircuitBreaker CircuitBreakerConfig `mapstructure:"circuit_breaker"`
	// Retry tunes how a failed call (429, 5xx, connection error, timeout)
	// is tried again.
	Retry RetryConfig `mapstructure:"retry"`
	// MaxTokens caps each judge reply; 0 leaves it to the endpoint.
	MaxTokens int `mapstructure:"max_tokens"`
	// Seed is passed to endpoints that support reproducible sampling.
	Seed *int `mapstructure:"seed"`
}

// SamplingConfig selects which traces are scored.
type SamplingConfig struct {
	// Percentage of traces whose generation spans are scored (0..100).
	Percentage float64 `mapstructure:"percentage"`
}

// ScorerConfig configures one scorer.
type ScorerConfig struct {
	// Name is bias, hallucination, prompt_alignment or checks.
	Name string `mapstructure:"name"`
	// Threshold decides pass or fail; nil keeps the scorer's default.
	Threshold *float64 `mapstructure:"threshold"`
	// Scale is the maximum score (default 1).
	Scale float64 `mapstructure:"scale"`
	// StrictMode makes the score binary.
	StrictMode bool `mapstructure:"strict_mode"`
	// IncludeReason asks for a reason with every score (default true).
	IncludeReason bool `mapstructure:"include_reason"`
	// ReasonMode is llm (an extra judge call) or summary (built from the verdicts).
	ReasonMode string `mapstructure:"reason_mode"`
	// Instructions are the rules prompt_alignment checks.
	Instructions []string `mapstructure:"instructions"`
	// UseSystemInstructions uses the span's system instructions when
	// Instructions is empty (default true).
	UseSystemInstructions bool `mapstructure:"use_system_instructions"`

	// Criteria makes this entry a custom criteria scorer (G-Eval style)
	// named Name: what a good response does, in plain words.
	Criteria string `mapstructure:"criteria"`
	// Steps are optional evaluation steps for a criteria scorer.
	Steps []string `mapstructure:"steps"`
	// Fields are what a criteria scorer's judge sees: input, output,
	// context, instructions (default input and output).
	Fields []string `mapstructure:"fields"`
	// Verdict is score (0-10 points, scaled; default) or binary (yes/no)
	// for a criteria scorer.
	Verdict string `mapstructure:"verdict"`

	// Rules are the deterministic rules of the checks scorer (no judge call).
	Rules []scoring.CheckRule `mapstructure:"rules"`
}

// isCriteria reports whether the entry is a custom criteria scorer: any
// name other than a built-in scorer's or checks.
func (sc *ScorerConfig) isCriteria() bool {
	return !slices.Contains(scoring.Names(), sc.Name) && sc.Name != scoring.Checks
}

// criteriaConfig maps the entry onto the library's criteria settings.
func (sc *ScorerConfig) criteriaConfig() scoring.CriteriaConfig {
	cfg := scoring.CriteriaConfig{Name: sc.Name, Criteria: sc.Criteria, Steps: sc.Steps, Verdict: scoring.CriteriaVerdict(sc.Verdict)}
	for _, f := range sc.Fields {
		cfg.Fields = append(cfg.Fields, scoring.Field(f))
	}
	return cfg
}

var (
	_ confmap.Validator   = (*Config)(nil)
	_ confmap.Unmarshaler = (*ScorerConfig)(nil)
	_ confmap.Unmarshaler = (*JudgeConfig)(nil)
)

// Unmarshal decodes the judge section. It is needed because the embedded
// confighttp.ClientConfig has its own Unmarshal, which would otherwise be
// promoted and decode the client settings only, dropping model, api_key and
// the rest.
func (jc *JudgeConfig) Unmarshal(conf *confmap.Conf) error {
	ownKeys := mapstructureKeys(reflect.TypeFor[JudgeSettings]())
	clientKeys := mapstructureKeys(reflect.TypeFor[confighttp.ClientConfig]())
	ownMap, clientMap := map[string]any{}, map[string]any{}
	var unknown []string
	for k, v := range conf.ToStringMap() {
		switch {
		case ownKeys[k]:
			ownMap[k] = v
		case clientKeys[k]:
			clientMap[k] = v
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return fmt.Errorf("judge: unknown keys %q", unknown)
	}
	if err := confmap.NewFromStringMap(ownMap).Unmarshal(&jc.JudgeSettings); err != nil {
		return err
	}
	return jc.ClientConfig.Unmarshal(confmap.NewFromStringMap(clientMap))
}

// mapstructureKeys lists the top-level keys a struct decodes, following
// squashed embedded structs.
func mapstructureKeys(t reflect.Type) map[string]bool {
	keys := map[string]bool{}
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		if name == "-" {
			continue
		}
		if name == "" && strings.Contains(opts, "squash") && f.Type.Kind() == reflect.Struct {
			maps.Copy(keys, mapstructureKeys(f.Type))
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		keys[name] = true
	}
	return keys
}

// defaultScorerConfig is what an entry of the scorers list starts from.
func defaultScorerConfig(name string) ScorerConfig {
	return ScorerConfig{
		Name:                  name,
		Scale:                 1,
		IncludeReason:         true,
		ReasonMode:            string(scoring.ReasonLLM),
		UseSystemInstructions: true,
	}
}

// Unmarshal applies the per-scorer defaults before decoding, so that keys a
// list entry leaves out keep their defaults instead of Go zero values.
func (sc *ScorerConfig) Unmarshal(conf *confmap.Conf) error {
	*sc = defaultScorerConfig("")
	if err := conf.Unmarshal(sc); err != nil {
		return fmt.Errorf("decoding scorer: %w", err)
	}
	return nil
}

// Validate checks the configuration; every error names the offending key.
func (cfg *Config) Validate() error {
	var errs []error
	if cfg.Judge.Endpoint == "" {
		errs = append(errs, errors.New("judge.endpoint: must be set"))
	}
	if cfg.Judge.Model == "" {
		errs = append(errs, errors.New("judge.model: must be set"))
	}
	switch cfg.Judge.StructuredOutputs {
	case "", structuredOutputsAuto, structuredOutputsJSONSchema, structuredOutputsJSONObject, structuredOutputsOff:
	default:
		errs = append(errs, fmt.Errorf("judge.structured_outputs: %q is not one of auto, json_schema, json_object, off", cfg.Judge.StructuredOutputs))
	}
	if cfg.Judge.MaxConcurrency < 1 {
		errs = append(errs, fmt.Errorf("judge.max_concurrency: must be at least 1, got %d", cfg.Judge.MaxConcurrency))
	}
	if cfg.Judge.RequestsPerMinute < 0 {
		errs = append(errs, fmt.Errorf("judge.requests_per_minute: must not be negative, got %d", cfg.Judge.RequestsPerMinute))
	}
	if cfg.Judge.TokensPerMinute < 0 {
		errs = append(errs, fmt.Errorf("judge.tokens_per_minute: must not be negative, got %d", cfg.Judge.TokensPerMinute))
	}
	errs = append(errs, cfg.Judge.CircuitBreaker.validate()...)
	errs = append(errs, cfg.Judge.Retry.validate()...)
	if cfg.Judge.MaxTokens < 0 {
		errs = append(errs, fmt.Errorf("judge.max_tokens: must not be negative, got %d", cfg.Judge.MaxTokens))
	}
	if cfg.Judge.Timeout < 0 {
		errs = append(errs, fmt.Errorf("judge.timeout: must not be negative, got %s", cfg.Judge.Timeout))
	}
	if p := cfg.Sampling.Percentage; p < 0 || p > 100 || p != p {
		errs = append(errs, fmt.Errorf("sampling.percentage: must be between 0 and 100, got %v", p))
	}
	if cfg.MaxWait <= 0 {
		errs = append(errs, fmt.Errorf("max_wait: must be positive, got %s", cfg.MaxWait))
	}
	if cfg.QueueSize < 1 {
		errs = append(errs, fmt.Errorf("queue_size: must be at least 1, got %d", cfg.QueueSize))
	}
	switch cfg.LateResults {
	case lateResultsVerdicts, lateResultsAll, lateResultsNone:
	default:
		errs = append(errs, fmt.Errorf("late_results: %q is not one of verdicts, all, none", cfg.LateResults))
	}
	if cfg.MaxInputChars < 0 {
		errs = append(errs, fmt.Errorf("max_input_chars: must not be negative, got %d", cfg.MaxInputChars))
	}
	if cfg.Cache.Enabled {
		if cfg.Cache.Size < 1 {
			errs = append(errs, fmt.Errorf("cache.size: must be at least 1, got %d", cfg.Cache.Size))
		}
		if cfg.Cache.TTL <= 0 {
			errs = append(errs, fmt.Errorf("cache.ttl: must be positive, got %s", cfg.Cache.TTL))
		}
	}
	if cfg.Redaction.Enabled {
		if _, err := cfg.Redaction.redactor(); err != nil {
			errs = append(errs, fmt.Errorf("redaction: %w", err))
		}
	}
	if len(cfg.Scorers) == 0 {
		errs = append(errs, errors.New("scorers: at least one scorer must be configured"))
	}
	seen := make(map[string]bool, len(cfg.Scorers))
	for i, sc := range cfg.Scorers {
		if err := sc.validate(); err != nil {
			errs = append(errs, fmt.Errorf("scorers[%d]: %w", i, err))
		}
		if seen[sc.Name] {
			errs = append(errs, fmt.Errorf("scorers[%d].name: duplicate scorer %q", i, sc.Name))
		}
		seen[sc.Name] = true
	}
	return errors.Join(errs...)
}

func (sc *ScorerConfig) validate() error {
	var errs []error
	switch {
	case sc.Name == "":
		errs = append(errs, errors.New("name: must be set"))
	case sc.Name == scoring.Checks:
		// NewChecks names the rule and key, as in rules::0::pattern.
		if _, err := scoring.NewChecks(sc.Rules, scorerOptions(*sc)); err != nil {
			errs = append(errs, err)
		}
	case sc.isCriteria() && strings.TrimSpace(sc.Criteria) == "":
		errs = append(errs, fmt.Errorf("criteria: must be set: %q is not a built-in scorer (bias, hallucination, prompt_alignment), so it is a custom criteria scorer", sc.Name))
	case sc.isCriteria():
		// The library's errors start with the key (name, criteria,
		// steps, fields, verdict), which is also the YAML key.
		if err := sc.criteriaConfig().Validate(); err != nil {
			errs = append(errs, err)
		}
	case sc.Criteria != "" || len(sc.Steps) > 0 || len(sc.Fields) > 0 || sc.Verdict != "":
		errs = append(errs, fmt.Errorf("criteria: only custom criteria scorers take criteria, steps, fields and verdict; %q is a built-in scorer", sc.Name))
	}
	if sc.Name != scoring.Checks && len(sc.Rules) > 0 {
		errs = append(errs, fmt.Errorf("rules: only the %s scorer takes rules", scoring.Checks))
	}
	if !(sc.Scale > 0) {
		errs = append(errs, fmt.Errorf("scale: must be positive, got %v", sc.Scale))
	}
	if sc.Threshold != nil {
		if t := *sc.Threshold; !(t >= 0 && t <= sc.Scale) {
			errs = append(errs, fmt.Errorf("threshold: must be between 0 and scale (%v), got %v", sc.Scale, t))
		}
	}
	switch scoring.ReasonMode(sc.ReasonMode) {
	case scoring.ReasonLLM, scoring.ReasonSummary:
	default:
		errs = append(errs, fmt.Errorf("reason_mode: %q is not one of llm, summary", sc.ReasonMode))
	}
	for j, in := range sc.Instructions {
		if in == "" {
			errs = append(errs, fmt.Errorf("instructions[%d]: must not be empty", j))
		}
	}
	if sc.Name == scoring.PromptAlignment && len(sc.Instructions) == 0 && !sc.UseSystemInstructions {
		errs = append(errs, errors.New("instructions: prompt_alignment needs instructions, or use_system_instructions: true to take them from the span"))
	}
	return errors.Join(errs...)
}

func (cb CircuitBreakerConfig) validate() []error {
	var errs []error
	if cb.FailureThreshold < 1 {
		errs = append(errs, fmt.Errorf("judge.circuit_breaker.failure_threshold: must be at least 1, got %d", cb.FailureThreshold))
	}
	if cb.OpenDuration <= 0 {
		errs = append(errs, fmt.Errorf("judge.circuit_breaker.open_duration: must be positive, got %s", cb.OpenDuration))
	}
	if cb.AuthRetryInterval <= 0 {
		errs = append(errs, fmt.Errorf("judge.circuit_breaker.auth_retry_interval: must be positive, got %s", cb.AuthRetryInterval))
	}
	return errs
}

// redactor compiles the redaction settings; the error names the bad entry.
func (rc RedactionConfig) redactor() (*scoring.Redactor, error) {
	r, err := scoring.NewRedactor(scoring.RedactionConfig{Builtin: rc.Builtin, Patterns: rc.Patterns})
	if err != nil {
		// The library prefixes "redaction: "; the caller adds the key.
		return nil, errors.New(strings.TrimPrefix(err.Error(), "redaction: "))
	}
	return r, nil
}
