package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"time"
	"unicode"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/confmap"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/configcheck"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/openai"
	"github.com/llm-eval/llm_eval/scoring/redact"
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
	// MaxContextChunks bounds the judge requests hallucination spends on
	// one evaluation's context: a context longer than max_input_chars is
	// judged in chunks of at most max_input_chars characters, at most this
	// many (default 4, 1 to 100). Beyond it the result is truncated.
	MaxContextChunks int `mapstructure:"max_context_chunks"`
	// Redaction removes personal data from what is sent to the judge.
	Redaction RedactionConfig `mapstructure:"redaction"`
	// LateResults says which results that finish after their span left
	// become child spans: verdicts (default: pass, fail, not_scorable),
	// all (errors too) or none. The others are only counted.
	LateResults string `mapstructure:"late_results"`
	// LogEvents bounds the joining of per-message GenAI log events in a
	// logs pipeline.
	LogEvents LogEventsConfig `mapstructure:"log_events"`
	// TraceContext sizes the per-trace index of retrieved documents and
	// tool results joined into generations' cases (the trace join of the subjects).
	TraceContext TraceContextConfig `mapstructure:"trace_context"`
	// Conversation groups the spans of a conversation for the scorers
	// that target conversations (config_conversation.go).
	Conversation ConversationConfig `mapstructure:"conversation"`
	// SpanFilterConfig (include, exclude) limits which generation spans
	// are scored, by resource and span attributes (config_context.go).
	SpanFilterConfig `mapstructure:",squash"`
	// Storage names a storage extension (file_storage) that keeps held
	// spans, log calls and their finished results across a crash; nil
	// keeps them in memory only (internal/persistence).
	Storage *component.ID `mapstructure:"storage"`
	// StorageCheckTimeout bounds the check of file_storage's file at
	// start, before the storage library opens it (default 1m). A check
	// that does not finish in time leaves the file in place and llm_eval
	// runs without storage until the next start.
	StorageCheckTimeout time.Duration `mapstructure:"storage_check_timeout"`

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

	// compiled is the redactor Validate built, so that start does not
	// compile the patterns a second time.
	compiled *redact.Redactor
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
func (rc RetryConfig) policy() openai.RetryPolicy {
	return openai.RetryPolicy{
		MaxAttempts:    rc.MaxAttempts,
		InitialBackoff: rc.InitialBackoff,
		MaxBackoff:     rc.MaxBackoff,
		MaxRetryAfter:  rc.MaxRetryAfter,
	}
}

// CircuitBreakerConfig tunes the breaker in front of the judge endpoint.
type CircuitBreakerConfig struct {
	// FailureThreshold is how many consecutive failed calls open the
	// circuit (default 5).
	FailureThreshold int `mapstructure:"failure_threshold"`
	// OpenDuration is how long an open circuit waits before one probe
	// call (default 30s).
	OpenDuration time.Duration `mapstructure:"open_duration"`
	// AuthRetryInterval is how often evaluation suspended by a rejected
	// API key (401/403) probes the judge with one call (default 5s), so
	// that a key fixed at the provider is used again within seconds.
	AuthRetryInterval time.Duration `mapstructure:"auth_retry_interval"`
}

// JudgeConfig is the judge's HTTP client plus what the model needs.
type JudgeConfig struct {
	// ClientConfig holds the HTTP client keys (endpoint, timeout, headers,
	// tls, proxy_url, keepalive, ...) at the same level as the judge keys.
	ClientConfig confighttp.ClientConfig `mapstructure:",squash"`
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
	// The provider settings (config_provider.go): Azure OpenAI's
	// deployment and API version, and request fields some endpoints need.
	Azure              *AzureConfig   `mapstructure:"azure"`
	OmitTemperature    bool           `mapstructure:"omit_temperature"`
	ReasoningEffort    string         `mapstructure:"reasoning_effort"`
	ChatTemplateKwargs map[string]any `mapstructure:"chat_template_kwargs"`
	ExtraBody          map[string]any `mapstructure:"extra_body"`
	// Prices and Budget put the judge's spend in money (config_spend.go):
	// prices per million tokens by model, for the judge_cost metric, and
	// a cap per hour or day.
	Prices map[string]PriceConfig `mapstructure:"prices"`
	Budget *BudgetConfig          `mapstructure:"budget"`
	// Fallback holds the judge keys of a second judge, used while this
	// one's circuit is open; unset keys are this judge's (config_judges.go).
	Fallback map[string]any `mapstructure:"fallback"`
}

// secrets returns every secret the judge configuration holds: the API key,
// every header value (any header may carry a credential, e.g. Azure's
// api-key), and the password and query values of the endpoint URL.
func (jc JudgeConfig) secrets() []string {
	out := append([]string{string(jc.APIKey)}, redact.URLSecrets(jc.ClientConfig.Endpoint)...)
	for _, v := range jc.ClientConfig.Headers.Iter {
		out = append(out, string(v))
	}
	return out
}

