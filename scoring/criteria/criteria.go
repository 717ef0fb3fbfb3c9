// Package criteria is the criteria scorer (G-Eval style): one custom
// criterion per scorer, configured with a name, the criteria text,
// optional evaluation steps, the fields the judge sees and a verdict, a
// score of 0 to 10 points or yes or no. One judge call gives the score and
// its reason. Higher is better. Several may run side by side, each under
// its configured name.
package criteria

import (
	"cmp"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
)

// Schema names of the criteria scorer's replies.
const (
	SchemaScore  = "criteria_score"
	SchemaBinary = "criteria_binary"
	SchemaSteps  = "criteria_steps"
)

// Verdict is how a criteria scorer's judge answers.
type Verdict string

// Criteria verdicts.
const (
	// Score asks for a whole number from 0 to 10, scaled to
	// 0..Options.Scale.
	Score Verdict = "score"
	// Binary asks for yes (meets the criterion: the scale) or no (0).
	Binary Verdict = "binary"
)

// criteriaPoints is the top of the score the judge gives in CriteriaScore.
const criteriaPoints = 10

// Config describes one custom criterion. Its field names match the
// configuration keys, and Validate's errors start with the key at fault.
type Config struct {
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
	Fields []scoring.Field
	// Verdict is Score (default) or Binary.
	Verdict Verdict
}

// Validate reports the first problem of c, starting with the key at fault
// (name, criteria, steps, fields or verdict).
func (c Config) Validate() error {
	if strings.TrimSpace(c.Name) == "" {
		return errors.New("name: must be set")
	}
	if err := scoring.CheckName(c.Name); err != nil {
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
		case scoring.FieldInput, scoring.FieldOutput, scoring.FieldContext, scoring.FieldInstructions:
		default:
			return fmt.Errorf("fields: unknown field %q: want %s, %s, %s or %s", f, scoring.FieldInput, scoring.FieldOutput, scoring.FieldContext, scoring.FieldInstructions)
		}
	}
	switch c.Verdict {
	case "", Score, Binary:
	default:
		return fmt.Errorf("verdict: unknown verdict %q: want %q or %q", c.Verdict, Score, Binary)
	}
	return nil
}

// New returns a scorer that judges cases against cfg's criterion
// with one judge call, which gives the score and its reason together.
// Without cfg.Steps, the scorer's first evaluation makes one more call to
// have the judge write evaluation steps for the criterion; they are kept
// and used for every case. Higher is
// better: the score is the share of the criterion met times the scale, and
// the case passes when score >= threshold (default half the scale; the
// scale itself in strict mode, where anything short of full marks is 0).
// A case without the context or instructions a criterion uses is not
// scorable. It reports an invalid cfg, a nil judge and invalid options.
func New(cfg Config, judge scoring.Judge, opts scoring.Options) (scoring.Scorer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("criteria scorer: %w", err)
	}
	c := criterion{
		generated: &stepsMemo{},
		name:      cfg.Name,
		text:      strings.TrimSpace(cfg.Criteria),
		binary:    cfg.Verdict == Binary,
		fields:    map[scoring.Field]bool{scoring.FieldOutput: true},
	}
	for _, s := range cfg.Steps {
		c.steps = append(c.steps, strings.TrimSpace(s))
	}
	fields := cfg.Fields
	if len(fields) == 0 {
		fields = []scoring.Field{scoring.FieldInput, scoring.FieldOutput}
	}
	sends := []scoring.Field{scoring.FieldOutput}
	for _, f := range fields {
		if !c.fields[f] {
			c.fields[f] = true
			sends = append(sends, f)
		}
	}
	return pipeline.New(pipeline.Definition{
		Name:         cfg.Name,
		Sends:        sends,
		NeedsContext: c.fields[scoring.FieldContext],
		Prompts:      prompts,
		Run:          c.run,
	}, judge, opts)
}

// criterion is a validated Config, as the prompts see it.
type criterion struct {
	// generated holds the steps written for text when steps is empty.
	generated *stepsMemo
	name      string
	text      string
	steps     []string
	binary    bool
	fields    map[scoring.Field]bool
}

// Name, Text, Steps, Binary and Uses are what the templates read.
func (c *criterion) Name() string       { return c.name }
func (c *criterion) Text() string       { return c.text }
func (c *criterion) Steps() []string    { return c.steps }
func (c *criterion) Binary() bool       { return c.binary }
func (c *criterion) Uses(f string) bool { return c.fields[scoring.Field(f)] }

// prompt is the analyze prompt: a score, or yes or no.
func (c *criterion) prompt() *pipeline.Prompt {
	if c.binary {
		return binaryPrompt
	}
	return scorePrompt
}

// Result is a criteria scorer's analyze result.
type Result struct {
	// Verdict is "yes" or "no" for Binary.
	Verdict string `json:"verdict,omitempty"`
	// Points is the judge's 0–10 score for Score.
	Points *int   `json:"points,omitempty"`
	Reason string `json:"reason"`
}

