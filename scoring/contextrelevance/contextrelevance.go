// Package contextrelevance is the context relevance scorer: in one call
// the judge rates each context item high, medium, low or none for the
// input, says whether the output used it and lists what the answer needed
// that no item had; the score is the mean weight of the items less
// penalties. Higher is better.
package contextrelevance

import (
	"cmp"
	"embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
)

// SchemaEvaluations is the schema name of the context relevance scorer's
// reply.
const SchemaEvaluations = "context_relevance_evaluations"

// MaxContextItems bounds the context items judged in the one call: the
// first MaxContextItems, in retrieval order. A result that dropped some
// has Truncated set.
const MaxContextItems = 50

// Relevance levels of a context item, and what each counts for.
const (
	RelevanceHigh   = "high"
	RelevanceMedium = "medium"
	RelevanceLow    = "low"
	RelevanceNone   = "none"
)

// relevanceLevels are the levels a judge may give, best first.
var relevanceLevels = []string{RelevanceHigh, RelevanceMedium, RelevanceLow, RelevanceNone}

// relevanceWeights are Mastra's weights of the relevance levels.
var relevanceWeights = map[string]float64{RelevanceHigh: 1, RelevanceMedium: 0.7, RelevanceLow: 0.3, RelevanceNone: 0}

// Evaluations is context_relevance's analyze result, in the shape of
// Mastra's: one evaluation per context item judged, what the answer needed
// that no item had, and the judge's overall assessment.
type Evaluations struct {
	Evaluations       []Evaluation `json:"evaluations"`
	MissingContext    []string     `json:"missingContext"`
	OverallAssessment string       `json:"overallAssessment"`
	// Dropped counts the context items past MaxContextItems that were not
	// judged.
	Dropped int `json:"dropped,omitempty"`
	// Penalties are the deductions made, before scaling.
	UsagePenalty   float64 `json:"usagePenalty"`
	MissingPenalty float64 `json:"missingPenalty"`
}

// Evaluation judges one context item: its relevance to the question
// (high, medium, low or none) and whether the response used it.
type Evaluation struct {
	ContextIndex   int    `json:"context_index"` // from 0, as Mastra numbers them
	ContextPiece   string `json:"contextPiece"`
	RelevanceLevel string `json:"relevanceLevel"`
	WasUsed        bool   `json:"wasUsed"`
	Reasoning      string `json:"reasoning"`
}

//go:embed *.tmpl
var templates embed.FS

var evaluationsPrompt = &pipeline.Prompt{Schema: schemaEvaluations, User: evaluationsMessage, Demo: demoEvaluations}

// Definition is the context relevance scorer.
var Definition = pipeline.Definition{
	Name:         scoring.ContextRelevance,
	Sends:        []scoring.Field{scoring.FieldInput, scoring.FieldOutput, scoring.FieldContext},
	NeedsContext: true,
	Prompts:      pipeline.NewPrompts(templates, nil, evaluationsPrompt),
	Run:          run,
}

// New returns the context relevance scorer, asking judge.
func New(judge scoring.Judge, opts scoring.Options) (scoring.Scorer, error) {
	return pipeline.New(Definition, judge, opts)
}

