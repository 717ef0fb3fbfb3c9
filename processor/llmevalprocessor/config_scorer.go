package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/confmap"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/configcheck"
	"github.com/llm-eval/llm_eval/scoring"
)

// ScorerConfig configures one scorer.
type ScorerConfig struct {
	// Name is a built-in scorer (bias, hallucination, prompt_alignment,
	// task_completion, tool_use, answer_relevancy, context_relevance,
	// toxicity), checks, or the name of a custom criteria
	// scorer or of another checks scorer.
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
	// ContextSources are where the scorer's context comes from: trace,
	// tool_messages, system (default [trace, tool_messages];
	// config_context.go).
	ContextSources []string `mapstructure:"context_sources"`
	// SplitInstructions splits each system instruction text into its
	// separate instructions with one judge call, cached by the text's hash,
	// before the scorer judges them (judge.go). Nil means true
	// where it applies.
	SplitInstructions *bool `mapstructure:"split_instructions"`
	// UncertaintyWeight is what an "unsure" statement counts for in
	// answer_relevancy (default 0.3; config_rag.go).
	UncertaintyWeight *float64 `mapstructure:"uncertainty_weight"`
	// ContextPenalties tune context_relevance's deductions (config_rag.go).
	ContextPenalties *ContextPenaltiesConfig `mapstructure:"context_penalties"`

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

	// Rules are the deterministic rules of a checks scorer (no judge call).
	Rules []scoring.CheckRule `mapstructure:"rules"`

	// ScorerSelection (targets, when, include, exclude) narrows which
	// spans this scorer evaluates (config_context.go, filter.go).
	ScorerSelection `mapstructure:",squash"`
}

// appliesTo says whether the scorer scores an item of target whose
// per-scorer include/exclude left out the excluded scorers. A scorer that
// does not apply writes neither a result nor a marker.
func (sc ScorerConfig) appliesTo(target string, excluded map[string]bool) bool {
	return sc.hasTarget(target) && !excluded[sc.Name]
}

// isChecks reports whether the entry is a checks scorer: the one named
// checks, or an entry of another name that is not built in and has rules
// and no criteria.
func (sc *ScorerConfig) isChecks() bool {
	if sc.Name == scoring.Checks {
		return true
	}
	return sc.Name != "" && !slices.Contains(scoring.Names(), sc.Name) && len(sc.Rules) > 0 && sc.Criteria == ""
}

// isCriteria reports whether the entry is a custom criteria scorer: any
// name that is neither a built-in scorer's nor a checks scorer's.
func (sc *ScorerConfig) isCriteria() bool {
	return !slices.Contains(scoring.Names(), sc.Name) && !sc.isChecks()
}

// judgesTrajectory reports whether the scorer reads only an agent run's
// trajectory: task_completion, tool_use, or a checks scorer whose every
// rule is a trajectory rule. Such a scorer targets agent spans by default.
func (sc *ScorerConfig) judgesTrajectory() bool {
	if slices.Contains(scoring.TrajectoryNames(), sc.Name) {
		return true
	}
	if !sc.isChecks() || len(sc.Rules) == 0 {
		return false
	}
	for _, r := range sc.Rules {
		if !scoring.TrajectoryRule(r.Type) {
			return false
		}
	}
	return true
}

// criteriaConfig maps the entry onto the library's criteria settings.
func (sc *ScorerConfig) criteriaConfig() scoring.CriteriaConfig {
	cfg := scoring.CriteriaConfig{Name: sc.Name, Criteria: sc.Criteria, Steps: sc.Steps, Verdict: scoring.CriteriaVerdict(sc.Verdict)}
	for _, f := range sc.Fields {
		cfg.Fields = append(cfg.Fields, scoring.Field(f))
	}
	return cfg
}

// defaultScorerConfig is what an entry of the scorers list starts from.
func defaultScorerConfig(name string) ScorerConfig {
	return ScorerConfig{
		Name:                  name,
		Scale:                 1,
		IncludeReason:         true,
		ReasonMode:            string(scoring.ReasonLLM),
		UseSystemInstructions: true,
		ContextSources:        defaultContextSources(),
		ScorerSelection:       defaultScorerSelection(),
	}
}

// Unmarshal applies the per-scorer defaults before decoding, so that keys a
// list entry leaves out keep their defaults instead of Go zero values. A
// scorer that judges only trajectories targets agent spans unless targets
// is given.
func (sc *ScorerConfig) Unmarshal(conf *confmap.Conf) error {
	*sc = defaultScorerConfig("")
	if err := conf.Unmarshal(sc); err != nil {
		return fmt.Errorf("decoding scorer: %w", err)
	}
	if !conf.IsSet("targets") && sc.judgesTrajectory() {
		sc.Targets = []string{targetAgent}
	}
	return nil
}

