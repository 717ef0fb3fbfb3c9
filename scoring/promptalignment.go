package scoring

import (
	"cmp"
	"fmt"
)

var instructionVerdictSpec = verdictSpec{schema: schemaPromptAlignmentVerdicts, field: "verdicts", keys: []string{"verdict", "result"}, allowNA: true, unit: "instruction"}

// runPromptAlignment is the prompt alignment pipeline: judge the output
// against each instruction (the instructions are given, so there is no
// preprocess step), score followed / applicable × scale.
func runPromptAlignment(e *evaluation) {
	if len(e.c.Instructions) == 0 {
		e.notScorable("The case has no instructions to check the output against.")
		return
	}
	// The output may be empty: formatting instructions then count as broken.
	msgs, err := render(SchemaPromptAlignmentVerdicts, promptData{
		Scorer:       PromptAlignment,
		Input:        e.c.Input,
		Output:       e.c.Output,
		Instructions: e.c.Instructions,
	})
	if err != nil {
		e.fail(&Error{Type: ErrorInvalidCase, Step: StepAnalyze, Err: err})
		return
	}
	var verdicts []judged
	if err := e.ask(StepAnalyze, schemaPromptAlignmentVerdicts, msgs, func(reply string) error {
		var perr error
		verdicts, perr = parseVerdicts(reply, instructionVerdictSpec, len(e.c.Instructions))
		return perr
	}); err != nil {
		e.fail(err)
		return
	}
	result := InstructionVerdicts{Verdicts: make([]InstructionVerdict, len(verdicts))}
	followed, applicable := 0, 0
	var broken []string
	forJudge := make([]any, len(verdicts))
	for i, v := range verdicts {
		result.Verdicts[i] = InstructionVerdict{Verdict: v.Verdict, Reason: v.Reason}
		forJudge[i] = struct {
			Instruction string `json:"instruction"`
			Verdict     string `json:"verdict"`
			Reason      string `json:"reason"`
		}{e.c.Instructions[i], v.Verdict, v.Reason}
		if v.Verdict == verdictNA {
			continue
		}
		applicable++
		if isYes(v.Verdict) {
			followed++
		} else {
			broken = append(broken, cmp.Or(v.Reason, e.c.Instructions[i]))
		}
	}
	e.res.Steps.Analyze = result
	if applicable == 0 {
		e.notScorable(fmt.Sprintf("None of the %d %s applies to this request.",
			len(verdicts), plural(len(verdicts), "instruction", "instructions")))
		return
	}
	e.scoreRatio(followed, applicable)
	e.reason(forJudge, func() string {
		skipped := ""
		if n := len(verdicts) - applicable; n > 0 {
			skipped = fmt.Sprintf(" (%d not applicable)", n)
		}
		if followed == applicable {
			return fmt.Sprintf("The score is %s because the output follows all %d applicable %s%s.",
				formatScore(e.res.Score), applicable, plural(applicable, "instruction", "instructions"), skipped)
		}
		return fmt.Sprintf("The score is %s because the output breaks %d of %d applicable %s%s: %s.",
			formatScore(e.res.Score), applicable-followed, applicable, plural(applicable, "instruction", "instructions"),
			skipped, joinReasons(broken))
	})
}
