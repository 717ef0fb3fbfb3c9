// Package hallucination is the hallucination scorer: the judge splits an
// output into claims, reading it as the answer to the input, and decides
// for each whether the context contradicts it or fails to support it; the
// score is the share of hallucinated claims. Lower is better.
package hallucination

import (
	"embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
)

// Schema names of the hallucination scorer's replies.
const (
	SchemaClaims   = "hallucination_claims"
	SchemaVerdicts = "hallucination_verdicts"
)

// Claims is the hallucination scorer's preprocess result.
type Claims struct {
	Claims []string `json:"claims"`
}

// Verdicts is the hallucination scorer's analyze result: one entry per claim.
type Verdicts struct {
	Verdicts []Verdict `json:"verdicts"`
	// Reordered is set when the judge returned the verdicts in another
	// order than the claims; they were matched to the claims by the
	// statements it echoed.
	Reordered bool `json:"reordered,omitempty"`
}

// Verdict judges one claim; Verdict "yes" means contradicted by or
// unsupported by the context.
type Verdict struct {
	Statement string `json:"statement"`
	Verdict   string `json:"verdict"`
	Reason    string `json:"reason"`
}

//go:embed *.tmpl
var templates embed.FS

var (
	claimsPrompt   = &pipeline.Prompt{Schema: pipeline.ListSchema(SchemaClaims, "claims"), User: claimsMessage, Demo: demoClaims}
	verdictsPrompt = &pipeline.Prompt{
		Schema: pipeline.ItemsSchema(SchemaVerdicts, "verdicts",
			pipeline.Property{Name: "statement"},
			pipeline.Property{Name: "verdict", Enum: []string{pipeline.VerdictYes, pipeline.VerdictNo}}),
		User: verdictsMessage,
		Demo: demoVerdicts,
	}
)

// Definition is the hallucination scorer.
var Definition = pipeline.Definition{
	Name:          scoring.Hallucination,
	LowerIsBetter: true,
	Sends:         []scoring.Field{scoring.FieldInput, scoring.FieldOutput, scoring.FieldContext},
	NeedsContext:  true,
	Prompts:       pipeline.NewPrompts(templates, nil, claimsPrompt, verdictsPrompt),
	Run:           run,
}

// New returns the hallucination scorer, asking judge.
func New(judge scoring.Judge, opts scoring.Options) (scoring.Scorer, error) {
	return pipeline.New(Definition, judge, opts)
}

var steps = pipeline.ExtractThenJudge{
	Extract:  claimsPrompt,
	Field:    "claims",
	Judge:    verdictsPrompt,
	Verdicts: pipeline.VerdictSpec{Schema: verdictsPrompt.Schema, Field: "verdicts", Keys: []string{"verdict", "result"}, Unit: "claim"},
	None:     "The score is 0 because the output makes no checkable claims.",
	Preprocess: func(claims []string, _ int) any {
		return Claims{Claims: claims}
	},
}

// run is the hallucination pipeline: extract the output's claims, judge
// each against the context, score hallucinated / claims × scale. A claim
// is hallucinated when the context contradicts it or does not support it.
func run(e *pipeline.Evaluation) {
	if strings.TrimSpace(e.Case.Output) == "" {
		// An empty output claims nothing, so nothing in it is hallucinated
		// (the scorer's reference: "empty output yields zero hallucination"),
		// with or without context.
		e.SetScore(0)
		e.SetReason("The score is 0 because the output is empty, so it makes no claims that could be hallucinated.")
		return
	}
	if len(e.Case.Context) == 0 {
		e.NotScorable("The case has no context to check the output's claims against.")
		return
	}
	// Claim extraction sees the question, so that a short answer ("Lyon.")
	// becomes the claim it makes ("The capital of France is Lyon.").
	judged, ok := steps.Run(e,
		pipeline.PromptData{Input: e.Case.Input, Output: e.Case.Output},
		pipeline.PromptData{Context: e.Case.Context, ContextCut: e.Cut(scoring.FieldContext)})
	if !ok {
		return
	}
	claims := judged.Items
	result := Verdicts{Verdicts: make([]Verdict, len(claims)), Reordered: judged.Reordered}
	forJudge := make([]any, len(claims))
	for i, v := range judged.Verdicts {
		// The statement is the claim we sent, not the judge's echo of it,
		// which may drift in wording; the verdicts are in the claims' order.
		result.Verdicts[i] = Verdict{Statement: claims[i], Verdict: v.Verdict, Reason: v.Reason}
		forJudge[i] = result.Verdicts[i]
	}
	hallucinated, reasons := judged.Yes()
	e.Result.Steps.Analyze = result
	e.ScoreRatio(hallucinated, len(claims))
	e.Reason(forJudge, func() string {
		if hallucinated == 0 {
			return fmt.Sprintf("The score is %s because the context supports all %d %s of the output.",
				pipeline.FormatScore(e.Result.Score), len(claims), pipeline.Plural(len(claims), "claim", "claims"))
		}
		return fmt.Sprintf("The score is %s because the context contradicts or does not support %d of %d %s: %s.",
			pipeline.FormatScore(e.Result.Score), hallucinated, len(claims), pipeline.Plural(len(claims), "claim", "claims"),
			pipeline.JoinReasons(reasons))
	})
}

func claimsMessage(b []byte, d pipeline.PromptData) ([]byte, error) {
	b = append(b, "Break this answer to the question into claims.\n\n"...)
	b = pipeline.AppendText(b, "INPUT", d.Input)
	b = append(b, "\n\n"...)
	return pipeline.AppendText(b, "OUTPUT", d.Output), nil
}

func verdictsMessage(b []byte, d pipeline.PromptData) ([]byte, error) {
	n := strconv.Itoa(len(d.Items))
	b = append(b, "Judge each of these "+n+" claims against the context. Return exactly "+n+" verdicts.\n\n"...)
	if d.ContextCut {
		b = append(b, contextCutNote...)
	}
	b = pipeline.AppendList(b, "CONTEXT", d.Context)
	b = append(b, "\n\n"...)
	return pipeline.AppendList(b, "CLAIMS", d.Items), nil
}

// contextCutNote tells the judge that part of the context is missing, so
// that a claim only the missing part could support is not counted against
// the output.
var contextCutNote = "Part of the context is missing: the context items that end with \"" + strings.TrimSpace(scoring.TruncationMarker) + "\" were cut to a length limit before they reached you. " +
	"A claim that the context shown neither supports nor contradicts, and that the missing part could support, is not a hallucination: give it \"no\" and say in the reason that the cut part of the context could not be checked. " +
	"A claim that the context shown contradicts is still \"yes\".\n\n"