// run is the context_relevance pipeline: one analyze call
// judges every context item's relevance to the question and whether the
// response used it, and lists what the answer needed that no item had.
// Score = max(0, mean weight − penalty per unused high-relevance item −
// min(penalty per missing piece × pieces, cap)) × scale, rounded to two
// decimals.
func run(e *pipeline.Evaluation) {
	if strings.TrimSpace(e.Case.Input) == "" {
		e.NotScorable("The case has no question (input) to judge the context's relevance against.")
		return
	}
	if len(e.Case.Context) == 0 {
		e.NotScorable("The case has no context: context_relevance judges the retrieved context, and this case records none.")
		return
	}
	items := e.Case.Context
	dropped := 0
	if len(items) > MaxContextItems {
		dropped = len(items) - MaxContextItems
		items = items[:MaxContextItems:MaxContextItems]
		e.Limit(fmt.Sprintf("only the first %d context items were judged; %d more were left out", MaxContextItems, dropped))
	}
	var res Evaluations
	if err := e.Ask(scoring.StepAnalyze, evaluationsPrompt, pipeline.PromptData{Input: e.Case.Input, Output: e.Case.Output, Context: items}, func(reply string) error {
		var perr error
		res, perr = parseEvaluations(reply, items)
		return perr
	}); err != nil {
		e.Fail(err)
		return
	}
	res.Dropped = dropped

	p := scoring.DefaultContextPenalties()
	if o := e.Options(); o.ContextPenalties != nil {
		p = *o.ContextPenalties
	}
	total, unusedHigh := 0.0, 0
	forJudge := make([]any, 0, len(res.Evaluations)+1)
	var weak, unused []string
	for _, ev := range res.Evaluations {
		total += relevanceWeights[ev.RelevanceLevel]
		if ev.RelevanceLevel == RelevanceHigh && !ev.WasUsed {
			unusedHigh++
			unused = append(unused, fmt.Sprintf("item %d", ev.ContextIndex+1))
		}
		if ev.RelevanceLevel == RelevanceLow || ev.RelevanceLevel == RelevanceNone {
			weak = append(weak, fmt.Sprintf("item %d (%s)", ev.ContextIndex+1, ev.RelevanceLevel))
		}
		forJudge = append(forJudge, struct {
			Item      int    `json:"item"`
			Relevance string `json:"relevance"`
			Used      bool   `json:"used"`
			Reasoning string `json:"reasoning"`
		}{ev.ContextIndex + 1, ev.RelevanceLevel, ev.WasUsed, ev.Reasoning})
	}
	if len(res.MissingContext) > 0 {
		forJudge = append(forJudge, struct {
			Missing []string `json:"missing_context"`
		}{res.MissingContext})
	}
	res.UsagePenalty = float64(unusedHigh) * p.UnusedHighRelevance
	res.MissingPenalty = min(float64(len(res.MissingContext))*p.MissingPerItem, p.MaxMissing)
	e.Result.Steps.Analyze = res
	base := total / float64(len(res.Evaluations))
	e.SetFraction(max(0, base-res.UsagePenalty-res.MissingPenalty) * e.Options().Scale)
	e.Reason(forJudge, func() string {
		n := len(res.Evaluations)
		var b strings.Builder
		fmt.Fprintf(&b, "The score is %s because the %d context %s a mean relevance of %s to the question",
			pipeline.FormatScore(e.Result.Score), n, pipeline.Plural(n, "item has", "items have"), pipeline.FormatScore(base))
		if len(weak) > 0 {
			fmt.Fprintf(&b, " (weak: %s)", strings.Join(weak, ", "))
		}
		if unusedHigh > 0 {
			fmt.Fprintf(&b, "; %s %s highly relevant but unused (−%s)", strings.Join(unused, ", "),
				pipeline.Plural(unusedHigh, "was", "were"), pipeline.FormatScore(res.UsagePenalty))
		}
		if len(res.MissingContext) > 0 {
			fmt.Fprintf(&b, "; the answer needed what no item had: %s (−%s)", pipeline.JoinReasons(res.MissingContext), pipeline.FormatScore(res.MissingPenalty))
		}
		b.WriteString(".")
		return b.String()
	})
}

