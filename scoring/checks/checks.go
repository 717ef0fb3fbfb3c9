// Package checks is the deterministic checks scorer: configured rules run
// over the output (valid JSON, a pattern, a length, a language, no
// personal data or secrets, ...) and over an agent run's trajectory (tool
// errors, steps, repeated calls, required and forbidden tools), with no
// judge call. The score is the share of rules passed.
package checks

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
)

// Check rule types.
const (
	RuleJSONValid   = "json_valid"   // the output is one JSON value
	RuleJSONSchema  = "json_schema"  // the output is JSON valid against Schema
	RuleRegexMatch  = "regex_match"  // Pattern matches between Min and Max times (default at least once)
	RuleRegexAbsent = "regex_absent" // Pattern never matches
	RuleContains    = "contains"     // Value occurs between Min and Max times (default at least once)
	RuleExcludes    = "excludes"     // Value never occurs
	RuleStartsWith  = "starts_with"  // the output, leading space aside, starts with Value
	RuleEndsWith    = "ends_with"    // the output, trailing space and quotes aside, ends with Value
	RuleFirstWord   = "first_word"   // the first word (of paragraph Paragraph, if set) is Value
	RuleWords       = "words"        // word count within Min..Max
	RuleSentences   = "sentences"    // sentence count within Min..Max
	RuleParagraphs  = "paragraphs"   // paragraph count within Min..Max
	RuleCharacters  = "characters"   // character (rune) count within Min..Max
	RuleLowercase   = "lowercase"    // has letters and none is upper case
	RuleUppercase   = "uppercase"    // has letters and none is lower case
	RuleLanguage    = "language"     // the detected language is Value (ISO 639-1)
	RuleNoPII       = "no_pii"       // no e-mail address, phone number or payment card
	RuleNoSecrets   = "no_secrets"   // no API-key or private-key shape
	RuleNotRefusal  = "not_refusal"  // the output does not open with a refusal

	// Trajectory rules read Case.Trajectory instead of the output.
	RuleToolErrors        = "tool_errors"         // at most Max tool executions (default 0) ended in error
	RuleMaxSteps          = "max_steps"           // the run took at most Max steps
	RuleRepeatedToolCalls = "repeated_tool_calls" // no tool was called with the same arguments more than Max times (default 2)
	RuleRequiredTools     = "required_tools"      // every tool in Tools was called
	RuleForbiddenTools    = "forbidden_tools"     // no tool in Tools was called
)

// RuleTypes returns every check rule type, in a fixed order.
func RuleTypes() []string {
	return []string{
		RuleJSONValid, RuleJSONSchema, RuleRegexMatch, RuleRegexAbsent, RuleContains, RuleExcludes,
		RuleStartsWith, RuleEndsWith, RuleFirstWord, RuleWords, RuleSentences, RuleParagraphs,
		RuleCharacters, RuleLowercase, RuleUppercase, RuleLanguage, RuleNoPII, RuleNoSecrets, RuleNotRefusal,
		RuleToolErrors, RuleMaxSteps, RuleRepeatedToolCalls, RuleRequiredTools, RuleForbiddenTools,
	}
}

// TrajectoryRule reports whether a rule type reads Case.Trajectory rather
// than the output. Such a rule is skipped on a case without a trajectory.
func TrajectoryRule(ruleType string) bool {
	switch ruleType {
	case RuleToolErrors, RuleMaxSteps, RuleRepeatedToolCalls, RuleRequiredTools, RuleForbiddenTools:
		return true
	}
	return false
}