// Validate checks a scorer entry as the scoring library's constructor
// would at start.
func (sc *ScorerConfig) Validate() error {
	var errs []error
	meant := configcheck.MisspeltScorer(sc.Name) // a built-in name sc.Name is a typo of
	switch {
	case sc.Name == "":
		errs = append(errs, errors.New("name: must be set"))
	case sc.isChecks():
		// NewNamedChecks names the rule and key, as in rules::0::pattern.
		if _, err := scoring.NewNamedChecks(sc.Name, sc.Rules, scorerOptions(*sc)); err != nil {
			errs = append(errs, err)
		}
	case sc.isCriteria() && strings.TrimSpace(sc.Criteria) == "" && meant != "":
		// A typo of a built-in name, not a criteria scorer missing its
		// criteria: say which name was meant.
		errs = append(errs, fmt.Errorf("name: unknown scorer %q (did you mean %s?); built-in scorers are %s, and any other name needs criteria (a custom criteria scorer) or rules (a checks scorer)",
			sc.Name, meant, strings.Join(append(scoring.Names(), scoring.Checks), ", ")))
	case sc.isCriteria() && strings.TrimSpace(sc.Criteria) == "":
		errs = append(errs, fmt.Errorf("criteria: must be set: %q is not a built-in scorer (%s), so it is a custom criteria scorer (or give it rules to make it a checks scorer)",
			sc.Name, strings.Join(scoring.Names(), ", ")))
	case sc.isCriteria():
		// The library's errors start with the key (name, criteria,
		// steps, fields, verdict), which is also the YAML key.
		if err := sc.criteriaConfig().Validate(); err != nil {
			errs = append(errs, err)
		}
	case sc.Criteria != "" || len(sc.Steps) > 0 || len(sc.Fields) > 0 || sc.Verdict != "":
		errs = append(errs, fmt.Errorf("criteria: only custom criteria scorers take criteria, steps, fields and verdict; %q is a built-in scorer", sc.Name))
	}
	if !sc.isChecks() && len(sc.Rules) > 0 {
		errs = append(errs, fmt.Errorf("rules: only checks scorers take rules; %q is a %s scorer", sc.Name, map[bool]string{true: "criteria", false: "built-in"}[sc.isCriteria()]))
	}
	errs = append(errs, sc.ScorerSelection.validate()...)
	errs = append(errs, validateContextSources(sc.ContextSources)...)
	if slices.Contains(scoring.TrajectoryNames(), sc.Name) && !slices.Equal(sc.Targets, []string{targetAgent}) {
		errs = append(errs, fmt.Errorf("targets: %s judges agent runs, so its targets must be [agent] (a generation span has no trajectory), got %v", sc.Name, sc.Targets))
	}
	scaleOK := sc.Scale > 0 && !math.IsInf(sc.Scale, 0)
	if !scaleOK {
		errs = append(errs, fmt.Errorf("scale: must be a finite positive number, got %v", sc.Scale))
	}
	if sc.Threshold != nil && scaleOK {
		if t := *sc.Threshold; !(t >= 0 && t <= sc.Scale) {
			errs = append(errs, fmt.Errorf("threshold: must be between 0 and scale (%v), got %v", sc.Scale, t))
		}
	}
	switch scoring.ReasonMode(sc.ReasonMode) {
	case scoring.ReasonLLM, scoring.ReasonSummary:
	default:
		errs = append(errs, fmt.Errorf("reason_mode: %w", configcheck.NotOneOf(sc.ReasonMode, string(scoring.ReasonLLM), string(scoring.ReasonSummary))))
	}
	for j, in := range sc.Instructions {
		if in == "" {
			errs = append(errs, fmt.Errorf("instructions::%d: must not be empty", j))
		}
	}
	if sc.Name == scoring.PromptAlignment && len(sc.Instructions) == 0 && !sc.UseSystemInstructions {
		errs = append(errs, errors.New("instructions: prompt_alignment needs instructions, or use_system_instructions: true to take them from the span"))
	}
	if err := sc.validateSplitInstructions(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, sc.validateRAG()...)
	return configcheck.JoinFields(errs)
}

// scorerOptions maps a scorer's configuration onto the library's options.
func scorerOptions(sc ScorerConfig) scoring.Options {
	return scoring.Options{
		Scale:      sc.Scale,
		Threshold:  sc.Threshold,
		StrictMode: sc.StrictMode,
		OmitReason: !sc.IncludeReason,
		ReasonMode: scoring.ReasonMode(sc.ReasonMode),
		// Set only for answer_relevancy and context_relevance (validateRAG).
		UncertaintyWeight: sc.UncertaintyWeight,
		ContextPenalties:  sc.contextPenalties(),
	}
}