// parseEvaluations parses a context_relevance analyze reply: one
// evaluation per item, each naming its item number once, with a relevance
// level and whether the response used the item.
func parseEvaluations(reply string, items []string) (Evaluations, error) {
	v, err := pipeline.ExtractJSON(reply, schemaEvaluations)
	if err != nil {
		return Evaluations{}, err
	}
	list, err := pipeline.ListField(v, "evaluations", "relevance", "item")
	if err != nil {
		return Evaluations{}, err
	}
	if len(list) != len(items) {
		return Evaluations{}, fmt.Errorf("expected exactly %d items in %q, one per context item in the given order, got %d",
			len(items), "evaluations", len(list))
	}
	parsed := make([]Evaluation, len(list))
	named := make([]int, len(list))
	for i, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			return Evaluations{}, fmt.Errorf("item %d of %q must be an object, got %s", i+1, "evaluations", pipeline.JSONKind(it))
		}
		raw, ok := pipeline.Lookup(m, "relevance", "relevanceLevel", "relevance_level")
		if !ok {
			return Evaluations{}, fmt.Errorf("item %d of %q has no %q", i+1, "evaluations", "relevance")
		}
		level, ok := pipeline.VerdictValue(raw, relevanceLevels)
		if !ok {
			return Evaluations{}, fmt.Errorf("item %d of %q has relevance %s; it must be exactly %s", i+1, "evaluations", pipeline.Describe(raw), pipeline.QuoteList(relevanceLevels))
		}
		rawUsed, ok := pipeline.Lookup(m, "used", "wasUsed", "was_used")
		if !ok {
			return Evaluations{}, fmt.Errorf("item %d of %q has no %q", i+1, "evaluations", "used")
		}
		used, ok := rawUsed.(bool)
		if !ok {
			return Evaluations{}, fmt.Errorf("item %d of %q has used %s; it must be true or false", i+1, "evaluations", pipeline.Describe(rawUsed))
		}
		parsed[i] = Evaluation{RelevanceLevel: level, WasUsed: used, Reasoning: cmp.Or(pipeline.OptionalString(m, "reason"), pipeline.OptionalString(m, "reasoning"))}
		named[i] = -1
		if rawItem, ok := pipeline.Lookup(m, "item", "number"); ok {
			named[i] = pipeline.ItemNumber(rawItem, len(items)) - 1
		}
	}
	order, _, err := pipeline.PlaceVerdicts(named, "context item", "in the given order, with its item number")
	if err != nil {
		return Evaluations{}, err
	}
	out := Evaluations{Evaluations: make([]Evaluation, len(parsed)), MissingContext: []string{}}
	for i, j := range order {
		ev := parsed[j]
		ev.ContextIndex, ev.ContextPiece = i, items[i]
		out.Evaluations[i] = ev
	}
	m, _ := v.(map[string]any)
	if rawMissing, ok := pipeline.Lookup(m, "missing_context", "missingContext"); ok && rawMissing != nil {
		list, ok := rawMissing.([]any)
		if !ok {
			return Evaluations{}, fmt.Errorf("%q must be a list of strings, got %s", "missing_context", pipeline.JSONKind(rawMissing))
		}
		for k, it := range list {
			s, ok := it.(string)
			if !ok {
				return Evaluations{}, fmt.Errorf("item %d of %q must be a string, got %s", k+1, "missing_context", pipeline.JSONKind(it))
			}
			if s = strings.TrimSpace(s); s != "" {
				out.MissingContext = append(out.MissingContext, s)
			}
		}
	}
	out.OverallAssessment = pipeline.OptionalString(m, "overall_assessment")
	if out.OverallAssessment == "" {
		out.OverallAssessment = pipeline.OptionalString(m, "overallAssessment")
	}
	return out, nil
}

var schemaEvaluations = &scoring.Schema{Name: SchemaEvaluations, Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "evaluations": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "item": {"type": "integer"},
          "relevance": {"type": "string", "enum": ["high", "medium", "low", "none"]},
          "used": {"type": "boolean"},
          "reason": {"type": "string"}
        },
        "required": ["item", "relevance", "used", "reason"],
        "additionalProperties": false
      }
    },
    "missing_context": {"type": "array", "items": {"type": "string"}},
    "overall_assessment": {"type": "string"}
  },
  "required": ["evaluations", "missing_context", "overall_assessment"],
  "additionalProperties": false
}`)}

// evaluationsMessage sends the case, then the task, which names the
// number of context items: what differs between calls comes last.
func evaluationsMessage(b []byte, d pipeline.PromptData) ([]byte, error) {
	b = pipeline.AppendText(b, "INPUT", d.Input)
	b = append(b, "\n\n"...)
	b = pipeline.AppendText(b, "OUTPUT", d.Output)
	b = append(b, "\n\n"...)
	b = pipeline.AppendList(b, "CONTEXT", d.Context)
	n := strconv.Itoa(len(d.Context))
	return append(b, "\n\nJudge each of these "+n+" context items against the question and the response. Return exactly "+n+" evaluations."...), nil
}
