// Package promptalignment is the prompt alignment scorer: the judge
// decides for each of the case's instructions whether the output follows
// it, breaks it or whether it does not apply; the score is the share of
// applicable instructions followed. Higher is better.
package promptalignment

import (
	"cmp"
	"embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
)

// SchemaVerdicts is the schema name of the prompt alignment scorer's reply.
const SchemaVerdicts = "prompt_alignment_verdicts"

// Verdicts is the prompt alignment scorer's analyze result: one entry per
// instruction of the Case, in its order, so Verdicts[i] is about
// Case.Instructions[i].
type Verdicts struct {
	Verdicts []Verdict `json:"verdicts"`
	// Reordered is set when the judge returned the verdicts in another
	// order than the instructions; they were matched by the numbers and
	// instructions it echoed.
	Reordered bool `json:"reordered,omitempty"`
}

// Verdict judges one instruction: "yes" followed, "no" not followed,
// "n/a" not applicable.
type Verdict struct {
	// Number is the instruction's place in Case.Instructions, from 1.
	Number int `json:"number"`
	// Instruction is the instruction judged, as it was sent.
	Instruction string `json:"instruction"`
	Verdict     string `json:"verdict"`
	Reason      string `json:"reason"`
	// Skipped is set for a blank instruction: it keeps its place with
	// verdict "n/a" and was not sent to the judge.
	Skipped bool `json:"skipped,omitempty"`
}

//go:embed *.tmpl
var templates embed.FS

var verdictsPrompt = &pipeline.Prompt{
	Schema: pipeline.ItemsSchema(SchemaVerdicts, "verdicts",
		pipeline.Property{Name: "number", Integer: true},
		pipeline.Property{Name: "instruction"},
		pipeline.Property{Name: "verdict", Enum: []string{pipeline.VerdictYes, pipeline.VerdictNo, pipeline.VerdictNA}}),
	User: verdictsMessage,
	Demo: demoVerdicts,
}

// Definition is the prompt alignment scorer.
var Definition = pipeline.Definition{
	Name:    scoring.PromptAlignment,
	Sends:   []scoring.Field{scoring.FieldInput, scoring.FieldOutput, scoring.FieldInstructions},
	Prompts: pipeline.NewPrompts(templates, nil, verdictsPrompt),
	Run:     run,
}

// New returns the prompt alignment scorer, asking judge.
func New(judge scoring.Judge, opts scoring.Options) (scoring.Scorer, error) {
	return pipeline.New(Definition, judge, opts)
}

var verdictSpec = pipeline.VerdictSpec{Schema: verdictsPrompt.Schema, Field: "verdicts", Keys: []string{"verdict", "result"}, AllowNA: true, Unit: "instruction", Echo: "instruction"}

// blankInstructionReason is the reason of a blank instruction's verdict.
const blankInstructionReason = "The instruction is blank, so there is nothing to judge."

// run is the prompt alignment pipeline: judge the output against each
// instruction (the instructions are given, so there is no preprocess
// step), score followed / applicable × scale. Blank instructions are not
// sent; they keep their place in the result as skipped, so verdict i is
// about the case's instruction i.
func run(e *pipeline.Evaluation) {
	var sent []string
	var place []int // place[k] is the index in the case of sent[k]
	for i, in := range e.Case.Instructions {
		if strings.TrimSpace(in) != "" {
			sent = append(sent, in)
			place = append(place, i)
		}
	}
	if len(sent) == 0 {
		e.NotScorable("The case has no instructions to check the output against.")
		return
	}
	// The output may be empty: formatting instructions then count as broken.
	verdicts, reordered, ok := e.JudgeItems(verdictsPrompt, pipeline.PromptData{
		Input:        e.Case.Input,
		Output:       e.Case.Output,
		Instructions: sent,
		Items:        sent, // what the verdicts are matched to
	}, verdictSpec)
	if !ok {
		return
	}
	result := Verdicts{Verdicts: make([]Verdict, len(e.Case.Instructions)), Reordered: reordered}
	for i := range e.Case.Instructions {
		result.Verdicts[i] = Verdict{Number: i + 1, Verdict: pipeline.VerdictNA, Reason: blankInstructionReason, Skipped: true}
	}
	followed, applicable := 0, 0
	var broken []string
	forJudge := make([]any, len(verdicts))
	for k, v := range verdicts {
		iv := Verdict{Number: place[k] + 1, Instruction: sent[k], Verdict: v.Verdict, Reason: v.Reason}
		result.Verdicts[place[k]] = iv
		forJudge[k] = iv
		if v.Verdict == pipeline.VerdictNA {
			continue
		}
		applicable++
		if pipeline.IsYes(v.Verdict) {
			followed++
		} else {
			broken = append(broken, cmp.Or(v.Reason, sent[k]))
		}
	}
	e.Result.Steps.Analyze = result
	if applicable == 0 {
		e.NotScorable(fmt.Sprintf("None of the %d %s applies to this request.",
			len(verdicts), pipeline.Plural(len(verdicts), "instruction", "instructions")))
		return
	}
	e.ScoreRatio(followed, applicable)
	e.Reason(forJudge, func() string {
		skipped := ""
		if n := len(verdicts) - applicable; n > 0 {
			skipped = fmt.Sprintf(" (%d not applicable)", n)
		}
		if followed == applicable {
			return fmt.Sprintf("The score is %s because the output follows all %d applicable %s%s.",
				pipeline.FormatScore(e.Result.Score), applicable, pipeline.Plural(applicable, "instruction", "instructions"), skipped)
		}
		return fmt.Sprintf("The score is %s because the output breaks %d of %d applicable %s%s: %s.",
			pipeline.FormatScore(e.Result.Score), applicable-followed, applicable, pipeline.Plural(applicable, "instruction", "instructions"),
			skipped, pipeline.JoinReasons(broken))
	})
}

func verdictsMessage(b []byte, d pipeline.PromptData) ([]byte, error) {
	n := strconv.Itoa(len(d.Instructions))
	b = append(b, "Judge whether the response follows each of these "+n+" instructions. Return exactly "+n+" verdicts.\n\n"...)
	b = pipeline.AppendText(b, "INPUT", d.Input)
	b = append(b, "\n\n"...)
	b = pipeline.AppendText(b, "OUTPUT", d.Output)
	b = append(b, "\n\n"...)
	return pipeline.AppendList(b, "INSTRUCTIONS", d.Instructions), nil
}
