package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/confmap"

	"github.com/llm-eval/llm_eval/internal/duration"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/configcheck"
	"github.com/llm-eval/llm_eval/scoring/guard"
	"github.com/llm-eval/llm_eval/scoring/openai"
	"github.com/llm-eval/llm_eval/scoring/redact"
)

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
	// The provider settings (validateProvider, providerConfig): Azure OpenAI's
	// deployment and API version, and request fields some endpoints need.
	Azure              *AzureConfig   `mapstructure:"azure"`
	OmitTemperature    bool           `mapstructure:"omit_temperature"`
	ReasoningEffort    string         `mapstructure:"reasoning_effort"`
	ChatTemplateKwargs map[string]any `mapstructure:"chat_template_kwargs"`
	ExtraBody          map[string]any `mapstructure:"extra_body"`
	// Prices and Budget put the judge's spend in money (validateSpend):
	// prices per million tokens by model, for the judge_cost metric, and
	// a cap per hour or day.
	Prices map[string]PriceConfig `mapstructure:"prices"`
	Budget *BudgetConfig          `mapstructure:"budget"`
	// Fallback holds the judge keys of a second judge, used while this
	// one's circuit is open; unset keys are this judge's (overlayJudge).
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
	errs = append(errs, jc.validateClientDurations()...)
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

// validateClientDurations checks the durations of the HTTP client keys,
// for each of which 0 means confighttp's default.
func (jc *JudgeConfig) validateClientDurations() []error {
	type check struct {
		key       string
		d, lowest time.Duration
		zero      string
	}
	cc := jc.ClientConfig
	checks := []check{
		{"timeout", cc.Timeout, minJudgeWait, "0 for no HTTP timeout"},
		{"http2_read_idle_timeout", cc.HTTP2ReadIdleTimeout, minWait, "0 for no health check"},
		{"http2_ping_timeout", cc.HTTP2PingTimeout, minWait, "0 for the default, 15s"},
	}
	if ka := cc.Keepalive.Get(); ka != nil {
		checks = append(checks, check{"keepalive::idle_conn_timeout", ka.IdleConnTimeout, minWait, "0 for no limit"})
	}
	var errs []error
	for _, c := range checks {
		if err := duration.ZeroOrAtLeast(c.d, c.lowest, likelyMaxJudgeWait, c.zero); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.key, err))
		}
	}
	return errs
}

// Structured output modes of the judge.
const (
	structuredOutputsAuto       = "auto"
	structuredOutputsJSONSchema = "json_schema"
	structuredOutputsJSONObject = "json_object"
	structuredOutputsOff        = "off"
)

// Bounds of the judge settings, as those of the configuration (config.go):
// the maxima keep a typo from reserving more than a host has, the minima
// catch a duration written without a unit.
const (
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
	// The likely-max durations are the longest a setting is plausibly
	// meant to be: a number written without a unit is suggested as
	// seconds up to them, as milliseconds beyond (see duration.AtLeast).
	// likelyMaxWait serves max_wait and the other waits of every section.
	likelyMaxWait        = 10 * time.Minute
	likelyMaxJudgeWait   = 10 * time.Minute
	likelyMaxBreakerWait = time.Hour
	likelyMaxBackoff     = time.Minute
	likelyMaxRetryWait   = 10 * time.Minute
)

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

