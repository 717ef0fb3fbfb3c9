// Package conversationrelevancy is the conversation_relevancy scorer,
// deepeval's TurnRelevancyMetric (formerly ConversationRelevancyMetric):
// the conversation is cut into exchanges, and the judge decides for the
// last reply of each whether it is relevant to a sliding window of the
// exchanges up to it; the score is the share of relevant replies. Higher
// is better.
package conversationrelevancy

import (
	"embed"
	"fmt"
	"strconv"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
)

// SchemaVerdicts is the schema name of the conversation relevancy
// scorer's reply.
const SchemaVerdicts = "conversation_relevancy_verdicts"

// Verdicts is the analyze result: the window size in exchanges, and one
// verdict per exchange on its last reply, judged against the messages
// From to Turn: "yes" when it is relevant to them.
type Verdicts = pipeline.TurnVerdicts

//go:embed *.tmpl
var templates embed.FS

var verdictsPrompt = &pipeline.Prompt{Schema: pipeline.TurnVerdictsSchema(SchemaVerdicts), User: verdictsMessage, Demo: demoVerdicts}

// Definition is the conversation relevancy scorer.
var Definition = pipeline.Definition{
	Name:         scoring.ConversationRelevancy,
	Sends:        []scoring.Field{scoring.FieldTurns},
	Conversation: true,
	Prompts:      pipeline.NewPrompts(templates, nil, verdictsPrompt),
	Run:          run,
}

// New returns the conversation relevancy scorer, asking judge.
func New(judge scoring.Judge, opts scoring.Options) (scoring.Scorer, error) {
	return pipeline.New(Definition, judge, opts)
}

var verdictSpec = pipeline.TurnVerdictSpec(verdictsPrompt.Schema, "reply")

// run is the conversation_relevancy pipeline: cut the conversation into
// exchanges (Exchanges), and in one call judge the last reply of each
// against its window, the Options.ConversationWindow exchanges ending with
// it; score = relevant replies / exchanges × scale, rounded to two
// decimals. As in deepeval, a conversation without an exchange scores the
// scale, here without a call.
func run(e *pipeline.Evaluation) {
	turns := e.Case.Turns
	window := e.Options().ConversationWindow
	targets := Windows(Exchanges(turns), window)
	if len(targets) == 0 {
		e.ScoreAll()
		e.SetReason("The score is " + pipeline.FormatScore(e.Result.Score) + " because no reply of the assistant answers a message of the user, so no reply could be off the point.")
		return
	}
	verdicts, reordered, ok := e.JudgeTurns(verdictsPrompt, pipeline.PromptData{Turns: pipeline.TurnLines(turns), Targets: targets}, verdictSpec)
	if !ok {
		return
	}
	e.ScoreTurns(Verdicts{Window: window, Reordered: reordered}, targets, verdicts, func(score string, yes, n int) string {
		return fmt.Sprintf("The score is %s because %d of the assistant's %d %s %s relevant to the conversation before %s",
			score, yes, n, pipeline.Plural(n, "reply", "replies"), pipeline.Plural(yes, "is", "are"), pipeline.Plural(n, "it", "them"))
	}, "off the point")
}

// Exchange is a run of messages that ends with the assistant's reply to
// the user: deepeval's unit interaction.
type Exchange []pipeline.NumberedTurn

// Exchanges cuts a conversation into exchanges as deepeval's
// get_unit_interactions does: an exchange ends where a user message
// follows an assistant message, once a user message has been seen; the
// assistant's messages before the first user message belong to the first
// exchange, and a last run that does not end with a reply to the user is
// not an exchange. An omitted turn ends the run before it, and the
// messages after it start afresh, so no exchange spans messages the judge
// does not see.
func Exchanges(turns []scoring.Turn) []Exchange {
	var out []Exchange
	var cur Exchange
	user := false
	flush := func() {
		if len(cur) > 1 && cur[len(cur)-1].Role == scoring.RoleAssistant && user {
			out = append(out, cur)
		}
		cur, user = nil, false
	}
	n := 0
	for _, t := range turns {
		if t.Role == scoring.RoleOmitted {
			flush()
			n += t.Count
			continue
		}
		n++
		m := pipeline.NumberedTurn{Number: n, Turn: t}
		if len(cur) > 0 && cur[len(cur)-1].Role == scoring.RoleAssistant && m.Role == scoring.RoleUser && user {
			out = append(out, cur)
			cur = Exchange{m}
			continue
		}
		cur = append(cur, m)
		if m.Role == scoring.RoleUser {
			user = true
		}
	}
	flush()
	return out
}

// Windows returns, for each exchange, its last reply to judge and the
// first message of its window: the window exchanges ending with it
// (deepeval's get_turns_in_sliding_window over exchanges).
func Windows(exchanges []Exchange, window int) []pipeline.TurnTarget {
	out := make([]pipeline.TurnTarget, len(exchanges))
	for i, x := range exchanges {
		first := exchanges[max(0, i-window+1)]
		out[i] = pipeline.TurnTarget{Turn: x[len(x)-1].Number, From: first[0].Number}
	}
	return out
}

// verdictsMessage sends the conversation and the replies to judge, then
// the task, which names their number: what differs between calls comes
// last.
func verdictsMessage(b []byte, d pipeline.PromptData) ([]byte, error) {
	b, err := pipeline.AppendJSONL(b, "CONVERSATION", d.Turns)
	if err != nil {
		return nil, err
	}
	b = append(b, "\n\n"...)
	if b, err = pipeline.AppendTargets(b, "REPLIES", d.Targets); err != nil {
		return nil, err
	}
	n := strconv.Itoa(len(d.Targets))
	return append(b, "\n\nJudge whether each of these "+n+" replies of the assistant is relevant to its window of the conversation. Return exactly "+n+" verdicts."...), nil
}
