package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/confmap"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/configcheck"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/checks"
	"github.com/llm-eval/llm_eval/scoring/criteria"
	"github.com/llm-eval/llm_eval/scoring/scorers"
)

// ScorerConfig configures one scorer. It is written in one of two forms.
// With type, as tail_sampling's policies are written, the entry's kind is
// type and the settings only that kind takes sit in a section named after
// it (scorerSections); name is then free, and defaults to type. Without
// type (the flat form), the kind follows from the name and the keys, and
// every setting sits beside name. Both decode to the same fields.
type ScorerConfig struct {
	// Name is the scorer's name in results and metrics. In the flat form
	// it is also its kind: a built-in scorer (bias, hallucination,
	// prompt_alignment, task_completion, tool_use, answer_relevancy,
	// context_relevance, toxicity), checks, or the name of a custom
	// criteria scorer or of another checks scorer.
	Name string `mapstructure:"name"`
	// Type is the scorer's kind: a built-in scorer, criteria or checks.
	Type string `mapstructure:"type"`
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
	// Sampling, when set, scores only this share of the traces with this
	// scorer, decided by trace id as sampling.percentage is. It sits beside
	// name in both forms.
	Sampling *SamplingConfig `mapstructure:"sampling"`
	// Judge holds judge keys that override the shared judge's for this
	// scorer: its own endpoint, model, key, limits and fallback
	// (Config.judges). It sits beside name in both forms.
	Judge map[string]any `mapstructure:"judge"`
	// UseSystemInstructions uses the span's system instructions when
	// Instructions is empty (default true).
	UseSystemInstructions bool `mapstructure:"use_system_instructions"`
	// InstructionSources says whose instructions prompt_alignment judges:
	// both (default), system (the system instructions: instructions, or
	// the span's system prompt) or user (those the user gave in the
	// request and earlier turns).
	InstructionSources string `mapstructure:"instruction_sources"`
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
	// answer_relevancy (default 0.3; validateRAG).
	UncertaintyWeight *float64 `mapstructure:"uncertainty_weight"`
	// ContextPenalties tune context_relevance's deductions (validateRAG).
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
	Rules []checks.Rule `mapstructure:"rules"`

	// ScorerSelection (targets, when, include, exclude) narrows which
	// spans this scorer evaluates (config_context.go, selection.go).
	ScorerSelection `mapstructure:",squash"`
}

// appliesTo says whether the scorer scores an item of target whose
// per-scorer include/exclude left out the excluded scorers. A scorer that
// does not apply writes neither a result nor a marker.
func (sc ScorerConfig) appliesTo(target string, excluded map[string]bool) bool {
	return sc.hasTarget(target) && !excluded[sc.Name]
}

// Scorer types besides the built-in scorers' names.
const (
	typeCriteria = "criteria"
	typeChecks   = scoring.Checks
)

// scorerTypes are the values of type.
func scorerTypes() []string { return append(scorers.Names(), typeCriteria, typeChecks) }

// scorerType is the kind of scorer the entry configures: a built-in
// scorer's name, criteria or checks. It is type when given. In the flat
// form it follows from the name and keys: a built-in name is that scorer;
// checks, or another name with rules and no criteria, a checks scorer;
// any other name a criteria scorer.
func (sc *ScorerConfig) scorerType() string {
	switch {
	case sc.Type != "":
		return sc.Type
	case sc.Name == scoring.Checks:
		return typeChecks
	case slices.Contains(scorers.Names(), sc.Name):
		return sc.Name
	case sc.Name != "" && len(sc.Rules) > 0 && sc.Criteria == "":
		return typeChecks
	}
	return typeCriteria
}

// isChecks reports whether the entry is a checks scorer.
func (sc *ScorerConfig) isChecks() bool { return sc.scorerType() == typeChecks }

// isCriteria reports whether the entry is a custom criteria scorer.
func (sc *ScorerConfig) isCriteria() bool { return sc.scorerType() == typeCriteria }

// judgesTrajectory reports whether the scorer reads only an agent run's
// trajectory: task_completion, tool_use, or a checks scorer whose every
// rule is a trajectory rule. Such a scorer targets agent spans by default.
func (sc *ScorerConfig) judgesTrajectory() bool {
	if slices.Contains(scorers.TrajectoryNames(), sc.scorerType()) {
		return true
	}
	if !sc.isChecks() || len(sc.Rules) == 0 {
		return false
	}
	for _, r := range sc.Rules {
		if !checks.TrajectoryRule(r.Type) {
			return false
		}
	}
	return true
}

