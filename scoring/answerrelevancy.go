package scoring

import (
	"cmp"
	"fmt"
	"strings"
)

// Statements is answer_relevancy's preprocess result.
type Statements struct {
	Statements []string `json:"statements"`
	// Dropped counts the statements past MaxStatements that were not
	// judged.
	Dropped int `json:"dropped,omitempty"`
}

// RelevancyResults is answer_relevancy's analyze result: one entry per
// statement.
type RelevancyResults struct {
	Results   []RelevancyResult `json:"results"`
	Reordered bool              `json:"reordered,omitempty"`
}

// RelevancyResult judges one statement against the question: "yes"
// answers it, "unsure" is partly relevant, "no" is unrelated.
type RelevancyResult struct {
	Statement string `json:"statement"`
	Result    string `json:"result"`
	Reason    string `json:"reason"`
}

// verdictUnsure is answer_relevancy's third verdict.
const verdictUnsure = "unsure"

// runAnswerRelevancy is the answer_relevancy pipeline: extract the output's
// statements, judge each against the question (yes, unsure or no), score
// (yes + weight × unsure) / statements × scale, rounded to two decimals.
func runAnswerRelevancy(e *evaluation) {
	if strings.TrimSpace(e.c.Input) == "" {
		e.notScorable("The case has no question (input) to judge the answer's relevance against.")
		return
	}
	if strings.TrimSpace(e.c.Output) == "" {
		// Mastra scores an empty output 0: no statement answers anything.
		e.setScore(0)
		e.setReason("The score is 0 because the output is empty, so nothing in it answers the question.")
		return
	}

	msgs, err := render(SchemaAnswerRelevancyStatements, promptData{Scorer: AnswerRelevancy, Output: e.c.Output})
	if err != nil {
		e.fail(&Error{Type: ErrorInvalidCase, Step: StepPreprocess, Err: err})
		return
	}
	var statements []string
	if err := e.ask(StepPreprocess, schemaAnswerRelevancyStatements, msgs, func(reply string) error {
		var perr error
		statements, perr = parseStrings(reply, schemaAnswerRelevancyStatements, "statements")
		return perr
	}); err != nil {
		e.fail(err)
		return
	}
	pre := Statements{Statements: statements}
	if len(statements) > MaxStatements {
		pre = Statements{Statements: statements[:MaxStatements:MaxStatements], Dropped: len(statements) - MaxStatements}
		statements = pre.Statements
		e.res.Truncated = true
	}
	e.res.Steps.Preprocess = pre
	if len(statements) == 0 {
		e.setScore(0)
		e.setReason("The score is 0 because the output makes no statement that could answer the question.")
		return
	}

	msgs, err = render(SchemaAnswerRelevancyResults, promptData{Scorer: AnswerRelevancy, Input: e.c.Input, Items: statements})
	if err != nil {
		e.fail(&Error{Type: ErrorInvalidCase, Step: StepAnalyze, Err: err})
		return
	}
	var results RelevancyResults
	if err := e.ask(StepAnalyze, schemaAnswerRelevancyResults, msgs, func(reply string) error {
		var perr error
		results, perr = parseRelevancyResults(reply, statements)
		return perr
	}); err != nil {
		e.fail(err)
		return
	}
	e.res.Steps.Analyze = results
	w := e.s.opts.uncertaintyWeight()
	yes, unsure := 0, 0
	relevant := 0.0 // summed in statement order, as Mastra sums, so the floats agree
	var off []string
	forJudge := make([]any, len(results.Results))
	for i, r := range results.Results {
		forJudge[i] = r
		switch r.Result {
		case verdictYes:
			yes++
			relevant++
		case verdictUnsure:
			unsure++
			relevant += w
		default:
			off = append(off, cmp.Or(r.Reason, r.Statement))
		}
	}
	n := len(results.Results)
	e.setFraction(relevant / float64(n) * e.s.opts.Scale)
	e.reason(forJudge, func() string {
		s := fmt.Sprintf("The score is %s because %d of %d %s %s the question directly and %d %s partly relevant",
			formatScore(e.res.Score), yes, n, plural(n, "statement", "statements"), plural(yes, "answers", "answer"),
			unsure, plural(unsure, "is", "are"))
		if len(off) > 0 {
			s += "; unrelated: " + joinReasons(off)
		}
		if pre.Dropped > 0 {
			s += fmt.Sprintf(" (only the first %d statements were judged; %d more were left out)", MaxStatements, pre.Dropped)
		}
		return s + "."
	})
}

// parseRelevancyResults parses an answer_relevancy analyze reply: exactly
// one result per statement, each yes, unsure or no, put in the
// statements' order by the statement each echoes.
func parseRelevancyResults(reply string, statements []string) (RelevancyResults, error) {
	spec := verdictSpec{schema: schemaAnswerRelevancyResults, field: "results", keys: []string{"result", "verdict"}, unit: "statement"}
	allowed := shapeOf(spec.schema).allowed("result", verdictYes, verdictUnsure, verdictNo)
	v, err := extractJSON(reply, spec.schema)
	if err != nil {
		return RelevancyResults{}, err
	}
	list, err := listField(v, spec.field, spec.keys...)
	if err != nil {
		return RelevancyResults{}, err
	}
	if len(list) != len(statements) {
		return RelevancyResults{}, fmt.Errorf("expected exactly %d items in %q, one per statement in the given order, got %d",
			len(statements), spec.field, len(list))
	}
	parsed := make([]judged, len(list))
	for i, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			return RelevancyResults{}, fmt.Errorf("item %d of %q must be an object, got %s", i+1, spec.field, jsonKind(it))
		}
		raw, ok := lookup(m, spec.keys...)
		if !ok {
			return RelevancyResults{}, fmt.Errorf("item %d of %q has no %q", i+1, spec.field, "result")
		}
		verdict, ok := verdictValue(raw, allowed)
		if !ok {
			return RelevancyResults{}, fmt.Errorf("item %d of %q has result %s; it must be exactly %s", i+1, spec.field, describe(raw), quoteList(allowed))
		}
		parsed[i] = judged{Verdict: verdict, Reason: optionalString(m, "reason"), Statement: optionalString(m, "statement")}
	}
	ordered, reordered, err := matchStatements(parsed, statements, spec)
	if err != nil {
		return RelevancyResults{}, err
	}
	out := RelevancyResults{Results: make([]RelevancyResult, len(ordered)), Reordered: reordered}
	for i, j := range ordered {
		out.Results[i] = RelevancyResult{Statement: statements[i], Result: j.Verdict, Reason: j.Reason}
	}
	return out, nil
}
