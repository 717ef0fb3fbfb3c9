package scoring

import (
	"cmp"
	"fmt"
	"strings"
)

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

// ContextEvaluations is context_relevance's analyze result, in the shape of
// Mastra's: one evaluation per context item judged, what the answer needed
// that no item had, and the judge's overall assessment.
type ContextEvaluations struct {
	Evaluations       []ContextEvaluation `json:"evaluations"`
	MissingContext    []string            `json:"missingContext"`
	OverallAssessment string              `json:"overallAssessment"`
	// Dropped counts the context items past MaxContextItems that were not
	// judged.
	Dropped int `json:"dropped,omitempty"`
	// Penalties are the deductions made, before scaling.
	UsagePenalty   float64 `json:"usagePenalty"`
	MissingPenalty float64 `json:"missingPenalty"`
}

// ContextEvaluation judges one context item: its relevance to the question
// (high, medium, low or none) and whether the response used it.
type ContextEvaluation struct {
	ContextIndex   int    `json:"context_index"` // from 0, as Mastra numbers them
	ContextPiece   string `json:"contextPiece"`
	RelevanceLevel string `json:"relevanceLevel"`
	WasUsed        bool   `json:"wasUsed"`
	Reasoning      string `json:"reasoning"`
}

// runContextRelevance is the context_relevance pipeline: one analyze call
// judges every context item's relevance to the question and whether the
// response used it, and lists what the answer needed that no item had.
// Score = max(0, mean weight − penalty per unused high-relevance item −
// min(penalty per missing piece × pieces, cap)) × scale, rounded to two
// decimals.
func runContextRelevance(e *evaluation) {
	if strings.TrimSpace(e.c.Input) == "" {
		e.notScorable("The case has no question (input) to judge the context's relevance against.")
		return
	}
	if len(e.c.Context) == 0 {
		e.notScorable("The case has no context: context_relevance judges the retrieved context, and this case records none.")
		return
	}
	items := e.c.Context
	dropped := 0
	if len(items) > MaxContextItems {
		dropped = len(items) - MaxContextItems
		items = items[:MaxContextItems:MaxContextItems]
		e.res.Truncated = true
	}
	msgs, err := render(SchemaContextRelevanceEvaluations, promptData{Scorer: ContextRelevance, Input: e.c.Input, Output: e.c.Output, Context: items})
	if err != nil {
		e.fail(&Error{Type: ErrorInvalidCase, Step: StepAnalyze, Err: err})
		return
	}
	var res ContextEvaluations
	if err := e.ask(StepAnalyze, schemaContextRelevanceEvaluations, msgs, func(reply string) error {
		var perr error
		res, perr = parseContextEvaluations(reply, items)
		return perr
	}); err != nil {
		e.fail(err)
		return
	}
	res.Dropped = dropped

	p := e.s.opts.contextPenalties()
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
	e.res.Steps.Analyze = res
	base := total / float64(len(res.Evaluations))
	e.setFraction(max(0, base-res.UsagePenalty-res.MissingPenalty) * e.s.opts.Scale)
	e.reason(forJudge, func() string {
		n := len(res.Evaluations)
		var b strings.Builder
		fmt.Fprintf(&b, "The score is %s because the %d context %s a mean relevance of %s to the question",
			formatScore(e.res.Score), n, plural(n, "item has", "items have"), formatScore(base))
		if len(weak) > 0 {
			fmt.Fprintf(&b, " (weak: %s)", strings.Join(weak, ", "))
		}
		if unusedHigh > 0 {
			fmt.Fprintf(&b, "; %s %s highly relevant but unused (−%s)", strings.Join(unused, ", "),
				plural(unusedHigh, "was", "were"), formatScore(res.UsagePenalty))
		}
		if len(res.MissingContext) > 0 {
			fmt.Fprintf(&b, "; the answer needed what no item had: %s (−%s)", joinReasons(res.MissingContext), formatScore(res.MissingPenalty))
		}
		if dropped > 0 {
			fmt.Fprintf(&b, " (only the first %d context items were judged; %d more were left out)", MaxContextItems, dropped)
		}
		b.WriteString(".")
		return b.String()
	})
}