// Rule configures one rule of the checks scorer. Which fields a rule
// reads depends on its Type; a field the type does not use is rejected, so
// a typo in a configuration cannot be silently ignored.
type Rule struct {
	// Type is one of RuleTypes.
	Type string `json:"type" mapstructure:"type"`
	// Pattern is the RE2 expression of regex_match and regex_absent.
	Pattern string `json:"pattern,omitempty" mapstructure:"pattern"`
	// Value is the text of contains, excludes, starts_with, ends_with and
	// first_word, and the language code of language.
	Value string `json:"value,omitempty" mapstructure:"value"`
	// IgnoreCase compares case-insensitively (text rules and regexps).
	IgnoreCase bool `json:"ignore_case,omitempty" mapstructure:"ignore_case"`
	// WholeWord makes contains and excludes count only matches that are
	// not part of a longer word.
	WholeWord bool `json:"whole_word,omitempty" mapstructure:"whole_word"`
	// Min and Max bound a count, inclusive: occurrences for regex_match and
	// contains, the measure for words, sentences, paragraphs, characters.
	// Max alone bounds the trajectory rules: failed tool executions
	// (tool_errors), steps (max_steps), identical calls (repeated_tool_calls).
	Min *int `json:"min,omitempty" mapstructure:"min"`
	Max *int `json:"max,omitempty" mapstructure:"max"`
	// Tools are the tool names of required_tools and forbidden_tools,
	// compared exactly.
	Tools []string `json:"tools,omitempty" mapstructure:"tools"`
	// Separator splits paragraphs (paragraphs, first_word) instead of
	// blank lines, for example "***".
	Separator string `json:"separator,omitempty" mapstructure:"separator"`
	// Paragraph makes first_word look at that paragraph (1-based).
	Paragraph int `json:"paragraph,omitempty" mapstructure:"paragraph"`
	// Schema is the JSON Schema of json_schema (the subset described at
	// compileSchema).
	Schema map[string]any `json:"schema,omitempty" mapstructure:"schema"`
	// AllowCodeFence lets json_valid and json_schema accept JSON wrapped
	// in one Markdown code fence (```json ... ```).
	AllowCodeFence bool `json:"allow_code_fence,omitempty" mapstructure:"allow_code_fence"`
}

// Verdicts is the checks scorer's analyze result: one entry per rule,
// in configuration order.
type Verdicts struct {
	Verdicts []Verdict `json:"verdicts"`
}

// Verdict is one rule's outcome. Detail says what was measured; it
// never quotes a secret or personal data found in the output, nor tool
// arguments, results or errors. A Skipped rule (a trajectory rule on a case
// without a trajectory) neither passed nor failed and does not count.
type Verdict struct {
	Rule    string `json:"rule"`
	Passed  bool   `json:"passed"`
	Skipped bool   `json:"skipped,omitempty"`
	Detail  string `json:"detail"`
}

// ruleCheck is one compiled output rule: it reports whether text passes and what it found.
type ruleCheck func(text string) (bool, string)

// trajectoryCheck is one compiled trajectory rule, run on a trajectory with steps.
type trajectoryCheck func(r *runFacts) (bool, string)

// runFacts is the trajectory one Score call checks, with what several
// rules need worked out once.
type runFacts struct {
	t      *scoring.Trajectory
	calls  []pipeline.Call
	paired bool
}

// toolCalls returns the trajectory's tool calls, requests paired with
// their executions.
func (r *runFacts) toolCalls() []pipeline.Call {
	if !r.paired {
		r.calls = pipeline.Calls(r.t)
		r.paired = true
	}
	return r.calls
}

// compiledRule is a rule ready to run: exactly one of its checks is set.
type compiledRule struct {
	text       ruleCheck
	trajectory trajectoryCheck
}

// checksScorer runs compiled rules; it is safe for concurrent use.
type checksScorer struct {
	name      string
	rules     []Rule
	checks    []compiledRule
	scale     float64
	threshold float64
	strict    bool
}

// New returns the checks scorer for rules. Of opts it uses Scale,
// Threshold (default: the scale, so every rule must pass) and StrictMode;
// higher scores are better. It rejects an empty rule list, an unknown rule
// type, a bad pattern or schema and fields a rule does not use, naming the
// rule index and key as in "rules::2::pattern: ...".
//
// Output rules check Case.Output as it is. Trajectory rules (see
// TrajectoryRule) check Case.Trajectory; on a case without one (nil, or
// only omitted steps) they are skipped, and a case on which every rule was
// skipped is not scorable. The score is the share of the rules not skipped
// that passed.
func New(rules []Rule, opts scoring.Options) (scoring.Scorer, error) {
	return newChecks(scoring.Checks, rules, opts)
}

// NewNamed is New under another name, so that several checks
// scorers can run side by side and be counted apart (for example one
// holding only a tool_errors rule, whose fail rate is then the share of
// runs with failed tool executions). The name follows the rules of a
// criteria scorer's name (scoring.CheckName); "checks" itself is
// accepted.
func NewNamed(name string, rules []Rule, opts scoring.Options) (scoring.Scorer, error) {
	if name != scoring.Checks {
		if err := scoring.CheckName(name); err != nil {
			return nil, err
		}
	}
	return newChecks(name, rules, opts)
}