// Validate checks the retry settings.
func (rc *RetryConfig) Validate() error {
	var errs []error
	if rc.MaxAttempts < 1 {
		errs = append(errs, fmt.Errorf("max_attempts: must be at least 1, got %d", rc.MaxAttempts))
	}
	initialOK := duration.AtLeast(rc.InitialBackoff, minWait, likelyMaxBackoff)
	if initialOK != nil {
		errs = append(errs, fmt.Errorf("initial_backoff: %w", initialOK))
	}
	if err := duration.AtLeast(rc.MaxBackoff, minWait, likelyMaxRetryWait); err != nil {
		errs = append(errs, fmt.Errorf("max_backoff: %w", err))
	} else if initialOK == nil && rc.MaxBackoff < rc.InitialBackoff {
		errs = append(errs, fmt.Errorf("max_backoff: must be at least initial_backoff (%s), got %s", rc.InitialBackoff, rc.MaxBackoff))
	}
	if err := duration.AtLeast(rc.MaxRetryAfter, minWait, likelyMaxRetryWait); err != nil {
		errs = append(errs, fmt.Errorf("max_retry_after: %w", err))
	}
	return configcheck.JoinFields(errs)
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

// Validate checks the breaker settings.
func (cb *CircuitBreakerConfig) Validate() error {
	var errs []error
	if cb.FailureThreshold < 1 {
		errs = append(errs, fmt.Errorf("failure_threshold: must be at least 1, got %d", cb.FailureThreshold))
	}
	if err := duration.AtLeast(cb.OpenDuration, minJudgeWait, likelyMaxBreakerWait); err != nil {
		errs = append(errs, fmt.Errorf("open_duration: %w", err))
	}
	if err := duration.AtLeast(cb.AuthRetryInterval, minJudgeWait, likelyMaxBreakerWait); err != nil {
		errs = append(errs, fmt.Errorf("auth_retry_interval: %w", err))
	}
	return configcheck.JoinFields(errs)
}

// AzureConfig selects Azure OpenAI for the judge (docs/providers.md).
type AzureConfig struct {
	// Deployment is the name of the model deployment.
	Deployment string `mapstructure:"deployment"`
	// APIVersion is "v1" for the v1 API ({endpoint}/openai/v1, the
	// deployment sent as the model) or a dated version for the classic
	// deployment path ({endpoint}/openai/deployments/{deployment}/...
	// ?api-version=); default openai.DefaultAzureAPIVersion.
	APIVersion string `mapstructure:"api_version"`
}

// azureAPIVersion matches a dated Azure OpenAI api-version, GA or preview.
var azureAPIVersion = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}(-preview)?$`)

// reasoningEffortWord is one effort value: the providers name theirs with
// lowercase words (minimal, low, medium, high; Ollama's none).
var reasoningEffortWord = regexp.MustCompile(`^[a-z][a-z_-]*$`)

// model is the judge model as results, metrics and prices name it: model,
// or on Azure the deployment when model is unset.
func (jc *JudgeConfig) model() string {
	if jc.Azure != nil {
		return cmp.Or(strings.TrimSpace(jc.Model), strings.TrimSpace(jc.Azure.Deployment))
	}
	return jc.Model
}

// validateProvider checks the provider settings; each error names its key.
func (jc *JudgeConfig) validateProvider() []error {
	var errs []error
	if az := jc.Azure; az != nil {
		if strings.TrimSpace(az.Deployment) == "" {
			errs = append(errs, errors.New("azure::deployment: must be set (the name of the model deployment in Azure OpenAI)"))
		}
		if v := az.APIVersion; v != "" && v != openai.AzureV1 && !azureAPIVersion.MatchString(v) {
			errs = append(errs, fmt.Errorf("azure::api_version: %q is neither %q nor a dated version such as %s or 2025-04-01-preview",
				v, openai.AzureV1, openai.DefaultAzureAPIVersion))
		}
	}
	if jc.ReasoningEffort != "" && !reasoningEffortWord.MatchString(jc.ReasoningEffort) {
		errs = append(errs, fmt.Errorf("reasoning_effort: %q is not one lowercase word (OpenAI: minimal, low, medium, high; Ollama: none to stop thinking)", jc.ReasoningEffort))
	}
	for _, k := range slices.Sorted(maps.Keys(jc.ChatTemplateKwargs)) {
		if _, err := json.Marshal(jc.ChatTemplateKwargs[k]); err != nil {
			errs = append(errs, fmt.Errorf("chat_template_kwargs::%s: not a JSON value: %w", k, err))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(jc.ExtraBody)) {
		if err := openai.CheckExtraBodyField(k, jc.ExtraBody[k]); err != nil {
			errs = append(errs, fmt.Errorf("extra_body::%s: %w", k, err))
		}
	}
	return errs
}

// providerConfig copies the provider settings into the judge client's
// configuration.
func (jc *JudgeConfig) providerConfig(oc *openai.Config) {
	oc.Model = jc.model()
	oc.OmitTemperature = jc.OmitTemperature
	oc.ReasoningEffort = jc.ReasoningEffort
	oc.ChatTemplateKwargs = jc.ChatTemplateKwargs
	oc.ExtraBody = jc.ExtraBody
	if az := jc.Azure; az != nil {
		oc.Azure, oc.AzureDeployment, oc.AzureAPIVersion = true, az.Deployment, az.APIVersion
	}
}

// PriceConfig is what one model's tokens cost, per million tokens, in the
// currency the budget is written in.
type PriceConfig struct {
	Prompt     float64 `mapstructure:"prompt"`
	Completion float64 `mapstructure:"completion"`
}

// BudgetConfig caps the money the judge may spend per hour or per day.
type BudgetConfig struct {
	// Amount is the money per period, in the currency of judge.prices.
	Amount float64 `mapstructure:"amount"`
	// Period is hour or day; periods start on the hour or at midnight UTC.
	Period string `mapstructure:"period"`
}

// Budget periods.
const (
	budgetHour = "hour"
	budgetDay  = "day"
)

// price is the judge model's price, nil when judge.prices has none.
func (jc *JudgeConfig) price() *guard.Price {
	p, ok := jc.Prices[jc.model()]
	if !ok {
		return nil
	}
	return &guard.Price{Prompt: p.Prompt, Completion: p.Completion}
}

// period is the budget period as a duration.
func (b *BudgetConfig) period() time.Duration {
	if b.Period == budgetHour {
		return guard.BudgetHour
	}
	return guard.BudgetDay
}

// validateSpend checks judge.prices and judge.budget; each error names its key.
func (jc *JudgeConfig) validateSpend() []error {
	var errs []error
	for _, model := range slices.Sorted(maps.Keys(jc.Prices)) {
		p := jc.Prices[model]
		if strings.TrimSpace(model) == "" {
			errs = append(errs, fmt.Errorf("prices: a model name is empty"))
		}
		for key, v := range map[string]float64{"prompt": p.Prompt, "completion": p.Completion} {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				errs = append(errs, fmt.Errorf("prices::%s::%s: must be a finite number, 0 or more, got %v", model, key, v))
			}
		}
	}
	b := jc.Budget
	if b == nil {
		return errs
	}
	if !(b.Amount > 0) || math.IsInf(b.Amount, 0) {
		errs = append(errs, fmt.Errorf("budget::amount: must be a positive number (money per %s), got %v", b.Period, b.Amount))
	}
	switch b.Period {
	case budgetHour, budgetDay:
	default:
		errs = append(errs, fmt.Errorf("budget::period: must be hour or day, got %q", b.Period))
	}
	if jc.price() == nil {
		errs = append(errs, fmt.Errorf("budget: judge.prices has no price for the judge model %q, so its spend cannot be counted", jc.model()))
	}
	return errs
}

// judgeKeysOnlyShared are judge keys that only the shared judge takes:
// the worker pool serves every judge.
var judgeKeysOnlyShared = []string{"max_concurrency"}

// overlayJudge returns base with the judge keys of raw laid over it. Not
// carried over from base: its fallback and budget (a budget is one
// judge's), and, when raw names another endpoint host, its api_key,
// headers and auth, so that a credential never goes to a host it was not
// given for. max_concurrency is refused: one worker pool serves every
// judge.
func overlayJudge(base JudgeConfig, raw map[string]any, path string) (JudgeConfig, error) {
	if err := configcheck.UnknownKeys(raw, reflect.TypeFor[JudgeConfig]()); err != nil {
		return JudgeConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	for _, k := range judgeKeysOnlyShared {
		if _, ok := raw[k]; ok {
			return JudgeConfig{}, fmt.Errorf("%s::%s: only the shared judge takes it (one worker pool serves every judge)", path, k)
		}
	}
	if strings.HasSuffix(path, "::fallback") {
		if _, ok := raw["fallback"]; ok {
			return JudgeConfig{}, fmt.Errorf("%s::fallback: a fallback judge has no fallback of its own", path)
		}
	}
	jc := base
	jc.Fallback, jc.Budget = nil, nil
	jc.Prices = maps.Clone(base.Prices)
	jc.ExtraBody = maps.Clone(base.ExtraBody)
	jc.ChatTemplateKwargs = maps.Clone(base.ChatTemplateKwargs)
	if base.Azure != nil {
		az := *base.Azure
		jc.Azure = &az
	}
	if ep, ok := raw["endpoint"].(string); ok && endpointHost(ep) != endpointHost(base.ClientConfig.Endpoint) {
		var fresh confighttp.ClientConfig
		jc.APIKey = ""
		jc.ClientConfig.Headers = fresh.Headers
		jc.ClientConfig.Auth = fresh.Auth
	} else {
		jc.ClientConfig.Headers = slices.Clone(base.ClientConfig.Headers)
	}
	if err := confmap.NewFromStringMap(raw).Unmarshal(&jc); err != nil {
		return JudgeConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	jc.Fallback, _ = raw["fallback"].(map[string]any)
	return jc, nil
}

// judgeProblems are what is wrong with a judge's settings, by section:
// its own keys, then its circuit_breaker and its retry keys. Each error
// starts with the key it is about.
type judgeProblems [3][]error

// judgeSections are the key paths of the sections of judgeProblems.
var judgeSections = [3]string{"", "circuit_breaker", "retry"}

// problems validates every setting of jc.
func (jc *JudgeConfig) problems() judgeProblems {
	return judgeProblems{fieldList(jc.Validate()), fieldList(jc.CircuitBreaker.Validate()), fieldList(jc.Retry.Validate())}
}

// fieldList is the errors configcheck.JoinFields joined, nil for none.
func fieldList(err error) []error {
	if err == nil {
		return nil
	}
	if list, ok := err.(interface{ Unwrap() []error }); ok {
		return list.Unwrap()
	}
	return []error{err}
}

// ownProblems are the problems of a fallback or scorer judge less those
// it inherits: a problem the judge it overlays (base) has too, about a
// key the judge's own block (written, its leaf key paths) does not set.
// That problem is reported once, at base, where the key was written; a
// key the block sets is reported here even when its value is base's, and
// so is a problem base does not have (one key of a pair overridden).
func (p judgeProblems) ownProblems(base judgeProblems, written map[string]bool) judgeProblems {
	var out judgeProblems
	for i, errs := range p {
		for _, err := range errs {
			msg := err.Error()
			key, _, _ := strings.Cut(msg, ": ")
			if judgeSections[i] != "" {
				key = judgeSections[i] + "::" + key
			}
			if !writesKey(written, key) && slices.ContainsFunc(base[i], func(b error) bool { return b.Error() == msg }) {
				continue
			}
			out[i] = append(out[i], err)
		}
	}
	return out
}

// writesKey reports whether the leaf key paths written set key, a key
// inside it, or a section holding it.
func writesKey(written map[string]bool, key string) bool {
	for w := range written {
		if w == key || strings.HasPrefix(w, key+"::") || strings.HasPrefix(key, w+"::") {
			return true
		}
	}
	return false
}

// leafKeys are the key paths of raw's values, "::" between the levels.
func leafKeys(raw map[string]any, prefix string, out map[string]bool) map[string]bool {
	if out == nil {
		out = map[string]bool{}
	}
	for k, v := range raw {
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			leafKeys(m, prefix+k+"::", out)
			continue
		}
		out[prefix+k] = true
	}
	return out
}

// endpointHost is the host and port of an endpoint URL, "" when it has none.
func endpointHost(endpoint string) string {
	u, err := url.Parse(strings.TrimSpace(endpoint))
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Host)
}

// hideRawSecrets turns the secret values of a judge block held as raw
// keys (a fallback, a scorer's judge) into configopaque values, so that
// the configuration prints them as [REDACTED] as it does the shared
// judge's api_key; they decode into the judge settings unchanged.
func hideRawSecrets(raw map[string]any) {
	if raw == nil {
		return
	}
	if v, ok := raw["api_key"].(string); ok {
		raw["api_key"] = configopaque.String(v)
	}
	if h, ok := raw["headers"].(map[string]any); ok {
		for k, v := range h {
			if s, ok := v.(string); ok {
				h[k] = configopaque.String(s)
			}
		}
	}
	if fb, ok := raw["fallback"].(map[string]any); ok {
		hideRawSecrets(fb)
	}
}
