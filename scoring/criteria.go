package scoring

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Criteria is the kind of scorer NewCriteria builds: one custom criterion
// judged by the LLM (G-Eval style). Each criteria scorer carries its own
// configured name, which is what Name and Result.Scorer report.
const Criteria = "criteria"

// CriteriaVerdict is how a criteria scorer's judge answers.
type CriteriaVerdict string

// Criteria verdicts.
const (
	// CriteriaScore asks for a whole number from 0 to 10, scaled to
	// 0..Options.Scale.
	CriteriaScore CriteriaVerdict = "score"
	// CriteriaBinary asks for yes (meets the criterion: the scale) or no (0).
	CriteriaBinary CriteriaVerdict = "binary"
)

// Field is a part of a Case a criteria scorer shows the judge.
type Field string

// Fields.
const (
	FieldInput        Field = "input"
	FieldOutput       Field = "output"
	FieldContext      Field = "context"
	FieldInstructions Field = "instructions" // the system instructions
)

// criteriaPoints is the top of the score the judge gives in CriteriaScore.
const criteriaPoints = 10

// CriteriaConfig describes one custom criterion. Its field names match the
// configuration keys, and Validate's errors start with the key at fault.
type CriteriaConfig struct {
	// Name identifies the scorer in results and telemetry
	// (gen_ai.evaluation.name): lowercase letters, digits and underscores,
	// starting with a letter, and none of the built-in scorer names.
	Name string
	// Criteria says, in plain words, what a good response does.
	Criteria string
	// Steps are optional evaluation steps the judge follows in order.
	// Without them the judge writes steps for the criterion once, on the
	// scorer's first evaluation, and every case is judged by those.
	Steps []string
	// Fields are what the judge sees (default input and output). The
	// output is always shown.
	Fields []Field
	// Verdict is CriteriaScore (default) or CriteriaBinary.
	Verdict CriteriaVerdict
}

var customNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// checkCustomName reports a name a configured scorer (criteria, named
// checks) cannot report results under: not lowercase letters, digits and
// underscores starting with a letter, or the name of a built-in scorer or
// kind, which telemetry could not tell apart from it.
func checkCustomName(name string) error {
	switch {
	case !customNamePattern.MatchString(name):
		return fmt.Errorf("name: %q must be lowercase letters, digits and underscores, starting with a letter", name)
	case slices.Contains(Names(), name) || name == Criteria || name == Checks:
		return fmt.Errorf("name: %q is a built-in scorer name; choose another", name)
	}
	return nil
}

// Validate reports the first problem of c, starting with the key at fault
// (name, criteria, steps, fields or verdict).
func (c CriteriaConfig) Validate() error {
	if strings.TrimSpace(c.Name) == "" {
		return errors.New("name: must be set")
	}
	if err := checkCustomName(c.Name); err != nil {
		return err
	}
	if strings.TrimSpace(c.Criteria) == "" {
		return errors.New("criteria: must be set")
	}
	for i, s := range c.Steps {
		if strings.TrimSpace(s) == "" {
			return fmt.Errorf("steps: step %d is empty", i+1)
		}
	}
	for _, f := range c.Fields {
		switch f {
		case FieldInput, FieldOutput, FieldContext, FieldInstructions:
		default:
			return fmt.Errorf("fields: unknown field %q: want %s, %s, %s or %s", f, FieldInput, FieldOutput, FieldContext, FieldInstructions)
		}
	}
	switch c.Verdict {
	case "", CriteriaScore, CriteriaBinary:
	default:
		return fmt.Errorf("verdict: unknown verdict %q: want %q or %q", c.Verdict, CriteriaScore, CriteriaBinary)
	}
	return nil
}

// NewCriteria returns a scorer that judges cases against cfg's criterion
// with one judge call, which gives the score and its reason together.
// Without cfg.Steps, the scorer's first evaluation makes one more call to
// have the judge write evaluation steps for the criterion; they are kept
// and used for every case. Higher is
// better: the score is the share of the criterion met times the scale, and
// the case passes when score >= threshold (default half the scale; the
// scale itself in strict mode, where anything short of full marks is 0).
// A case without the context or instructions a criterion uses is not
// scorable. It reports an invalid cfg, a nil judge and invalid options.
func NewCriteria(cfg CriteriaConfig, judge Judge, opts Options) (Scorer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("criteria scorer: %w", err)
	}
	c := criterion{
		generated: &stepsMemo{},
		name:      cfg.Name,
		text:      strings.TrimSpace(cfg.Criteria),
		binary:    cfg.Verdict == CriteriaBinary,
		fields:    map[Field]bool{FieldOutput: true},
	}
	for _, s := range cfg.Steps {
		c.steps = append(c.steps, strings.TrimSpace(s))
	}
	fields := cfg.Fields
	if len(fields) == 0 {
		fields = []Field{FieldInput, FieldOutput}
	}
	for _, f := range fields {
		c.fields[f] = true
	}
	spec := scorerSpec{name: cfg.Name, sends: c.fields, run: c.run}
	return newScorer(spec, judge, opts)
}

// criterion is a validated CriteriaConfig, as the prompts see it.
type criterion struct {
	// generated holds the steps written for text when steps is empty.
	generated *stepsMemo
	name      string
	text      string
	steps     []string
	binary    bool
	fields    map[Field]bool
}

