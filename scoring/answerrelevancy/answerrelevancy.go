// Package answerrelevancy is the answer relevancy scorer: the judge splits
// an output into statements and calls each "yes", "unsure" or "no" against
// the input; the score is the share of relevant statements, an "unsure"
// one counting for Options.UncertaintyWeight. Higher is better.
package answerrelevancy

import (
	"cmp"
	"embed"
	"fmt"
	"strconv"
	"strings"
	"text/template"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
)

// Schema names of the answer relevancy scorer's replies.
const (
	SchemaStatements = "answer_relevancy_statements"
	SchemaResults    = "answer_relevancy_results"
)

// MaxStatements bounds the statements judged: the first MaxStatements are
// kept, and a result that dropped some has Truncated set.
const MaxStatements = 100

// Statements is answer_relevancy's preprocess result.
type Statements struct {
	Statements []string `json:"statements"`
	// Dropped counts the statements past MaxStatements that were not
	// judged.
	Dropped int `json:"dropped,omitempty"`
}

// Results is answer_relevancy's analyze result: one entry per
// statement.
type Results struct {
	Results   []Result `json:"results"`
	Reordered bool     `json:"reordered,omitempty"`
}

// Result judges one statement against the question: "yes" answers it,
// "unsure" is partly relevant, "no" is unrelated.
type Result struct {
	Statement string `json:"statement"`
	Result    string `json:"result"`
	Reason    string `json:"reason"`
}

// verdictUnsure is answer_relevancy's third verdict.
const verdictUnsure = "unsure"

//go:embed *.tmpl
var templates embed.FS

var (
	statementsPrompt = &pipeline.Prompt{Schema: pipeline.ListSchema(SchemaStatements, "statements"), User: statementsMessage, Demo: demoStatements}
	resultsPrompt    = &pipeline.Prompt{
		Schema: pipeline.ItemsSchema(SchemaResults, "results",
			pipeline.Property{Name: "statement"},
			pipeline.Property{Name: "result", Enum: []string{pipeline.VerdictYes, verdictUnsure, pipeline.VerdictNo}}),
		User: resultsMessage,
		Demo: demoResults,
	}
)

// Definition is the answer relevancy scorer.
var Definition = pipeline.Definition{
	Name:  scoring.AnswerRelevancy,
	Sends: []scoring.Field{scoring.FieldInput, scoring.FieldOutput, scoring.FieldTurns},
	// A follow-up ("and in winter?") is only a question with the
	// conversation before it.
	History: true,
	Prompts: pipeline.NewPrompts(templates, template.FuncMap{"maxStatements": func() int { return MaxStatements }},
		statementsPrompt, resultsPrompt),
	Run: run,
}

// New returns the answer relevancy scorer, asking judge.
func New(judge scoring.Judge, opts scoring.Options) (scoring.Scorer, error) {
	return pipeline.New(Definition, judge, opts)
}

var steps = pipeline.ExtractThenJudge{
	Extract:  statementsPrompt,
	Field:    "statements",
	Judge:    resultsPrompt,
	Verdicts: pipeline.VerdictSpec{Schema: resultsPrompt.Schema, Field: "results", Keys: []string{"result", "verdict"}, Unit: "statement"},
	MaxItems: MaxStatements,
	Units:    "statements",
	None:     "The score is 0 because the output makes no statement that could answer the question.",
	Preprocess: func(statements []string, dropped int) any {
		return Statements{Statements: statements, Dropped: dropped}
	},
}

// run is the answer_relevancy pipeline: extract the output's statements,
// judge each against the question (yes, unsure or no), score (yes +
// weight × unsure) / statements × scale, rounded to two decimals.
func run(e *pipeline.Evaluation) {
	if strings.TrimSpace(e.Case.Input) == "" {
		e.NotScorable("The case has no question (input) to judge the answer's relevance against.")
		return
	}
	if strings.TrimSpace(e.Case.Output) == "" {
		// Mastra scores an empty output 0: no statement answers anything.
		e.SetScore(0)
		e.SetReason("The score is 0 because the output is empty, so nothing in it answers the question.")
		return
	}
	judged, ok := steps.Run(e, pipeline.PromptData{Output: e.Case.Output}, pipeline.PromptData{Input: e.Case.Input, Turns: pipeline.HistoryLines(e.Case.Turns)})
	if !ok {
		return
	}
	results := Results{Results: make([]Result, len(judged.Items)), Reordered: judged.Reordered}
	w := scoring.DefaultUncertaintyWeight
	if o := e.Options(); o.UncertaintyWeight != nil {
		w = *o.UncertaintyWeight
	}
	yes, unsure := 0, 0
	relevant := 0.0 // summed in statement order, as Mastra sums, so the floats agree
	var off []string
	forJudge := make([]any, len(judged.Items))
	for i, v := range judged.Verdicts {
		r := Result{Statement: judged.Items[i], Result: v.Verdict, Reason: v.Reason}
		results.Results[i] = r
		forJudge[i] = r
		switch r.Result {
		case pipeline.VerdictYes:
			yes++
			relevant++
		case verdictUnsure:
			unsure++
			relevant += w
		default:
			off = append(off, cmp.Or(r.Reason, r.Statement))
		}
	}
	e.Result.Steps.Analyze = results
	n := len(results.Results)
	e.SetFraction(relevant / float64(n) * e.Options().Scale)
	e.Reason(forJudge, func() string {
		s := fmt.Sprintf("The score is %s because %d of %d %s %s the question directly and %d %s partly relevant",
			pipeline.FormatScore(e.Result.Score), yes, n, pipeline.Plural(n, "statement", "statements"), pipeline.Plural(yes, "answers", "answer"),
			unsure, pipeline.Plural(unsure, "is", "are"))
		if len(off) > 0 {
			s += "; unrelated: " + pipeline.JoinReasons(off)
		}
		return s + "."
	})
}

func statementsMessage(b []byte, d pipeline.PromptData) ([]byte, error) {
	b = append(b, "Break this response into statements.\n\n"...)
	return pipeline.AppendText(b, "OUTPUT", d.Output), nil
}

// resultsMessage sends the conversation before the question (on a
// follow-up), the question and the statements, then the task, which names
// their number, and how to read the history: what differs between calls
// comes last.
func resultsMessage(b []byte, d pipeline.PromptData) ([]byte, error) {
	b, err := pipeline.AppendHistory(b, d)
	if err != nil {
		return nil, err
	}
	b = pipeline.AppendText(b, "INPUT", d.Input)
	b = append(b, "\n\n"...)
	b = pipeline.AppendList(b, "STATEMENTS", d.Items)
	n := strconv.Itoa(len(d.Items))
	b = append(b, "\n\nJudge how relevant each of these "+n+" statements is to the question. Return exactly "+n+" results."...)
	if d.Turns != nil {
		// Said here, not in the system prompt, so that only a follow-up
		// pays for it.
		b = append(b, "\n\nThe HISTORY block is the conversation before the question, one message a line (\"role\" is \"user\" or \"assistant\"; an \"omitted_turns\" line stands for earlier messages left out). "+
			"Use it only to understand what the question refers to (\"And in winter?\" after a question about Lisbon's weather asks about Lisbon's weather in winter), "+
			"then judge the statements against the question so understood, not against earlier questions."...)
	}
	return b, nil
}
