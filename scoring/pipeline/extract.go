package pipeline

import (
	"cmp"
	"fmt"

	"github.com/llm-eval/llm_eval/scoring"
)

// ExtractThenJudge is the shape of the scorers that extract items from the
// output and judge each one (bias: opinions, hallucination: claims, answer
// relevancy: statements, conversation completeness: the user's intentions): a preprocess step lists the items, an analyze
// step gives one verdict per item, and the scorer scores and explains the
// verdicts.
type ExtractThenJudge struct {
	// Extract is the preprocess prompt; its reply lists the items under
	// Field.
	Extract *Prompt
	Field   string
	// Judge is the analyze prompt, read by Verdicts: one verdict per item.
	Judge    *Prompt
	Verdicts VerdictSpec
	// MaxItems caps the items judged; 0 means no cap. Items past it are
	// dropped, the result has Truncated set and its reason says how many
	// (Evaluation.Limit).
	MaxItems int
	// Units names the items in the plural ("claims"), for that reason.
	Units string
	// None is the reason of a case whose output holds no item: it scores 0
	// (the scale when NoneScoresScale is set) without an analyze call.
	// With WholeOutput set, the output itself is judged as the one item
	// instead (Mastra's bias rule: no opinion found means the text is
	// analysed as one).
	None        string
	WholeOutput bool
	// NoneScoresScale gives a case without items the scale: deepeval's
	// conversation metrics score a conversation with nothing to judge 1.
	NoneScoresScale bool
	// Preprocess is the preprocess step's result: the items kept and how
	// many were dropped.
	Preprocess func(items []string, dropped int) any
}

// ItemVerdicts are the items an ExtractThenJudge judged and their
// verdicts, in the items' order.
type ItemVerdicts struct {
	Items    []string
	Verdicts []Judged
	// Reordered is set when the judge gave the verdicts in another order;
	// they were matched to the items by the items they echo.
	Reordered bool
	// Dropped counts the items past MaxItems.
	Dropped int
	// WholeOutput is set when the extraction found no item and the output
	// itself was judged as the one item (ExtractThenJudge.WholeOutput).
	WholeOutput bool
}

// Yes counts the "yes" verdicts and lists their reasons, the item itself
// for a verdict the judge gave no reason for.
func (v ItemVerdicts) Yes() (n int, reasons []string) {
	for i, j := range v.Verdicts {
		if IsYes(j.Verdict) {
			n++
			reasons = append(reasons, cmp.Or(j.Reason, v.Items[i]))
		}
	}
	return n, reasons
}

// Run extracts the items of the case with extract, then judges them with
// judge (its Items set to them). It reports false when the evaluation has
// ended: failed, or scored 0 because there was no item.
func (x ExtractThenJudge) Run(e *Evaluation, extract, judge PromptData) (ItemVerdicts, bool) {
	out, ok := x.extract(e, extract)
	if !ok {
		return out, false
	}
	judge.Items = out.Items
	out.Verdicts, out.Reordered, ok = e.JudgeItems(x.Judge, judge, x.Verdicts)
	return out, ok
}

// Items runs the preprocess step alone, for a scorer that judges the
// items itself: the items kept, within MaxItems. It reports false when the
// evaluation has ended: failed, or scored 0 because there was no item.
func (x ExtractThenJudge) Items(e *Evaluation, extract PromptData) ([]string, bool) {
	out, ok := x.extract(e, extract)
	return out.Items, ok
}

func (x ExtractThenJudge) extract(e *Evaluation, extract PromptData) (ItemVerdicts, bool) {
	var out ItemVerdicts
	if err := e.Ask(scoring.StepPreprocess, x.Extract, extract, func(reply string) error {
		var perr error
		out.Items, perr = ParseStrings(reply, x.Extract.Schema, x.Field)
		return perr
	}); err != nil {
		e.Fail(err)
		return out, false
	}
	if x.MaxItems > 0 && len(out.Items) > x.MaxItems {
		out.Dropped = len(out.Items) - x.MaxItems
		out.Items = out.Items[:x.MaxItems:x.MaxItems]
		e.Limit(fmt.Sprintf("only the first %d %s were judged; %d more were left out", x.MaxItems, x.Units, out.Dropped))
	}
	e.Result.Steps.Preprocess = x.Preprocess(out.Items, out.Dropped)
	if len(out.Items) == 0 {
		if !x.WholeOutput {
			if x.NoneScoresScale {
				e.ScoreAll()
			} else {
				e.SetScore(0)
			}
			e.SetReason(x.None)
			return out, false
		}
		out.Items, out.WholeOutput = []string{extract.Output}, true
	}
	return out, true
}

// JudgeItems runs an analyze step that judges d.Items one by one with p
// and puts the verdicts in the items' order (ParseItemVerdicts). It
// reports false when the step failed, which ends the evaluation.
func (e *Evaluation) JudgeItems(p *Prompt, d PromptData, spec VerdictSpec) (verdicts []Judged, reordered, ok bool) {
	if err := e.Ask(scoring.StepAnalyze, p, d, func(reply string) error {
		var perr error
		verdicts, reordered, perr = ParseItemVerdicts(reply, spec, d.Items)
		return perr
	}); err != nil {
		e.Fail(err)
		return nil, false, false
	}
	return verdicts, reordered, true
}
