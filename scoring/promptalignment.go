package scoring

import (
	"cmp"
	"fmt"
	"strings"
)

var instructionVerdictSpec = verdictSpec{schema: schemaPromptAlignmentVerdicts, field: "verdicts", keys: []string{"verdict", "result"}, allowNA: true, unit: "instruction", echo: "instruction"}

// blankInstructionReason is the reason of a blank instruction's verdict.
const blankInstructionReason = "The instruction is blank, so there is nothing to judge."

// runPromptAlignment is the prompt alignment pipeline: judge the output
// against each instruction (the instructions are given, so there is no
// preprocess step), score followed / applicable × scale. Blank
// instructions are not sent; they keep their place in the result as
// skipped, so verdict i is about the case's instruction i.
func runPromptAlignment(e *evaluation) {
	var sent []string
	var place []int // place[k] is the index in the case of sent[k]
	for i, in := range e.c.Instructions {
		if strings.TrimSpace(in) != "" {
			sent = append(sent, in)
			place = append(place, i)
		}
	}
	if len(sent) == 0 {
		e.notScorable("The case has no instructions to check the output against.")
		return
	}
	// The output may be empty: formatting instructions then count as broken.
	msgs, err := render(SchemaPromptAlignmentVerdicts, promptData{
		Scorer:       PromptAlignment,
		Input:        e.c.Input,
		Output:       e.c.Output,
		Instructions: sent,
	})
	if err != nil {
		e.fail(&Error{Type: ErrorInvalidCase, Step: StepAnalyze, Err: err})
		return
	}
	var verdicts []judged
	var reordered bool
	if err := e.ask(StepAnalyze, schemaPromptAlignmentVerdicts, msgs, func(reply string) error {
		parsed, perr := parseVerdicts(reply, instructionVerdictSpec, len(sent))
		if perr != nil {
			return perr
		}
		verdicts, reordered, perr = matchStatements(parsed, sent, instructionVerdictSpec)
		return perr
	}); err != nil {
		e.fail(err)
		return
	}
	result := InstructionVerdicts{Verdicts: make([]InstructionVerdict, len(e.c.Instructions)), Reordered: reordered}
	for i := range e.c.Instructions {
		result.Verdicts[i] = InstructionVerdict{Number: i + 1, Verdict: verdictNA, Reason: blankInstructionReason, Skipped: true}
	}
	followed, applicable := 0, 0
	var broken []string
	forJudge := make([]any, len(verdicts))
	for k, v := range verdicts {
		iv := InstructionVerdict{Number: place[k] + 1, Instruction: sent[k], Verdict: v.Verdict, Reason: v.Reason}
		result.Verdicts[place[k]] = iv
		forJudge[k] = iv
		if v.Verdict == verdictNA {
			continue
		}
		applicable++
		if isYes(v.Verdict) {
			followed++
		} else {
			broken = append(broken, cmp.Or(v.Reason, sent[k]))
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