// SamplingConfig selects which traces are scored.
type SamplingConfig struct {
	// Percentage of traces whose generation spans are scored (0..100).
	Percentage float64 `mapstructure:"percentage"`
}

// Bounds of the configuration. The maxima keep a typo from reserving more
// memory than a host has; the minima catch a duration written without a
// unit, which YAML decodes as nanoseconds.
const (
	// maxQueueSize bounds queue_size: the work queue is preallocated at
	// queue_size × scorers entries, and every held span keeps its span
	// and extracted text in memory.
	maxQueueSize = 100_000
	// maxConcurrency bounds judge.max_concurrency: every worker is a
	// goroutine and, while busy, an open connection to the judge.
	maxConcurrency = 1000
	// minJudgeWait bounds judge.timeout and the breaker durations from
	// below: no judge answers faster.
	minJudgeWait = 100 * time.Millisecond
	// minWait bounds max_wait and the retry waits from below. A max_wait
	// of a few milliseconds is a choice (forward at once, results follow
	// as late spans); nanoseconds are a missing unit.
	minWait = time.Millisecond
	// minCacheTTL bounds cache.ttl from below.
	minCacheTTL = time.Second
	// The likely-max durations are the longest a setting is plausibly
	// meant to be: a number written without a unit is suggested as
	// seconds up to them, as milliseconds beyond (see unitHint).
	likelyMaxWait        = 10 * time.Minute
	likelyMaxJudgeWait   = 10 * time.Minute
	likelyMaxBreakerWait = time.Hour
	likelyMaxBackoff     = time.Minute
	likelyMaxRetryWait   = 10 * time.Minute
	likelyMaxCacheTTL    = 7 * 24 * time.Hour
)

var (
	_ confmap.Unmarshaler = (*Config)(nil)
	_ confmap.Unmarshaler = (*ScorerConfig)(nil)
	_ confmap.Validator   = (*Config)(nil)
	_ confmap.Validator   = (*JudgeConfig)(nil)
	_ confmap.Validator   = (*CircuitBreakerConfig)(nil)
	_ confmap.Validator   = (*RetryConfig)(nil)
	_ confmap.Validator   = (*SamplingConfig)(nil)
	_ confmap.Validator   = (*ScorerConfig)(nil)
	_ confmap.Validator   = (*CacheConfig)(nil)
	_ confmap.Validator   = (*RedactionConfig)(nil)
	_ confmap.Validator   = (*ConversationConfig)(nil)
)

// Unmarshal rejects keys the processor does not know, naming each by its
// YAML path with the closest known key, before decoding. Decoding alone
// would name Go types, report one typo once per list entry, and let typos
// under judge pass silently (the squashed HTTP client settings are decoded
// leniently).
func (cfg *Config) Unmarshal(conf *confmap.Conf) error {
	raw := conf.ToStringMap()
	var errs []error
	if scorers, ok := raw["scorers"]; ok {
		// The typed entries' sections are checked by type; the rest of
		// every entry by its fields.
		raw["scorers"], errs = checkScorerSections("scorers", scorers)
	}
	if err := configcheck.UnknownKeys(raw, reflect.TypeFor[Config]()); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if err := conf.Unmarshal(cfg); err != nil {
		return err
	}
	hideRawSecrets(cfg.Judge.Fallback)
	for _, sc := range cfg.Scorers {
		hideRawSecrets(sc.Judge)
	}
	return nil
}

// Validate checks the top-level keys and what spans several sections. The
// sections validate themselves; the collector (confmap.Validate) prefixes
// their errors with their key path.
func (cfg *Config) Validate() error {
	var errs []error
	if err := configcheck.CheckMinDuration(cfg.MaxWait, minWait, likelyMaxWait); err != nil {
		errs = append(errs, fmt.Errorf("max_wait: %w", err))
	}
	if cfg.QueueSize < 1 || cfg.QueueSize > maxQueueSize {
		errs = append(errs, fmt.Errorf("queue_size: must be between 1 and %d, got %d", maxQueueSize, cfg.QueueSize))
	}
	switch cfg.LateResults {
	case lateResultsVerdicts, lateResultsAll, lateResultsNone:
	default:
		errs = append(errs, fmt.Errorf("late_results: %w", configcheck.NotOneOf(cfg.LateResults, lateResultsVerdicts, lateResultsAll, lateResultsNone)))
	}
	if cfg.StorageCheckTimeout <= 0 {
		errs = append(errs, fmt.Errorf("storage_check_timeout: must be positive, got %s", cfg.StorageCheckTimeout))
	}
	if cfg.MaxInputChars < 0 {
		errs = append(errs, fmt.Errorf("max_input_chars: must not be negative, got %d", cfg.MaxInputChars))
	}
	if cfg.MaxContextChunks < 1 || cfg.MaxContextChunks > maxContextChunks {
		errs = append(errs, fmt.Errorf("max_context_chunks: must be between 1 and %d, got %d", maxContextChunks, cfg.MaxContextChunks))
	}
	if _, err := cfg.SpanFilterConfig.compile(); err != nil {
		errs = append(errs, err)
	}
	if len(cfg.Scorers) == 0 {
		errs = append(errs, errors.New("scorers: at least one scorer must be configured"))
	}
	errs = append(errs, cfg.validateJudges()...)
	seen := make(map[string]bool, len(cfg.Scorers))
	for i, sc := range cfg.Scorers {
		if seen[sc.Name] && sc.Name != "" {
			errs = append(errs, fmt.Errorf("scorers::%d::name: duplicate scorer %q", i, sc.Name))
		}
		seen[sc.Name] = true
	}
	return configcheck.JoinFields(errs)
}