func newChecks(name string, rules []Rule, opts scoring.Options) (scoring.Scorer, error) {
	if len(rules) == 0 {
		return nil, errors.New("rules: the checks scorer needs at least one rule")
	}
	if opts.Scale == 0 {
		opts.Scale = 1
	}
	if !(opts.Scale > 0) || math.IsInf(opts.Scale, 0) {
		return nil, fmt.Errorf("scale: must be a positive number, got %v", opts.Scale)
	}
	threshold := opts.Scale
	if opts.Threshold != nil {
		threshold = *opts.Threshold
		if math.IsNaN(threshold) || threshold < 0 || threshold > opts.Scale {
			return nil, fmt.Errorf("threshold: must be between 0 and the scale %v, got %v", opts.Scale, threshold)
		}
	}
	// Scores are rounded to two decimals, the scale included, so the
	// threshold is compared at two decimals too.
	threshold = pipeline.Round(threshold)
	if opts.StrictMode {
		threshold = pipeline.Round(opts.Scale)
	}
	s := &checksScorer{name: name, rules: append([]Rule(nil), rules...), scale: opts.Scale, threshold: threshold, strict: opts.StrictMode}
	for i, r := range rules {
		c, err := compileRule(r)
		if err != nil {
			return nil, fmt.Errorf("rules::%d::%w", i, err)
		}
		s.checks = append(s.checks, c)
	}
	return s, nil
}

func (s *checksScorer) Name() string { return s.name }

// Score runs every rule over c: output rules over c.Output, trajectory
// rules over c.Trajectory. It makes no judge call.
func (s *checksScorer) Score(_ context.Context, c scoring.Case) scoring.Result {
	start := time.Now()
	res := scoring.Result{Scorer: s.name}
	verdicts := make([]Verdict, len(s.checks))
	passed, counted := 0, 0
	var failed, skipped []string
	noTrajectory := !pipeline.HasSteps(c.Trajectory)
	run := &runFacts{t: c.Trajectory}
	for i, chk := range s.checks {
		v := Verdict{Rule: s.rules[i].Type}
		switch {
		case chk.trajectory != nil && noTrajectory:
			v.Skipped, v.Detail = true, "skipped: the case has no trajectory"
			skipped = append(skipped, fmt.Sprintf("#%d %s", i, s.rules[i].Type))
			verdicts[i] = v
			continue
		case chk.trajectory != nil:
			v.Passed, v.Detail = chk.trajectory(run)
		default:
			v.Passed, v.Detail = chk.text(c.Output)
		}
		verdicts[i] = v
		counted++
		if v.Passed {
			passed++
		} else {
			failed = append(failed, fmt.Sprintf("#%d %s (%s)", i, s.rules[i].Type, v.Detail))
		}
	}
	res.Steps.Analyze = Verdicts{Verdicts: verdicts}
	res.Usage.Latency = time.Since(start)
	if counted == 0 {
		res.Label = scoring.LabelNotScorable
		res.Reason = fmt.Sprintf("The case has no trajectory (agent steps), and every rule reads one: %s.", strings.Join(skipped, ", "))
		return res
	}
	// The score is rounded to two decimals like every scorer's, a perfect
	// one included (the scale 0.125 gives 0.13), and the label is decided
	// on the rounded score; strict mode decides on the counts.
	res.Score = pipeline.Round(float64(passed) / float64(counted) * s.scale)
	if s.strict && passed < counted {
		res.Score = 0
	}
	res.Label = scoring.LabelFail
	if passed == counted || res.Score >= s.threshold {
		res.Label = scoring.LabelPass
	}
	res.Reason = fmt.Sprintf("%d of %d checks passed", passed, counted)
	if len(failed) > 0 {
		res.Reason += "; failed: " + strings.Join(failed, "; ")
	}
	if len(skipped) > 0 {
		res.Reason += "; skipped (no trajectory): " + strings.Join(skipped, ", ")
	}
	res.Reason += "."
	return res
}

