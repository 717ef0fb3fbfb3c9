package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/confmap"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/configcheck"
)

// Names of the judges, as logs and the judge attribute of the circuit
// metrics call them.
const (
	sharedJudgeName = "judge"
	fallbackSuffix  = ".fallback"
)

// judgeKeysOnlyShared are judge keys that only the shared judge takes:
// the worker pool serves every judge.
var judgeKeysOnlyShared = []string{"max_concurrency"}

// namedJudge is one judge the processor talks to, with its settings
// resolved: the shared judge, its fallback, or a scorer's own judge and
// its fallback.
type namedJudge struct {
	name string
	path string // its key path in the configuration, for errors
	cfg  JudgeConfig
	// fallback is the name of the judge used while this one's circuit is
	// open, "" for none.
	fallback string
}

// scorerJudgeName is the name of a scorer's own judge.
func scorerJudgeName(scorer string) string { return "scorers[" + scorer + "].judge" }

// judges resolves every judge of the configuration, the shared one first,
// then each judge's fallback right after it; scorerJudge says which judge
// each scorer asks (by index). A scorer's judge block and a fallback block
// hold judge keys that override those of the judge they start from (the
// shared judge, for a fallback its primary); see overlayJudge for what is
// not carried over. A scorer judge without a fallback block of its own
// falls back to the shared judge's fallback.
func (cfg *Config) judges() (judges []namedJudge, scorerJudge []string, err error) {
	var errs []error
	add := func(name, path string, jc JudgeConfig, fallbackRaw map[string]any, inherited string) {
		judges = append(judges, namedJudge{name: name, path: path, cfg: jc, fallback: inherited})
		i := len(judges) - 1
		if fallbackRaw == nil {
			return
		}
		fb, err := overlayJudge(jc, fallbackRaw, path+"::fallback")
		if err != nil {
			errs = append(errs, err)
			return
		}
		judges[i].fallback = name + fallbackSuffix
		judges = append(judges, namedJudge{name: name + fallbackSuffix, path: path + "::fallback", cfg: fb})
	}
	add(sharedJudgeName, "judge", cfg.Judge, cfg.Judge.Fallback, "")
	sharedFallback := judges[0].fallback
	scorerJudge = make([]string, len(cfg.Scorers))
	for i, sc := range cfg.Scorers {
		scorerJudge[i] = sharedJudgeName
		if sc.Judge == nil {
			continue
		}
		name, path := scorerJudgeName(sc.Name), fmt.Sprintf("scorers::%d::judge", i)
		jc, err := overlayJudge(cfg.Judge, sc.Judge, path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fallbackRaw := jc.Fallback
		if _, own := sc.Judge["fallback"]; !own {
			fallbackRaw = nil
		}
		add(name, path, jc, fallbackRaw, sharedFallback)
		scorerJudge[i] = name
	}
	return judges, scorerJudge, errors.Join(errs...)
}

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

// endpointHost is the host and port of an endpoint URL, "" when it has none.
func endpointHost(endpoint string) string {
	u, err := url.Parse(strings.TrimSpace(endpoint))
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Host)
}

// validateJudges checks every judge but the shared one, which the
// collector validates as the judge section; each error names its path.
func (cfg *Config) validateJudges() []error {
	judges, _, err := cfg.judges()
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	for _, nj := range judges[1:] {
		if err := nj.cfg.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", nj.path, err))
		}
		if err := nj.cfg.CircuitBreaker.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s::circuit_breaker: %w", nj.path, err))
		}
		if err := nj.cfg.Retry.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s::retry: %w", nj.path, err))
		}
	}
	return errs
}

// judgeSecrets are the secrets of every judge: the shared one's, its
// fallback's and each scorer judge's.
func (cfg *Config) judgeSecrets() []string {
	out := cfg.Judge.secrets()
	judges, _, _ := cfg.judges()
	for _, nj := range judges {
		out = append(out, nj.cfg.secrets()...)
	}
	return out
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