// Validate checks what the judge client would reject at start.
func (jc *JudgeConfig) Validate() error {
	var errs []error
	if err := checkEndpoint(jc.ClientConfig.Endpoint); err != nil {
		errs = append(errs, fmt.Errorf("endpoint: %w", err))
	}
	if jc.ClientConfig.ProxyURL != "" {
		if _, err := url.ParseRequestURI(jc.ClientConfig.ProxyURL); err != nil {
			// The parse error quotes the URL, which may carry a password.
			errs = append(errs, errors.New("proxy_url: not an absolute URL"))
		}
	}
	if jc.ClientConfig.Timeout != 0 {
		if err := configcheck.CheckMinDuration(jc.ClientConfig.Timeout, minJudgeWait, likelyMaxJudgeWait); err != nil {
			errs = append(errs, fmt.Errorf("timeout: %w (or 0 for no HTTP timeout)", err))
		}
	}
	if strings.TrimSpace(jc.model()) == "" {
		errs = append(errs, errors.New("model: must be set"))
	}
	errs = append(errs, jc.validateProvider()...)
	errs = append(errs, jc.validateSpend()...)
	switch jc.StructuredOutputs {
	case "", structuredOutputsAuto, structuredOutputsJSONSchema, structuredOutputsJSONObject, structuredOutputsOff:
	default:
		errs = append(errs, fmt.Errorf("structured_outputs: %w", configcheck.NotOneOf(jc.StructuredOutputs, structuredOutputsAuto, structuredOutputsJSONSchema, structuredOutputsJSONObject, structuredOutputsOff)))
	}
	if jc.MaxConcurrency < 1 || jc.MaxConcurrency > maxConcurrency {
		errs = append(errs, fmt.Errorf("max_concurrency: must be between 1 and %d, got %d", maxConcurrency, jc.MaxConcurrency))
	}
	if jc.RequestsPerMinute < 0 {
		errs = append(errs, fmt.Errorf("requests_per_minute: must not be negative, got %d", jc.RequestsPerMinute))
	}
	if jc.TokensPerMinute < 0 {
		errs = append(errs, fmt.Errorf("tokens_per_minute: must not be negative, got %d", jc.TokensPerMinute))
	}
	if jc.MaxTokens < 0 {
		errs = append(errs, fmt.Errorf("max_tokens: must not be negative, got %d", jc.MaxTokens))
	}
	return configcheck.JoinFields(errs)
}

// Validate checks the breaker settings.
func (cb *CircuitBreakerConfig) Validate() error {
	var errs []error
	if cb.FailureThreshold < 1 {
		errs = append(errs, fmt.Errorf("failure_threshold: must be at least 1, got %d", cb.FailureThreshold))
	}
	if err := configcheck.CheckMinDuration(cb.OpenDuration, minJudgeWait, likelyMaxBreakerWait); err != nil {
		errs = append(errs, fmt.Errorf("open_duration: %w", err))
	}
	if err := configcheck.CheckMinDuration(cb.AuthRetryInterval, minJudgeWait, likelyMaxBreakerWait); err != nil {
		errs = append(errs, fmt.Errorf("auth_retry_interval: %w", err))
	}
	return configcheck.JoinFields(errs)
}