// Name, Text, Steps, Binary and Uses are what the templates read.
func (c *criterion) Name() string       { return c.name }
func (c *criterion) Text() string       { return c.text }
func (c *criterion) Steps() []string    { return c.steps }
func (c *criterion) Binary() bool       { return c.binary }
func (c *criterion) Uses(f string) bool { return c.fields[Field(f)] }

// schema is the reply the judge gives; its name is also the prompt's.
func (c *criterion) schema() *Schema {
	if c.binary {
		return schemaCriteriaBinary
	}
	return schemaCriteriaScore
}

// CriteriaResult is a criteria scorer's analyze result.
type CriteriaResult struct {
	// Verdict is "yes" or "no" for CriteriaBinary.
	Verdict string `json:"verdict,omitempty"`
	// Points is the judge's 0–10 score for CriteriaScore.
	Points *int   `json:"points,omitempty"`
	Reason string `json:"reason"`
}

// run is the criteria pipeline: the evaluation steps (configured, or
// generated once), then one analyze call that gives the score and its
// reason.
func (c *criterion) run(e *evaluation) {
	instructions := nonBlank(e.c.Instructions)
	for _, need := range []struct {
		field Field
		have  bool
	}{{FieldContext, len(e.c.Context) > 0}, {FieldInstructions, len(instructions) > 0}} {
		if c.fields[need.field] && !need.have {
			e.notScorable(fmt.Sprintf("The case has no %s, which the criterion %s uses.", need.field, c.name))
			return
		}
	}
	steps, ok := c.evaluationSteps(e)
	if !ok {
		return
	}
	withSteps := *c
	withSteps.steps = steps
	msgs, err := render(c.schema().Name, promptData{
		Scorer:       c.name,
		Criterion:    &withSteps,
		Input:        e.c.Input,
		Output:       e.c.Output,
		Context:      e.c.Context,
		Instructions: instructions,
	})
	if err != nil {
		e.fail(&Error{Type: ErrorInvalidCase, Step: StepAnalyze, Err: err})
		return
	}
	var v judged
	if err := e.ask(StepAnalyze, c.schema(), msgs, func(reply string) error {
		var perr error
		v, perr = parseCriteria(reply, c.binary)
		return perr
	}); err != nil {
		e.fail(err)
		return
	}
	result := CriteriaResult{Reason: v.Reason}
	if c.binary {
		result.Verdict = v.Verdict
		met := 0
		if isYes(v.Verdict) {
			met = 1
		}
		e.scoreRatio(met, 1)
	} else {
		p := v.points
		result.Points = &p
		e.scoreRatio(p, criteriaPoints)
	}
	e.res.Steps.Analyze = result
	// The analyze reply carries the reason: no reason call follows.
	why := strings.TrimRight(cmp.Or(v.Reason, "the judge gave no reason"), ". ")
	e.setReason(fmt.Sprintf("The score is %s for %s: %s.", formatScore(e.res.Score), c.name, why))
}

// nonBlank returns the items of list that are not blank.
func nonBlank(list []string) []string {
	var out []string
	for _, s := range list {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

// parseCriteria parses a criteria analyze reply: a verdict (binary) or a
// whole number of points from 0 to 10 (score), and a reason.
func parseCriteria(reply string, binary bool) (judged, error) {
	schema := schemaCriteriaScore
	if binary {
		schema = schemaCriteriaBinary
	}
	v, err := extractJSON(reply, schema)
	if err != nil {
		return judged{}, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		if l, isList := v.([]any); isList && len(l) == 1 {
			m, ok = l[0].(map[string]any)
		}
		if !ok {
			return judged{}, fmt.Errorf("the reply must be one JSON object, got %s", jsonKind(v))
		}
	}
	out := judged{Reason: optionalString(m, "reason")}
	if out.Reason == "" {
		// The reply's reason is the result's reason: no reason call follows.
		return judged{}, errors.New(`the reply has no "reason"; give one or two sentences saying why`)
	}
	if binary {
		raw, ok := lookup(m, "verdict", "result")
		if !ok {
			return judged{}, errors.New(`the reply has no "verdict"`)
		}
		allowed := shapeOf(schema).allowed("verdict", verdictYes, verdictNo)
		verdict, ok := verdictValue(raw, allowed)
		if !ok {
			return judged{}, fmt.Errorf(`the "verdict" is %s; it must be %s`, describe(raw), quoteList(allowed))
		}
		out.Verdict = verdict
		return out, nil
	}
	raw, ok := lookup(m, "score", "points")
	if !ok {
		return judged{}, errors.New(`the reply has no "score"`)
	}
	p, ok := wholePoints(raw)
	if !ok {
		return judged{}, fmt.Errorf(`the "score" is %s; it must be a whole number from 0 to %d`, describe(raw), criteriaPoints)
	}
	out.points = p
	return out, nil
}

// wholePoints reads a score of 0..10 written as a number or a numeric
// string ("7", "7/10"); fractions are rejected rather than rounded.
func wholePoints(raw any) (int, bool) {
	var s string
	switch t := raw.(type) {
	case json.Number:
		s = t.String()
	case string:
		s = strings.TrimSuffix(strings.ReplaceAll(strings.TrimSpace(t), " ", ""), "/10")
	default:
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || f < 0 || f > criteriaPoints {
		return 0, false
	}
	return int(f), true
}
