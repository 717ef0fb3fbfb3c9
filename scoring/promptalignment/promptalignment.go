// Package promptalignment is the prompt alignment scorer: the judge
// decides for each of the case's system instructions, and for each
// instruction the user gave in the request, whether the output follows
// it, breaks it or whether it does not apply; the score is the share of
// applicable instructions followed. Higher is better.
package promptalignment

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
	// User are the instructions the user gave, as the judge found them in
	// the request and the conversation before it, each judged.
	User []Verdict `json:"user_instructions,omitempty"`
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
	// User is set for an instruction the user gave (Number is then 0).
	User bool `json:"user,omitempty"`
}

//go:embed *.tmpl
var templates embed.FS

// MaxUserInstructions bounds the user's instructions judged: the first
// MaxUserInstructions the judge lists are counted, and a result that
// dropped some is truncated and says so.
const MaxUserInstructions = 50

var verdictsPrompt = &pipeline.Prompt{Schema: schemaVerdicts, User: verdictsMessage, Demo: demoVerdicts}

// Definition is the prompt alignment scorer.
var Definition = pipeline.Definition{
	Name:    scoring.PromptAlignment,
	Sends:   []scoring.Field{scoring.FieldInput, scoring.FieldOutput, scoring.FieldInstructions, scoring.FieldTurns},
	History: true,
	Prompts: pipeline.NewPrompts(templates, template.FuncMap{"maxUserInstructions": func() int { return MaxUserInstructions }}, verdictsPrompt),
	Run:     run,
}

// New returns the prompt alignment scorer, asking judge.
func New(judge scoring.Judge, opts scoring.Options) (scoring.Scorer, error) {
	return pipeline.New(Definition, judge, opts)
}

var verdictSpec = pipeline.VerdictSpec{Schema: verdictsPrompt.Schema, Field: "verdicts", Keys: []string{"verdict", "result"}, AllowNA: true, Unit: "instruction", Echo: "instruction"}

// blankInstructionReason is the reason of a blank instruction's verdict.
const blankInstructionReason = "The instruction is blank, so there is nothing to judge."