// compileRule validates r and returns its check. Errors start with the
// offending key.
func compileRule(r Rule) (compiledRule, error) {
	used := map[string]bool{"type": true}
	use := func(keys ...string) {
		for _, k := range keys {
			used[k] = true
		}
	}
	var c ruleCheck
	var tc trajectoryCheck
	var err error
	switch r.Type {
	case RuleJSONValid:
		use("allow_code_fence")
		c = jsonValidCheck(r.AllowCodeFence)
	case RuleJSONSchema:
		use("schema", "allow_code_fence")
		c, err = jsonSchemaCheck(r)
	case RuleRegexMatch, RuleRegexAbsent:
		use("pattern", "ignore_case")
		if r.Type == RuleRegexMatch {
			use("min", "max")
		}
		c, err = regexCheck(r)
	case RuleContains, RuleExcludes:
		use("value", "ignore_case", "whole_word")
		if r.Type == RuleContains {
			use("min", "max")
		}
		c, err = containsCheck(r)
	case RuleStartsWith, RuleEndsWith:
		use("value", "ignore_case")
		c, err = affixCheck(r)
	case RuleFirstWord:
		use("value", "ignore_case", "paragraph", "separator")
		c, err = firstWordCheck(r)
	case RuleWords, RuleSentences, RuleParagraphs, RuleCharacters:
		use("min", "max")
		if r.Type == RuleParagraphs {
			use("separator")
		}
		c, err = countCheck(r)
	case RuleLowercase, RuleUppercase:
		c = caseCheck(r.Type == RuleUppercase)
	case RuleLanguage:
		use("value")
		c, err = languageCheck(r.Value)
	case RuleNoPII:
		c, err = noPIICheck()
	case RuleNoSecrets:
		c = noSecretsCheck
	case RuleNotRefusal:
		c = notRefusalCheck
	case RuleToolErrors, RuleMaxSteps, RuleRepeatedToolCalls:
		use("max")
		tc, err = countTrajectoryCheck(r)
	case RuleRequiredTools, RuleForbiddenTools:
		use("tools")
		tc, err = toolNamesCheck(r)
	case "":
		return compiledRule{}, errors.New("type: missing; want one of " + strings.Join(RuleTypes(), ", "))
	default:
		return compiledRule{}, fmt.Errorf("type: unknown rule type %q; want one of %s", r.Type, strings.Join(RuleTypes(), ", "))
	}
	if err != nil {
		return compiledRule{}, err
	}
	if key := unusedKey(r, used); key != "" {
		return compiledRule{}, fmt.Errorf("%s: not used by rule type %s", key, r.Type)
	}
	return compiledRule{text: c, trajectory: tc}, nil
}

// unusedKey names the first field set in r that its type does not read.
func unusedKey(r Rule, used map[string]bool) string {
	set := []struct {
		key string
		on  bool
	}{
		{"pattern", r.Pattern != ""},
		{"value", r.Value != ""},
		{"ignore_case", r.IgnoreCase},
		{"whole_word", r.WholeWord},
		{"min", r.Min != nil},
		{"max", r.Max != nil},
		{"separator", r.Separator != ""},
		{"paragraph", r.Paragraph != 0},
		{"schema", r.Schema != nil},
		{"allow_code_fence", r.AllowCodeFence},
		{"tools", r.Tools != nil},
	}
	for _, s := range set {
		if s.on && !used[s.key] {
			return s.key
		}
	}
	return ""
}

// bounds validates Min and Max. With neither set it returns defMin and no
// upper bound; required demands at least one.
func bounds(r Rule, defMin int, required bool) (lo, hi int, err error) {
	lo, hi = defMin, math.MaxInt
	if r.Min == nil && r.Max == nil && required {
		return 0, 0, errors.New("min: set min, max or both")
	}
	if r.Min != nil {
		if *r.Min < 0 {
			return 0, 0, fmt.Errorf("min: must not be negative, got %d", *r.Min)
		}
		lo = *r.Min
	} else if r.Max != nil {
		lo = 0
	}
	if r.Max != nil {
		if *r.Max < 0 {
			return 0, 0, fmt.Errorf("max: must not be negative, got %d", *r.Max)
		}
		hi = *r.Max
	}
	if lo > hi {
		return 0, 0, fmt.Errorf("max: %d is below min %d", hi, lo)
	}
	return lo, hi, nil
}

// within describes n against lo..hi and reports whether it lies inside.
func within(n, lo, hi int, unit string) (bool, string) {
	switch {
	case hi == math.MaxInt:
		return n >= lo, fmt.Sprintf("%d %s, want at least %d", n, unit, lo)
	case lo == 0:
		return n <= hi, fmt.Sprintf("%d %s, want at most %d", n, unit, hi)
	case lo == hi:
		return n == lo, fmt.Sprintf("%d %s, want exactly %d", n, unit, lo)
	default:
		return n >= lo && n <= hi, fmt.Sprintf("%d %s, want %d to %d", n, unit, lo, hi)
	}
}