// Validate checks the retry settings.
func (rc *RetryConfig) Validate() error {
	var errs []error
	if rc.MaxAttempts < 1 {
		errs = append(errs, fmt.Errorf("max_attempts: must be at least 1, got %d", rc.MaxAttempts))
	}
	initialOK := configcheck.CheckMinDuration(rc.InitialBackoff, minWait, likelyMaxBackoff)
	if initialOK != nil {
		errs = append(errs, fmt.Errorf("initial_backoff: %w", initialOK))
	}
	if err := configcheck.CheckMinDuration(rc.MaxBackoff, minWait, likelyMaxRetryWait); err != nil {
		errs = append(errs, fmt.Errorf("max_backoff: %w", err))
	} else if initialOK == nil && rc.MaxBackoff < rc.InitialBackoff {
		errs = append(errs, fmt.Errorf("max_backoff: must be at least initial_backoff (%s), got %s", rc.InitialBackoff, rc.MaxBackoff))
	}
	if err := configcheck.CheckMinDuration(rc.MaxRetryAfter, minWait, likelyMaxRetryWait); err != nil {
		errs = append(errs, fmt.Errorf("max_retry_after: %w", err))
	}
	return configcheck.JoinFields(errs)
}

// Validate checks the sampling percentage.
func (sc *SamplingConfig) Validate() error {
	if p := sc.Percentage; !(p >= 0 && p <= 100) {
		return fmt.Errorf("percentage: must be between 0 and 100, got %v", p)
	}
	return nil
}

// Validate checks the cache settings while the cache is on.
func (cc *CacheConfig) Validate() error {
	if !cc.Enabled {
		return nil
	}
	var errs []error
	if cc.Size < 1 {
		errs = append(errs, fmt.Errorf("size: must be at least 1, got %d", cc.Size))
	}
	if err := configcheck.CheckMinDuration(cc.TTL, minCacheTTL, likelyMaxCacheTTL); err != nil {
		errs = append(errs, fmt.Errorf("ttl: %w", err))
	}
	return configcheck.JoinFields(errs)
}

// Validate compiles the patterns while redaction is on and keeps the
// result for start.
func (rc *RedactionConfig) Validate() error {
	rc.compiled = nil
	if !rc.Enabled {
		return nil
	}
	r, err := redact.New(redact.Config{Builtin: rc.Builtin, Patterns: rc.Patterns})
	if err != nil {
		return err
	}
	rc.compiled = r
	return nil
}

// redactor is the redactor Validate compiled, compiling it now if the
// configuration was not validated; the error names the bad entry.
func (rc *RedactionConfig) redactor() (*redact.Redactor, error) {
	if rc.compiled != nil {
		return rc.compiled, nil
	}
	return redact.New(redact.Config{Builtin: rc.Builtin, Patterns: rc.Patterns})
}

// checkEndpoint reports why endpoint is not what the judge client accepts:
// an absolute http or https URL with a host. Like the client, it ignores
// surrounding spaces, trailing slashes and a /chat/completions suffix. The
// errors never repeat a user name, password or query string.
func checkEndpoint(endpoint string) error {
	base := strings.TrimRight(strings.TrimSpace(endpoint), "/")
	base = strings.TrimSuffix(base, "/chat/completions")
	if base == "" {
		return errors.New("must be set, e.g. https://api.openai.com/v1 or http://localhost:11434/v1")
	}
	if i := strings.IndexFunc(base, unicode.IsControl); i >= 0 {
		return fmt.Errorf("contains a control character at byte %d", i)
	}
	u, err := url.Parse(base)
	if err == nil && u.Host != "" {
		if u.Scheme == "http" || u.Scheme == "https" {
			return nil
		}
		return fmt.Errorf("scheme %q is not supported: want http or https", u.Scheme)
	}
	// The most common slip: an Ollama or vLLM address without its scheme,
	// such as localhost:11434 or 127.0.0.1:8000/v1.
	if !strings.Contains(base, "://") {
		if v, err := url.Parse("http://" + base); err == nil && v.Host != "" && (v.Port() != "" || strings.Contains(v.Hostname(), ".")) {
			if v.Port() == "" {
				v.Scheme = "https" // a named host without a port: a hosted API
			}
			if v.Path == "" {
				v.Path = "/v1"
			}
			return fmt.Errorf("has no scheme: want an absolute http or https URL (did you mean %s?)", redactedURL(v))
		}
	}
	return errors.New("not an absolute http or https URL with a host, e.g. https://api.openai.com/v1 or http://localhost:11434/v1")
}

// redactedURL prints u without its password and query string, either of
// which may hold a secret.
func redactedURL(u *url.URL) string {
	c := *u
	c.RawQuery, c.ForceQuery = "", false
	return c.Redacted()
}

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
	// maxContextChunks bounds max_context_chunks: each chunk is one judge
	// call of up to max_input_chars characters of context.
	maxContextChunks = 100
)

// lateEmitted reports whether late_results mode emits a late result with
// the given label.
func lateEmitted(mode string, label scoring.Label) bool {
	switch mode {
	case lateResultsAll:
		return true
	case lateResultsNone:
		return false
	}
	return label != scoring.LabelError
}

// Which late results become child spans (late_results).
const (
	lateResultsVerdicts = "verdicts"
	lateResultsAll      = "all"
	lateResultsNone     = "none"
)