// parseContextEvaluations parses a context_relevance analyze reply: one
// evaluation per item, each naming its item number once, with a relevance
// level and whether the response used the item.
func parseContextEvaluations(reply string, items []string) (ContextEvaluations, error) {
	v, err := extractJSON(reply, schemaContextRelevanceEvaluations)
	if err != nil {
		return ContextEvaluations{}, err
	}
	list, err := listField(v, "evaluations", "relevance", "item")
	if err != nil {
		return ContextEvaluations{}, err
	}
	if len(list) != len(items) {
		return ContextEvaluations{}, fmt.Errorf("expected exactly %d items in %q, one per context item in the given order, got %d",
			len(items), "evaluations", len(list))
	}
	parsed := make([]ContextEvaluation, len(list))
	named := make([]int, len(list))
	for i, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			return ContextEvaluations{}, fmt.Errorf("item %d of %q must be an object, got %s", i+1, "evaluations", jsonKind(it))
		}
		raw, ok := lookup(m, "relevance", "relevanceLevel", "relevance_level")
		if !ok {
			return ContextEvaluations{}, fmt.Errorf("item %d of %q has no %q", i+1, "evaluations", "relevance")
		}
		level, ok := verdictValue(raw, relevanceLevels)
		if !ok {
			return ContextEvaluations{}, fmt.Errorf("item %d of %q has relevance %s; it must be exactly %s", i+1, "evaluations", describe(raw), quoteList(relevanceLevels))
		}
		rawUsed, ok := lookup(m, "used", "wasUsed", "was_used")
		if !ok {
			return ContextEvaluations{}, fmt.Errorf("item %d of %q has no %q", i+1, "evaluations", "used")
		}
		used, ok := rawUsed.(bool)
		if !ok {
			return ContextEvaluations{}, fmt.Errorf("item %d of %q has used %s; it must be true or false", i+1, "evaluations", describe(rawUsed))
		}
		parsed[i] = ContextEvaluation{RelevanceLevel: level, WasUsed: used, Reasoning: cmp.Or(optionalString(m, "reason"), optionalString(m, "reasoning"))}
		named[i] = -1
		if rawItem, ok := lookup(m, "item", "number"); ok {
			named[i] = itemNumber(rawItem, len(items)) - 1
		}
	}
	order, _, err := placeVerdicts(named, "context item", "in the given order, with its item number")
	if err != nil {
		return ContextEvaluations{}, err
	}
	out := ContextEvaluations{Evaluations: make([]ContextEvaluation, len(parsed)), MissingContext: []string{}}
	for i, j := range order {
		ev := parsed[j]
		ev.ContextIndex, ev.ContextPiece = i, items[i]
		out.Evaluations[i] = ev
	}
	m, _ := v.(map[string]any)
	if rawMissing, ok := lookup(m, "missing_context", "missingContext"); ok && rawMissing != nil {
		list, ok := rawMissing.([]any)
		if !ok {
			return ContextEvaluations{}, fmt.Errorf("%q must be a list of strings, got %s", "missing_context", jsonKind(rawMissing))
		}
		for k, it := range list {
			s, ok := it.(string)
			if !ok {
				return ContextEvaluations{}, fmt.Errorf("item %d of %q must be a string, got %s", k+1, "missing_context", jsonKind(it))
			}
			if s = strings.TrimSpace(s); s != "" {
				out.MissingContext = append(out.MissingContext, s)
			}
		}
	}
	out.OverallAssessment = optionalString(m, "overall_assessment")
	if out.OverallAssessment == "" {
		out.OverallAssessment = optionalString(m, "overallAssessment")
	}
	return out, nil
}