// run is the criteria pipeline: the evaluation steps (configured, or
// generated once), then one analyze call that gives the score and its
// reason.
func (c *criterion) run(e *pipeline.Evaluation) {
	instructions := nonBlank(e.Case.Instructions)
	for _, need := range []struct {
		field scoring.Field
		have  bool
	}{{scoring.FieldContext, len(e.Case.Context) > 0}, {scoring.FieldInstructions, len(instructions) > 0}} {
		if c.fields[need.field] && !need.have {
			e.NotScorable(fmt.Sprintf("The case has no %s, which the criterion %s uses.", need.field, c.name))
			return
		}
	}
	steps, ok := c.evaluationSteps(e)
	if !ok {
		return
	}
	withSteps := *c
	withSteps.steps = steps
	var v judged
	if err := e.Ask(scoring.StepAnalyze, c.prompt(), pipeline.PromptData{
		Criterion:    &withSteps,
		Input:        e.Case.Input,
		Output:       e.Case.Output,
		Context:      e.Case.Context,
		Instructions: instructions,
	}, func(reply string) error {
		var perr error
		v, perr = parseCriteria(reply, c.binary)
		return perr
	}); err != nil {
		e.Fail(err)
		return
	}
	result := Result{Reason: v.Reason}
	if c.binary {
		result.Verdict = v.Verdict
		met := 0
		if pipeline.IsYes(v.Verdict) {
			met = 1
		}
		e.ScoreRatio(met, 1)
	} else {
		p := v.points
		result.Points = &p
		e.ScoreRatio(p, criteriaPoints)
	}
	e.Result.Steps.Analyze = result
	// The analyze reply carries the reason: no reason call follows.
	why := strings.TrimRight(cmp.Or(v.Reason, "the judge gave no reason"), ". ")
	e.SetReason(fmt.Sprintf("The score is %s for %s: %s.", pipeline.FormatScore(e.Result.Score), c.name, why))
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

// judged is a criteria analyze reply: a verdict (binary) or points
// (score), and its reason.
type judged struct {
	Verdict string
	Reason  string
	points  int // 0..10
}

// parseCriteria parses a criteria analyze reply: a verdict (binary) or a
// whole number of points from 0 to 10 (score), and a reason.
func parseCriteria(reply string, binary bool) (judged, error) {
	schema := scorePrompt.Schema
	if binary {
		schema = binaryPrompt.Schema
	}
	v, err := pipeline.ExtractJSON(reply, schema)
	if err != nil {
		return judged{}, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		if l, isList := v.([]any); isList && len(l) == 1 {
			m, ok = l[0].(map[string]any)
		}
		if !ok {
			return judged{}, fmt.Errorf("the reply must be one JSON object, got %s", pipeline.JSONKind(v))
		}
	}
	out := judged{Reason: pipeline.OptionalString(m, "reason")}
	if out.Reason == "" {
		// The reply's reason is the result's reason: no reason call follows.
		return judged{}, errors.New(`the reply has no "reason"; give one or two sentences saying why`)
	}
	if binary {
		raw, ok := pipeline.Lookup(m, "verdict", "result")
		if !ok {
			return judged{}, errors.New(`the reply has no "verdict"`)
		}
		allowed := pipeline.Allowed(schema, "verdict", pipeline.VerdictYes, pipeline.VerdictNo)
		verdict, ok := pipeline.VerdictValue(raw, allowed)
		if !ok {
			return judged{}, fmt.Errorf(`the "verdict" is %s; it must be %s`, pipeline.Describe(raw), pipeline.QuoteList(allowed))
		}
		out.Verdict = verdict
		return out, nil
	}
	raw, ok := pipeline.Lookup(m, "score", "points")
	if !ok {
		return judged{}, errors.New(`the reply has no "score"`)
	}
	p, ok := wholePoints(raw)
	if !ok {
		return judged{}, fmt.Errorf(`the "score" is %s; it must be a whole number from 0 to %d`, pipeline.Describe(raw), criteriaPoints)
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

//go:embed *.tmpl
var templates embed.FS

var (
	// The reason comes first in the analyze replies so the judge explains
	// before it decides.
	scorePrompt = &pipeline.Prompt{Schema: &scoring.Schema{Name: SchemaScore, Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "reason": {"type": "string"},
    "score": {"type": "integer"}
  },
  "required": ["reason", "score"],
  "additionalProperties": false
}`)}, User: criterionMessage, Demo: demoScore}
	binaryPrompt = &pipeline.Prompt{Schema: &scoring.Schema{Name: SchemaBinary, Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "reason": {"type": "string"},
    "verdict": {"type": "string", "enum": ["yes", "no"]}
  },
  "required": ["reason", "verdict"],
  "additionalProperties": false
}`)}, User: criterionMessage, Demo: demoBinary}
	stepsPrompt = &pipeline.Prompt{Schema: pipeline.ListSchema(SchemaSteps, "steps"), User: stepsMessage, Demo: demoSteps}

	prompts = pipeline.NewPrompts(templates, nil, scorePrompt, binaryPrompt, stepsPrompt)
)

// Prompts are the criteria scorers' prompts.
func Prompts() *pipeline.Prompts { return prompts }

// errNoCriterion is the error of a criteria prompt rendered without its
// criterion.
var errNoCriterion = errors.New("no criterion")

func criterionMessage(b []byte, d pipeline.PromptData) ([]byte, error) {
	c := d.Criterion
	if c == nil {
		return nil, errNoCriterion
	}
	b = append(b, `Judge the response against the criterion "`+c.Name()+`".`...)
	if c.Uses(string(scoring.FieldInput)) {
		b = pipeline.AppendText(append(b, "\n\n"...), "INPUT", d.Input)
	}
	if c.Uses(string(scoring.FieldContext)) {
		b = pipeline.AppendList(append(b, "\n\n"...), "CONTEXT", d.Context)
	}
	if c.Uses(string(scoring.FieldInstructions)) {
		b = pipeline.AppendList(append(b, "\n\n"...), "INSTRUCTIONS", d.Instructions)
	}
	return pipeline.AppendText(append(b, "\n\n"...), "OUTPUT", d.Output), nil
}

func stepsMessage(b []byte, d pipeline.PromptData) ([]byte, error) {
	if d.Criterion == nil {
		return nil, errNoCriterion
	}
	b = append(b, "Write the evaluation steps for this criterion.\n\n"...)
	return pipeline.AppendText(b, "CRITERION", d.Criterion.Text()), nil
}