// judgesSystemInstructions reports whether the scorer judges the span's
// system instructions: prompt_alignment or a criteria scorer showing the
// judge instructions, with no instructions of its own and
// use_system_instructions on.
func (sc *ScorerConfig) judgesSystemInstructions() bool {
	judgesInstructions := sc.Name == scoring.PromptAlignment ||
		(sc.isCriteria() && slices.Contains(sc.Fields, string(scoring.FieldInstructions)))
	return judgesInstructions && len(sc.Instructions) == 0 && sc.UseSystemInstructions
}

// splitsInstructions reports whether the scorer's instructions are split
// before it judges them: split_instructions, true unless set false, where
// it applies.
func (sc *ScorerConfig) splitsInstructions() bool {
	return sc.judgesSystemInstructions() && (sc.SplitInstructions == nil || *sc.SplitInstructions)
}

// validateSplitInstructions rejects split_instructions: true on a scorer
// that has no system instructions to split.
func (sc *ScorerConfig) validateSplitInstructions() error {
	if sc.SplitInstructions == nil || !*sc.SplitInstructions || sc.judgesSystemInstructions() {
		return nil
	}
	return errors.New("split_instructions: only applies to a scorer that judges the span's system instructions " +
		"(prompt_alignment, or a criteria scorer with the instructions field) without instructions of its own and with use_system_instructions: true")
}

// takesContextFrom says whether the scorer's context includes src.
func (sc ScorerConfig) takesContextFrom(src string) bool {
	return slices.Contains(sc.ContextSources, src)
}

// ContextPenaltiesConfig tunes context_relevance's deductions; each unset
// value keeps the library's default (scoring.DefaultContextPenalties).
type ContextPenaltiesConfig struct {
	// UnusedHighRelevance is deducted per highly relevant context item the
	// answer did not use (default 0.1).
	UnusedHighRelevance *float64 `mapstructure:"unused_high_relevance"`
	// MissingContextPerItem is deducted per piece of information the
	// answer needed that no item had (default 0.15).
	MissingContextPerItem *float64 `mapstructure:"missing_context_per_item"`
	// MaxMissingContext caps the deduction for missing information
	// (default 0.5).
	MaxMissingContext *float64 `mapstructure:"max_missing_context"`
}

// validateRAG checks the settings only answer_relevancy and
// context_relevance take.
func (sc *ScorerConfig) validateRAG() []error {
	var errs []error
	inUnit := func(v float64) bool { return !math.IsNaN(v) && v >= 0 && v <= 1 }
	if w := sc.UncertaintyWeight; w != nil {
		switch {
		case sc.Name != scoring.AnswerRelevancy:
			errs = append(errs, fmt.Errorf("uncertainty_weight: only answer_relevancy takes it, not %q", sc.Name))
		case !inUnit(*w):
			errs = append(errs, fmt.Errorf("uncertainty_weight: must be between 0 and 1, got %v", *w))
		}
	}
	if p := sc.ContextPenalties; p != nil {
		if sc.Name != scoring.ContextRelevance {
			errs = append(errs, fmt.Errorf("context_penalties: only context_relevance takes them, not %q", sc.Name))
		}
		for _, f := range []struct {
			key string
			v   *float64
		}{
			{"unused_high_relevance", p.UnusedHighRelevance},
			{"missing_context_per_item", p.MissingContextPerItem},
			{"max_missing_context", p.MaxMissingContext},
		} {
			if f.v != nil && !inUnit(*f.v) {
				errs = append(errs, fmt.Errorf("context_penalties::%s: must be between 0 and 1, got %v", f.key, *f.v))
			}
		}
	}
	return errs
}

// contextPenalties returns the library's penalties for this scorer: the
// defaults with the configured values over them, or nil when none is set.
func (sc ScorerConfig) contextPenalties() *scoring.ContextPenalties {
	p := sc.ContextPenalties
	if p == nil {
		return nil
	}
	out := scoring.DefaultContextPenalties()
	for _, f := range []struct {
		dst *float64
		v   *float64
	}{
		{&out.UnusedHighRelevance, p.UnusedHighRelevance},
		{&out.MissingPerItem, p.MissingContextPerItem},
		{&out.MaxMissing, p.MaxMissingContext},
	} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	return &out
}

// ragFingerprint is the part of scorerFingerprint for these settings.
func (sc ScorerConfig) ragFingerprint() string {
	w := "default"
	if sc.UncertaintyWeight != nil {
		w = fmt.Sprint(*sc.UncertaintyWeight)
	}
	p := "default"
	if cp := sc.contextPenalties(); cp != nil {
		p = fmt.Sprintf("%v/%v/%v", cp.UnusedHighRelevance, cp.MissingPerItem, cp.MaxMissing)
	}
	return " uncertainty_weight=" + w + " context_penalties=" + p
}