// run is the prompt alignment pipeline: one analyze call judges the output
// against each system instruction (Case.Instructions, as given: there is
// no preprocess step) and, unless InstructionSources says system only,
// lists the instructions the user gave in the request and in the earlier
// user turns that still apply, and judges each of them too. Score =
// followed / applicable × scale, over both lists. Blank system
// instructions are not sent; they keep their place in the result as
// skipped, so verdict i is about the case's instruction i.
func run(e *pipeline.Evaluation) {
	sources := cmp.Or(e.Options().InstructionSources, scoring.SourcesBoth)
	var sent []string
	var place []int // place[k] is the index in the case of sent[k]
	if sources != scoring.SourcesUser {
		for i, in := range e.Case.Instructions {
			if strings.TrimSpace(in) != "" {
				sent = append(sent, in)
				place = append(place, i)
			}
		}
	}
	askUser := sources != scoring.SourcesSystem && strings.TrimSpace(e.Case.Input) != ""
	if len(sent) == 0 && !askUser {
		e.NotScorable("The case has no instructions to check the output against.")
		return
	}
	d := pipeline.PromptData{
		Input:        e.Case.Input,
		Output:       e.Case.Output, // may be empty: formatting instructions then count as broken
		Instructions: sent,
		Items:        sent, // what the verdicts are matched to
		AskUser:      askUser,
	}
	if askUser {
		d.Turns = pipeline.HistoryLines(e.Case.Turns)
	}
	var parsed reply
	if err := e.Ask(scoring.StepAnalyze, verdictsPrompt, d, func(r string) error {
		var perr error
		parsed, perr = parseReply(r, sent, askUser)
		return perr
	}); err != nil {
		e.Fail(err)
		return
	}
	result := Verdicts{Reordered: parsed.reordered}
	if sources != scoring.SourcesUser {
		result.Verdicts = make([]Verdict, len(e.Case.Instructions))
		for i := range e.Case.Instructions {
			result.Verdicts[i] = Verdict{Number: i + 1, Verdict: pipeline.VerdictNA, Reason: blankInstructionReason, Skipped: true}
		}
	}
	followed, applicable := 0, 0
	var broken []string
	var forJudge []any
	count := func(v Verdict) {
		forJudge = append(forJudge, v)
		if v.Verdict == pipeline.VerdictNA {
			return
		}
		applicable++
		if pipeline.IsYes(v.Verdict) {
			followed++
		} else {
			broken = append(broken, cmp.Or(v.Reason, v.Instruction))
		}
	}
	for k, v := range parsed.system {
		iv := Verdict{Number: place[k] + 1, Instruction: sent[k], Verdict: v.Verdict, Reason: v.Reason}
		result.Verdicts[place[k]] = iv
		count(iv)
	}
	user := parsed.user
	if len(user) > MaxUserInstructions {
		e.Limit(fmt.Sprintf("only the first %d of the user's instructions were judged; %d more were left out", MaxUserInstructions, len(user)-MaxUserInstructions))
		user = user[:MaxUserInstructions]
	}
	for _, v := range user {
		result.User = append(result.User, v)
		count(v)
	}
	e.Result.Steps.Analyze = result
	total := len(parsed.system) + len(user)
	switch {
	case total == 0:
		e.NotScorable("The user's message gives no instruction and the case has no system instructions, so there is nothing to check the output against.")
		return
	case applicable == 0:
		e.NotScorable(fmt.Sprintf("None of the %d %s applies to this request.",
			total, pipeline.Plural(total, "instruction", "instructions")))
		return
	}
	e.ScoreRatio(followed, applicable)
	e.Reason(forJudge, func() string {
		skipped := ""
		if n := total - applicable; n > 0 {
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

// reply is a parsed analyze reply: one verdict per system instruction
// sent, in their order, and the user's instructions the judge listed.
type reply struct {
	system    []pipeline.Judged
	reordered bool
	user      []Verdict
}

// parseReply reads an analyze reply: exactly one verdict per system
// instruction sent, and, when the user's instructions were asked for, the
// "user_instructions" list, each with its words and a "yes" or "no"
// verdict. A missing list means the judge found none; with the user's
// instructions not asked for, the list must be empty.
func parseReply(r string, sent []string, askUser bool) (reply, error) {
	var out reply
	var err error
	out.system, out.reordered, err = pipeline.ParseItemVerdicts(r, verdictSpec, sent)
	if err != nil {
		return reply{}, err
	}
	v, err := pipeline.ExtractJSON(r, verdictSpec.Schema)
	if err != nil {
		return reply{}, err
	}
	m, _ := v.(map[string]any)
	raw, found := pipeline.Lookup(m, "user_instructions", "user")
	if !found || raw == nil {
		return out, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return reply{}, fmt.Errorf("the %q field must be a list, got %s", "user_instructions", pipeline.JSONKind(raw))
	}
	if len(list) > 0 && !askUser {
		return reply{}, fmt.Errorf("the %q list must be empty: the user's instructions are not judged here", "user_instructions")
	}
	seen := map[string]bool{}
	for i, it := range list {
		item, ok := it.(map[string]any)
		if !ok {
			return reply{}, fmt.Errorf("item %d of %q must be an object, got %s", i+1, "user_instructions", pipeline.JSONKind(it))
		}
		text := strings.TrimSpace(pipeline.OptionalString(item, "instruction"))
		if text == "" {
			return reply{}, fmt.Errorf("item %d of %q has no %q", i+1, "user_instructions", "instruction")
		}
		rawVerdict, ok := pipeline.Lookup(item, "verdict", "result")
		if !ok {
			return reply{}, fmt.Errorf("item %d of %q has no %q", i+1, "user_instructions", "verdict")
		}
		verdict, ok := pipeline.VerdictValue(rawVerdict, []string{pipeline.VerdictYes, pipeline.VerdictNo})
		if !ok {
			return reply{}, fmt.Errorf("item %d of %q has verdict %s; it must be exactly \"yes\" or \"no\"", i+1, "user_instructions", pipeline.Describe(rawVerdict))
		}
		if key := pipeline.StatementKey(text); seen[key] {
			continue // listed twice: judged once
		} else {
			seen[key] = true
		}
		out.user = append(out.user, Verdict{Instruction: text, Verdict: verdict, Reason: pipeline.OptionalString(item, "reason"), User: true})
	}
	return out, nil
}

var schemaVerdicts = pipeline.ListsSchema(SchemaVerdicts,
	pipeline.ItemList{Field: "verdicts", Props: []pipeline.Property{
		{Name: "number", Integer: true},
		{Name: "instruction"},
		{Name: "verdict", Enum: []string{pipeline.VerdictYes, pipeline.VerdictNo, pipeline.VerdictNA}},
	}},
	pipeline.ItemList{Field: "user_instructions", Props: []pipeline.Property{
		{Name: "instruction"},
		{Name: "verdict", Enum: []string{pipeline.VerdictYes, pipeline.VerdictNo}},
	}})

// verdictsMessage sends the case, then the task, which names the number
// of instructions: what differs between calls comes last.
func verdictsMessage(b []byte, d pipeline.PromptData) ([]byte, error) {
	if d.AskUser {
		var err error
		if b, err = pipeline.AppendHistory(b, d); err != nil {
			return nil, err
		}
	}
	b = pipeline.AppendText(b, "INPUT", d.Input)
	b = append(b, "\n\n"...)
	b = pipeline.AppendText(b, "OUTPUT", d.Output)
	b = append(b, "\n\n"...)
	b = pipeline.AppendList(b, "INSTRUCTIONS", d.Instructions)
	n := strconv.Itoa(len(d.Instructions))
	switch {
	case len(d.Instructions) == 0:
		b = append(b, "\n\nThere are no system instructions: return an empty verdicts list."...)
	default:
		b = append(b, "\n\nJudge whether the response follows each of these "+n+" instructions. Return exactly "+n+" verdicts."...)
	}
	if d.AskUser {
		return append(b, " In user_instructions, list the instructions the user gave for this response and judge each."...), nil
	}
	return append(b, " The user's own instructions are not judged here: return an empty user_instructions list."...), nil
}