// criteriaConfig maps the entry onto the library's criteria settings.
func (sc *ScorerConfig) criteriaConfig() criteria.Config {
	cfg := criteria.Config{Name: sc.Name, Criteria: sc.Criteria, Steps: sc.Steps, Verdict: criteria.Verdict(sc.Verdict)}
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
// list entry leaves out keep their defaults instead of Go zero values. The
// section of a typed entry is decoded onto the same fields as the flat
// form's keys; conf is the entry's own, and loses that section. A scorer
// that judges only trajectories targets agent spans unless targets is
// given.
func (sc *ScorerConfig) Unmarshal(conf *confmap.Conf) error {
	*sc = defaultScorerConfig("")
	if typ, _ := conf.Get("type").(string); typ != "" && conf.IsSet(typ) {
		section, err := conf.Sub(typ)
		if err != nil {
			return fmt.Errorf("%s: must be a section of settings: %w", typ, err)
		}
		conf.Delete(typ)
		if err := conf.Merge(section); err != nil {
			return fmt.Errorf("decoding scorer: %s: %w", typ, err)
		}
	}
	if err := conf.Unmarshal(sc); err != nil {
		return fmt.Errorf("decoding scorer: %w", err)
	}
	if sc.Name == "" {
		sc.Name = sc.Type
	}
	switch {
	case conf.IsSet("targets"):
	case sc.judgesTrajectory():
		sc.Targets = []string{targetAgent}
	case sc.conversationScorer():
		sc.Targets = []string{targetConversation}
	}
	return nil
}

// Validate checks a scorer entry as the scoring library's constructor
// would at start.
func (sc *ScorerConfig) Validate() error {
	var errs []error
	meant := "" // in the flat form, the built-in name sc.Name is a typo of
	if sc.Type == "" {
		meant = configcheck.MisspeltScorer(sc.Name)
	}
	switch {
	case sc.Type != "" && !slices.Contains(scorerTypes(), sc.Type):
		errs = append(errs, fmt.Errorf("type: %w", configcheck.NotAScorer(sc.Type, scorerTypes()...)))
	case sc.Type != "" && sc.Name != sc.Type && slices.Contains(scorerTypes(), sc.Name) && sc.Name != typeCriteria:
		errs = append(errs, fmt.Errorf("name: %q is the name of the built-in scorer %s; give this scorer of type %s another name", sc.Name, sc.Name, sc.Type))
	case sc.Name == "":
		errs = append(errs, errors.New("name: must be set"))
	case sc.isChecks():
		// checks.NewNamed names the rule and key, as in rules::0::pattern.
		if _, err := checks.NewNamed(sc.Name, sc.Rules, scorerOptions(*sc)); err != nil {
			errs = append(errs, err)
		}
	case sc.isCriteria() && strings.TrimSpace(sc.Criteria) == "" && meant != "":
		// A typo of a built-in name, not a criteria scorer missing its
		// criteria: say which name was meant.
		errs = append(errs, fmt.Errorf("name: unknown scorer %q (did you mean %s?); built-in scorers are %s, and any other name needs criteria (a custom criteria scorer) or rules (a checks scorer)",
			sc.Name, meant, strings.Join(append(scorers.Names(), scoring.Checks), ", ")))
	case sc.isCriteria() && strings.TrimSpace(sc.Criteria) == "" && sc.Type == typeCriteria:
		errs = append(errs, errors.New("criteria: must be set in the criteria section of a scorer of type criteria"))
	case sc.isCriteria() && strings.TrimSpace(sc.Criteria) == "":
		errs = append(errs, fmt.Errorf("criteria: must be set: %q is not a built-in scorer (%s), so it is a custom criteria scorer (or give it rules to make it a checks scorer)",
			sc.Name, strings.Join(scorers.Names(), ", ")))
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
	if typ := sc.scorerType(); slices.Contains(scorers.TrajectoryNames(), typ) && !slices.Equal(sc.Targets, []string{targetAgent}) {
		errs = append(errs, fmt.Errorf("targets: %s judges agent runs, so its targets must be [agent] (a generation span has no trajectory), got %v", typ, sc.Targets))
	}
	if err := sc.validateConversationTargets(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, sc.validateConversationSettings()...)
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
	if sc.scorerType() == scoring.PromptAlignment && len(sc.Instructions) == 0 && !sc.UseSystemInstructions && sc.instructionSources() != scoring.SourcesUser {
		errs = append(errs, errors.New("instructions: prompt_alignment needs instructions, or use_system_instructions: true to take them from the span, or instruction_sources: user to judge only the user's"))
	}
	if err := sc.validateInstructionSources(); err != nil {
		errs = append(errs, err)
	}
	if err := sc.validateSplitInstructions(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, sc.validateRAG()...)
	return configcheck.JoinFields(errs)
}

// instructionSources is the library's setting of instruction_sources:
// both unless set.
func (sc *ScorerConfig) instructionSources() scoring.InstructionSources {
	if sc.InstructionSources == "" {
		return scoring.SourcesBoth
	}
	return scoring.InstructionSources(sc.InstructionSources)
}

// validateInstructionSources checks instruction_sources: one of its
// values, and only on prompt_alignment.
func (sc *ScorerConfig) validateInstructionSources() error {
	if sc.InstructionSources == "" {
		return nil
	}
	if sc.scorerType() != scoring.PromptAlignment {
		return fmt.Errorf("instruction_sources: only prompt_alignment takes it, not %q", sc.Name)
	}
	switch s := scoring.InstructionSources(sc.InstructionSources); s {
	case scoring.SourcesBoth, scoring.SourcesSystem, scoring.SourcesUser:
		return nil
	}
	return fmt.Errorf("instruction_sources: %w", configcheck.NotOneOf(sc.InstructionSources,
		string(scoring.SourcesBoth), string(scoring.SourcesSystem), string(scoring.SourcesUser)))
}

// scorerOptions maps a scorer's configuration onto the library's options.
func scorerOptions(sc ScorerConfig) scoring.Options {
	return scoring.Options{
		Scale:      sc.Scale,
		Threshold:  sc.Threshold,
		StrictMode: sc.StrictMode,
		OmitReason: !sc.IncludeReason,
		ReasonMode: scoring.ReasonMode(sc.ReasonMode),
		// Set only for prompt_alignment (validateInstructionSources).
		InstructionSources: scoring.InstructionSources(sc.InstructionSources),
		// Set only for answer_relevancy and context_relevance (validateRAG).
		UncertaintyWeight: sc.UncertaintyWeight,
		ContextPenalties:  sc.contextPenalties(),
	}
}

// judgesSystemInstructions reports whether the scorer judges the span's
// system instructions: prompt_alignment (unless it judges only the user's)
// or a criteria scorer showing the judge instructions, with no
// instructions of its own and use_system_instructions on.
func (sc *ScorerConfig) judgesSystemInstructions() bool {
	judgesInstructions := (sc.scorerType() == scoring.PromptAlignment && sc.instructionSources() != scoring.SourcesUser) ||
		(sc.isCriteria() && slices.Contains(sc.Fields, string(scoring.FieldInstructions)))
	return judgesInstructions && len(sc.Instructions) == 0 && sc.UseSystemInstructions
}

// readsHistory reports whether the scorer sends the conversation before
// the request to the judge: a scorer of one turn whose definition reads
// it (answer_relevancy, task_completion, prompt_alignment), except
// prompt_alignment judging only the system instructions.
func (sc *ScorerConfig) readsHistory() bool {
	if sc.scorerType() == scoring.PromptAlignment && sc.instructionSources() == scoring.SourcesSystem {
		return false
	}
	d, ok := scorers.Definition(sc.scorerType())
	return ok && d.History
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
		case sc.scorerType() != scoring.AnswerRelevancy:
			errs = append(errs, fmt.Errorf("uncertainty_weight: only answer_relevancy takes it, not %q", sc.Name))
		case !inUnit(*w):
			errs = append(errs, fmt.Errorf("uncertainty_weight: must be between 0 and 1, got %v", *w))
		}
	}
	if p := sc.ContextPenalties; p != nil {
		if sc.scorerType() != scoring.ContextRelevance {
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

// scorerSections are the keys of each type's section in the typed form:
// the settings only that type takes. A type not listed takes none.
var scorerSections = map[string][]string{
	scoring.PromptAlignment:  {"instructions", "use_system_instructions", "split_instructions", "instruction_sources"},
	scoring.AnswerRelevancy:  {"uncertainty_weight"},
	scoring.ContextRelevance: {"context_penalties"},
	typeCriteria:             {"criteria", "steps", "fields", "verdict", "instructions", "use_system_instructions", "split_instructions"},
	typeChecks:               {"rules"},
}

// checkScorerSections checks the typed entries of a raw scorers list
// (the value of scorers::, at path) before they are decoded: type is a
// known kind, the section is that type's and holds only its keys, and no
// setting that belongs in a section sits beside type. An entry without
// type (the flat form) may not have a section. Each error names the key's
// path. It returns the list with each typed entry's section removed, for
// the check of the remaining keys.
func checkScorerSections(path string, scorers any) (any, []error) {
	list, ok := scorers.([]any)
	if !ok {
		return scorers, nil
	}
	sectionKeys := map[string]bool{} // every key some section takes
	for _, keys := range scorerSections {
		for _, k := range keys {
			sectionKeys[k] = true
		}
	}
	var errs []error
	out := make([]any, len(list))
	for i, v := range list {
		out[i] = v
		entry, ok := v.(map[string]any)
		if !ok {
			continue
		}
		at := path + confmap.KeyDelimiter + strconv.Itoa(i)
		typ, _ := entry["type"].(string)
		if typ == "" {
			for _, k := range slices.Sorted(maps.Keys(entry)) {
				sv := entry[k]
				_, isSection := scorerSections[k]
				if _, isMap := sv.(map[string]any); isSection && (isMap || !sectionKeys[k]) {
					errs = append(errs, fmt.Errorf("%s::%s: a section of settings needs type: %s beside name", at, k, k))
				}
			}
			continue
		}
		if !slices.Contains(scorerTypes(), typ) {
			errs = append(errs, fmt.Errorf("%s::type: %w", at, configcheck.NotAScorer(typ, scorerTypes()...)))
			out[i] = withoutKey(entry, typ)
			continue
		}
		allowed := map[string]bool{}
		for _, k := range scorerSections[typ] {
			allowed[k] = true
		}
		rest := make(map[string]any, len(entry))
		for _, k := range slices.Sorted(maps.Keys(entry)) {
			sv := entry[k]
			_, isSection := scorerSections[k]
			switch {
			case k == typ && len(allowed) == 0:
				errs = append(errs, fmt.Errorf("%s::%s: a %s scorer takes no section of its own", at, k, typ))
				continue
			case k == typ:
				section, ok := sv.(map[string]any)
				if !ok {
					errs = append(errs, fmt.Errorf("%s::%s: must be a section of settings (%s)", at, k, strings.Join(scorerSections[typ], ", ")))
					continue
				}
				for _, sk := range slices.Sorted(maps.Keys(section)) {
					if !allowed[sk] {
						errs = append(errs, sectionKeyError(at+confmap.KeyDelimiter+k, sk, typ, allowed))
					}
				}
				continue // checked here, not by its field
			case isSection:
				errs = append(errs, fmt.Errorf("%s::%s: only a scorer of type %s takes this section; this one is of type %s", at, k, k, typ))
			case allowed[k]:
				errs = append(errs, fmt.Errorf("%s::%s: with type %s, %s goes in the %s section", at, k, typ, k, typ))
			case sectionKeys[k]:
				errs = append(errs, fmt.Errorf("%s::%s: a scorer of type %s does not take %s", at, k, typ, k))
			}
			rest[k] = sv
		}
		out[i] = rest
	}
	return out, errs
}

// sectionKeyError reports a key a type's section does not take, with the
// one it most likely meant.
func sectionKeyError(path, key, typ string, allowed map[string]bool) error {
	if best := configcheck.SuggestKey(key, allowed); best != "" {
		return fmt.Errorf("%s::%s: unknown key (did you mean %s?)", path, key, best)
	}
	return fmt.Errorf("%s::%s: unknown key; the %s section takes %s", path, key, typ, strings.Join(slices.Sorted(maps.Keys(allowed)), ", "))
}

// withoutKey is a copy of m without key.
func withoutKey(m map[string]any, key string) map[string]any {
	out := maps.Clone(m)
	delete(out, key)
	return out
}

// Evaluation targets of a scorer.
const (
	targetGeneration   = "generation"   // LLM call spans (the default)
	targetAgent        = "agent"        // agent or root spans: the request, the final answer, the trace's context
	targetConversation = "conversation" // whole conversations, when they end (config_conversation.go)
)

// conversationScorerNames are the built-in scorers that judge whole
// conversations.
func conversationScorerNames() []string { return scorers.ConversationNames() }

func joinNames(names []string) string { return strings.Join(names, ", ") }

// Sources of a scorer's context (scorers[].context_sources).
const (
	// contextSourceTrace: retrieved documents and tool results recorded on
	// spans of the trace (retrieval, tool and memory spans, and documents
	// on the generation span itself).
	contextSourceTrace = "trace"
	// contextSourceToolMessages: tool results in the call's own input.
	contextSourceToolMessages = "tool_messages"
	// contextSourceSystem: the call's system messages, for applications
	// that put their retrieved documents into the system prompt.
	contextSourceSystem = "system"
)

func defaultContextSources() []string {
	return []string{contextSourceTrace, contextSourceToolMessages}
}

// validateContextSources checks scorers[].context_sources.
func validateContextSources(sources []string) []error {
	if len(sources) == 0 {
		return []error{errors.New("context_sources: must name at least one of trace, tool_messages, system")}
	}
	var errs []error
	for i, src := range sources {
		switch src {
		case contextSourceTrace, contextSourceToolMessages, contextSourceSystem:
		default:
			errs = append(errs, fmt.Errorf("context_sources[%d]: %w", i, configcheck.NotOneOf(src, contextSourceTrace, contextSourceToolMessages, contextSourceSystem)))
		}
		if slices.Index(sources, src) < i {
			errs = append(errs, fmt.Errorf("context_sources[%d]: duplicate source %q", i, src))
		}
	}
	return errs
}

// ScorerSelection says which spans one scorer evaluates. It is meant to be
// squashed into ScorerConfig.
type ScorerSelection struct {
	// Targets are generation and/or agent (default [generation]), or
	// conversation for the conversation scorers (their default).
	Targets []string `mapstructure:"targets"`
	// When holds conditions on what was read from the span.
	When WhenConfig `mapstructure:"when"`
	// SpanFilterConfig narrows the scorer to matching spans, after the
	// processor-wide include and exclude.
	SpanFilterConfig `mapstructure:",squash"`
}

// WhenConfig holds conditions checked on the case before it is scored.
type WhenConfig struct {
	// ContextPresent skips spans without retrieved context or tool results
	// (on the span or joined from its trace); they are not scored and not
	// marked not_scorable.
	ContextPresent bool `mapstructure:"context_present"`
}

// defaultScorerSelection is what a scorer entry starts from.
func defaultScorerSelection() ScorerSelection {
	return ScorerSelection{Targets: []string{targetGeneration}}
}

// validate checks the targets and compiles the filters. It runs inside
// ScorerConfig.Validate, so the collector adds the scorers::N path.
func (s ScorerSelection) validate() []error {
	var errs []error
	if len(s.Targets) == 0 {
		errs = append(errs, errors.New("targets: must name at least one of generation, agent, conversation"))
	}
	for i, t := range s.Targets {
		switch t {
		case targetGeneration, targetAgent, targetConversation:
		default:
			errs = append(errs, fmt.Errorf("targets[%d]: %w", i, configcheck.NotOneOf(t, targetGeneration, targetAgent, targetConversation)))
		}
		if slices.Index(s.Targets, t) < i {
			errs = append(errs, fmt.Errorf("targets[%d]: duplicate target %q", i, t))
		}
	}
	if _, err := s.SpanFilterConfig.compile(); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// hasTarget says whether the scorer evaluates spans of target.
func (s ScorerSelection) hasTarget(target string) bool {
	return slices.Contains(s.Targets, target)
}

// conversationScorer reports whether the scorer judges whole
// conversations.
func (sc *ScorerConfig) conversationScorer() bool {
	return slices.Contains(conversationScorerNames(), sc.scorerType())
}

// validateConversationTargets checks that conversation scorers target
// conversations and only they do.
func (sc *ScorerConfig) validateConversationTargets() error {
	conv := sc.conversationScorer()
	switch {
	case conv && !slices.Equal(sc.Targets, []string{targetConversation}):
		return fmt.Errorf("targets: %s judges whole conversations, so its targets must be [conversation], got %v", sc.scorerType(), sc.Targets)
	case !conv && sc.hasTarget(targetConversation):
		return errors.New("targets: only the conversation scorers (" + joinNames(conversationScorerNames()) + ") target conversation")
	case conv && (len(sc.Include) > 0 || len(sc.Exclude) > 0):
		return errors.New("include: a conversation scorer judges no single span to match; the processor's include and exclude choose the turns its conversations are made of")
	}
	return nil
}

// validateConversationSettings refuses on a conversation scorer the
// settings only a span's case applies, which the conversation's case
// (internal/subject.Conversation) would silently ignore: when and
// context_sources (a conversation has no retrieved context). Include,
// exclude and targets are validateConversationTargets'; the settings of
// one kind of scorer (criteria, rules, instruction_sources, ...) are
// refused by their own checks.
func (sc *ScorerConfig) validateConversationSettings() []error {
	if !sc.conversationScorer() {
		return nil
	}
	var errs []error
	if sc.When != (WhenConfig{}) {
		errs = append(errs, fmt.Errorf("when: %s judges whole conversations, which have no retrieved context; when::context_present applies to spans only", sc.scorerType()))
	}
	if !slices.Equal(sc.ContextSources, defaultContextSources()) {
		errs = append(errs, fmt.Errorf("context_sources: %s judges whole conversations, which have no retrieved context; context_sources applies to span scorers only", sc.scorerType()))
	}
	return errs
}
