// Package conversationcompleteness is the conversation_completeness
// scorer, deepeval's ConversationCompletenessMetric: the judge lists what
// the user wanted over a whole conversation (the user's intentions), then
// decides for each whether the assistant satisfied it; the score is the
// share satisfied. Higher is better.
package conversationcompleteness

import (
	"cmp"
	"embed"
	"fmt"
	"strconv"
	"text/template"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
)

// Schema names of the conversation completeness scorer's replies.
const (
	SchemaIntentions = "conversation_completeness_intentions"
	SchemaVerdicts   = "conversation_completeness_verdicts"
)

// MaxIntentions bounds the intentions judged: the first MaxIntentions are
// kept, and a result that dropped some has Truncated set.
const MaxIntentions = 50

// Intentions is the preprocess result: what the user wanted.
type Intentions struct {
	Intentions []string `json:"intentions"`
	// Dropped counts the intentions past MaxIntentions that were not
	// judged.
	Dropped int `json:"dropped,omitempty"`
}

// Verdicts is the analyze result: one verdict per intention.
type Verdicts struct {
	Verdicts  []Verdict `json:"verdicts"`
	Reordered bool      `json:"reordered,omitempty"`
}

// Verdict judges one intention: "yes" when the conversation satisfied it.
type Verdict struct {
	Intention string `json:"intention"`
	Verdict   string `json:"verdict"`
	Reason    string `json:"reason"`
}

//go:embed *.tmpl
var templates embed.FS

var (
	intentionsPrompt = &pipeline.Prompt{Schema: pipeline.ListSchema(SchemaIntentions, "intentions"), User: intentionsMessage, Demo: demoIntentions}
	verdictsPrompt   = &pipeline.Prompt{
		Schema: pipeline.ItemsSchema(SchemaVerdicts, "verdicts",
			pipeline.Property{Name: "intention"},
			pipeline.Property{Name: "verdict", Enum: []string{pipeline.VerdictYes, pipeline.VerdictNo}}),
		User: verdictsMessage,
		Demo: demoVerdicts,
	}
)

// Definition is the conversation completeness scorer.
var Definition = pipeline.Definition{
	Name:         scoring.ConversationCompleteness,
	Sends:        []scoring.Field{scoring.FieldTurns},
	Conversation: true,
	Prompts: pipeline.NewPrompts(templates, template.FuncMap{"maxIntentions": func() int { return MaxIntentions }},
		intentionsPrompt, verdictsPrompt),
	Run: run,
}

// New returns the conversation completeness scorer, asking judge.
func New(judge scoring.Judge, opts scoring.Options) (scoring.Scorer, error) {
	return pipeline.New(Definition, judge, opts)
}

var steps = pipeline.ExtractThenJudge{
	Extract:         intentionsPrompt,
	Field:           "intentions",
	Judge:           verdictsPrompt,
	Verdicts:        pipeline.VerdictSpec{Schema: verdictsPrompt.Schema, Field: "verdicts", Keys: []string{"verdict", "result"}, Unit: "intention", Echo: "intention"},
	MaxItems:        MaxIntentions,
	NoneScoresScale: true,
	Preprocess: func(intentions []string, dropped int) any {
		return Intentions{Intentions: intentions, Dropped: dropped}
	},
}

// run is the conversation_completeness pipeline: list the user's
// intentions over the conversation, judge each satisfied or not against
// the whole conversation, score satisfied / intentions × scale, rounded to
// two decimals. As in deepeval, a conversation in which the judge finds no
// intention scores the scale; one without a user message does so without a
// call, since only the user's messages carry intentions.
func run(e *pipeline.Evaluation) {
	turns := e.Case.Turns
	if !pipeline.HasRole(turns, scoring.RoleUser) {
		e.ScoreAll()
		e.SetReason("The score is " + pipeline.FormatScore(e.Result.Score) + " because the conversation has no user message, so the user asked for nothing that could be left unsatisfied.")
		return
	}
	d := pipeline.PromptData{Turns: pipeline.TurnLines(turns)}
	judged, ok := steps.Run(e, d, d)
	if !ok {
		if e.Result.Scored() { // no intention found
			e.SetReason("The score is " + pipeline.FormatScore(e.Result.Score) + " because the judge found nothing the user wanted from the conversation, so nothing was left unsatisfied.")
		}
		return
	}
	result := Verdicts{Verdicts: make([]Verdict, len(judged.Items)), Reordered: judged.Reordered}
	forJudge := make([]any, len(judged.Items))
	var unmet []string
	for i, v := range judged.Verdicts {
		r := Verdict{Intention: judged.Items[i], Verdict: v.Verdict, Reason: v.Reason}
		result.Verdicts[i] = r
		forJudge[i] = r
		if !pipeline.IsYes(v.Verdict) {
			unmet = append(unmet, cmp.Or(v.Reason, judged.Items[i]))
		}
	}
	e.Result.Steps.Analyze = result
	n := len(judged.Items)
	met := n - len(unmet)
	e.ScoreRatio(met, n)
	e.Reason(forJudge, func() string {
		s := fmt.Sprintf("The score is %s because the assistant satisfied %d of the %d %s the user had in the conversation",
			pipeline.FormatScore(e.Result.Score), met, n, pipeline.Plural(n, "intention", "intentions"))
		if len(unmet) > 0 {
			s += "; left unsatisfied: " + pipeline.JoinReasons(unmet)
		}
		if judged.Dropped > 0 {
			s += fmt.Sprintf(" (only the first %d intentions were judged; %d more were left out)", MaxIntentions, judged.Dropped)
		}
		return s + pipeline.OmittedNote(turns) + "."
	})
}

func intentionsMessage(b []byte, d pipeline.PromptData) ([]byte, error) {
	b = append(b, "List what the user wanted from the assistant in this conversation.\n\n"...)
	return pipeline.AppendJSONL(b, "CONVERSATION", d.Turns)
}

// verdictsMessage sends the conversation and the intentions, then the
// task, which names their number: what differs between calls comes last.
func verdictsMessage(b []byte, d pipeline.PromptData) ([]byte, error) {
	b, err := pipeline.AppendJSONL(b, "CONVERSATION", d.Turns)
	if err != nil {
		return nil, err
	}
	b = append(b, "\n\n"...)
	b = pipeline.AppendList(b, "INTENTIONS", d.Items)
	n := strconv.Itoa(len(d.Items))
	return append(b, "\n\nJudge whether the assistant satisfied each of these "+n+" intentions of the user by the end of the conversation. Return exactly "+n+" verdicts."...), nil
}
