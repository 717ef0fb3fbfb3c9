package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"errors"
	"fmt"
	"reflect"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"

	"github.com/llm-eval/llm_eval/internal/duration"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/configcheck"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/redact"
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

// Bounds of the configuration. The maxima keep a typo from reserving more
// memory than a host has; the minima catch a duration written without a
// unit, which YAML decodes as nanoseconds.
const (
	// maxQueueSize bounds queue_size: the work queue is preallocated at
	// queue_size × scorers entries, and every held span keeps its span
	// and extracted text in memory.
	maxQueueSize = 100_000
	// minCacheTTL bounds cache.ttl from below.
	minCacheTTL = time.Second
	// likelyMaxCacheTTL is the longest cache.ttl plausibly meant (see
	// minWait and likelyMaxWait in config_judge.go).
	likelyMaxCacheTTL = 7 * 24 * time.Hour
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
	if err := duration.AtLeast(cfg.MaxWait, minWait, likelyMaxWait); err != nil {
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
	if err := duration.AtLeast(cfg.StorageCheckTimeout, minWait, likelyMaxWait); err != nil {
		errs = append(errs, fmt.Errorf("storage_check_timeout: %w", err))
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

// Validate checks the cache settings while the cache is on.
func (cc *CacheConfig) Validate() error {
	if !cc.Enabled {
		return nil
	}
	var errs []error
	if cc.Size < 1 {
		errs = append(errs, fmt.Errorf("size: must be at least 1, got %d", cc.Size))
	}
	if err := duration.AtLeast(cc.TTL, minCacheTTL, likelyMaxCacheTTL); err != nil {
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

// Names of the judges, as logs and the judge attribute of the circuit
// metrics call them.
const (
	sharedJudgeName = "judge"
	fallbackSuffix  = ".fallback"
)

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
	// base is the index of the judge this one overlays, -1 for the
	// shared judge; written are the key paths its own block sets
	// (leafKeys). A bad setting it inherits is reported at base.
	base    int
	written map[string]bool
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
	add := func(name, path string, jc JudgeConfig, base int, raw, fallbackRaw map[string]any, inherited string) {
		judges = append(judges, namedJudge{name: name, path: path, cfg: jc, fallback: inherited, base: base, written: leafKeys(raw, "", nil)})
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
		judges = append(judges, namedJudge{name: name + fallbackSuffix, path: path + "::fallback", cfg: fb, base: i, written: leafKeys(fallbackRaw, "", nil)})
	}
	add(sharedJudgeName, "judge", cfg.Judge, -1, nil, cfg.Judge.Fallback, "")
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
		add(name, path, jc, 0, sc.Judge, fallbackRaw, sharedFallback)
		scorerJudge[i] = name
	}
	return judges, scorerJudge, errors.Join(errs...)
}

// validateJudges checks every judge but the shared one, which the
// collector validates as the judge section; each error names its path. A
// bad setting a judge inherits is reported only where it was written
// (judgeProblems.ownProblems).
func (cfg *Config) validateJudges() []error {
	judges, _, err := cfg.judges()
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	problems := make([]judgeProblems, len(judges))
	for i := range judges {
		problems[i] = judges[i].cfg.problems()
	}
	for i, nj := range judges {
		if nj.base < 0 {
			continue // the shared judge
		}
		for s, own := range problems[i].ownProblems(problems[nj.base], nj.written) {
			if len(own) == 0 {
				continue
			}
			path := nj.path
			if judgeSections[s] != "" {
				path += "::" + judgeSections[s]
			}
			errs = append(errs, fmt.Errorf("%s: %w", path, configcheck.JoinFields(own)))
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
