// Package knowledgeretention is the knowledge_retention scorer,
// deepeval's KnowledgeRetentionMetric: the judge lists the facts the user
// told the assistant in each message, then decides for each assistant
// reply that follows such facts whether it keeps them or forgets or
// contradicts one; the score is the share of replies that keep them.
// Higher is better.
package knowledgeretention

import (
	"embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/template"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
)

// Schema names of the knowledge retention scorer's replies.
const (
	SchemaFacts    = "knowledge_retention_facts"
	SchemaVerdicts = "knowledge_retention_verdicts"
)

// MaxFacts bounds the facts kept: the first MaxFacts are kept, and a
// result that dropped some has Truncated set.
const MaxFacts = 100

// Facts is the preprocess result: what the user told the assistant.
type Facts struct {
	Facts []Fact `json:"facts"`
	// Dropped counts the facts past MaxFacts that were not kept.
	Dropped int `json:"dropped,omitempty"`
}

// Fact is one thing the user told the assistant, in the message numbered
// Turn.
type Fact struct {
	Turn int    `json:"turn"`
	Fact string `json:"fact"`
}

// Verdicts is the analyze result: one verdict per assistant reply that
// follows a fact, "yes" when it keeps every fact the user told before it,
// "no" when it forgets or contradicts one.
type Verdicts = pipeline.TurnVerdicts

//go:embed *.tmpl
var templates embed.FS

// schemaFacts lists facts with the message each comes from; unlike the
// verdict schemas it has no reason.
var schemaFacts = &scoring.Schema{Name: SchemaFacts, Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "facts": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "turn": {"type": "integer"},
          "fact": {"type": "string"}
        },
        "required": ["turn", "fact"],
        "additionalProperties": false
      }
    }
  },
  "required": ["facts"],
  "additionalProperties": false
}`)}

var (
	factsPrompt    = &pipeline.Prompt{Schema: schemaFacts, User: factsMessage, Demo: demoFacts}
	verdictsPrompt = &pipeline.Prompt{Schema: pipeline.TurnVerdictsSchema(SchemaVerdicts), User: verdictsMessage, Demo: demoVerdicts}
)

// Definition is the knowledge retention scorer.
var Definition = pipeline.Definition{
	Name:         scoring.KnowledgeRetention,
	Sends:        []scoring.Field{scoring.FieldTurns},
	Conversation: true,
	Prompts: pipeline.NewPrompts(templates, template.FuncMap{"maxFacts": func() int { return MaxFacts }},
		factsPrompt, verdictsPrompt),
	Run: run,
}

// New returns the knowledge retention scorer, asking judge.
func New(judge scoring.Judge, opts scoring.Options) (scoring.Scorer, error) {
	return pipeline.New(Definition, judge, opts)
}

var verdictSpec = pipeline.TurnVerdictSpec(verdictsPrompt.Schema, "reply")

// run is the knowledge_retention pipeline. One call lists the facts the
// user stated in each message; one call judges every assistant reply that
// follows at least one fact: does it keep them? Score = replies that keep
// them / replies judged × scale, rounded to two decimals. As in deepeval,
// a conversation with no reply to judge scores the scale: no reply after a
// user message (decided without a call), or no fact before any reply.
func run(e *pipeline.Evaluation) {
	turns := e.Case.Turns
	msgs := pipeline.NumberTurns(turns)
	if !replyAfterUser(msgs) {
		e.ScoreAll()
		e.SetReason("The score is " + pipeline.FormatScore(e.Result.Score) + " because no reply of the assistant follows a message of the user, so there is nothing it could have forgotten.")
		return
	}
	lines := pipeline.TurnLines(turns)
	var facts Facts
	if err := e.Ask(scoring.StepPreprocess, factsPrompt, pipeline.PromptData{Turns: lines}, func(reply string) error {
		var perr error
		facts, perr = parseFacts(reply, msgs)
		return perr
	}); err != nil {
		e.Fail(err)
		return
	}
	if facts.Dropped > 0 {
		e.Result.Truncated = true
	}
	e.Result.Steps.Preprocess = facts
	targets := judgedReplies(msgs, facts.Facts)
	if len(targets) == 0 {
		e.ScoreAll()
		e.SetReason("The score is " + pipeline.FormatScore(e.Result.Score) + " because the user told the assistant no fact before any of its replies, so there is nothing it could have forgotten.")
		return
	}
	factLines := make([]any, len(facts.Facts))
	for i, f := range facts.Facts {
		factLines[i] = f
	}
	verdicts, reordered, ok := e.JudgeTurns(verdictsPrompt, pipeline.PromptData{Turns: lines, Facts: factLines, Targets: targets}, verdictSpec)
	if !ok {
		return
	}
	dropped := ""
	if facts.Dropped > 0 {
		dropped = fmt.Sprintf(" (only the first %d facts were kept; %d more were left out)", MaxFacts, facts.Dropped)
	}
	e.ScoreTurns(Verdicts{Reordered: reordered}, targets, verdicts, func(score string, yes, n int) string {
		return fmt.Sprintf("The score is %s because %d of the %d %s that follow facts the user told %s them%s",
			score, yes, n, pipeline.Plural(n, "reply", "replies"), pipeline.Plural(yes, "keeps", "keep"), dropped)
	}, "forgotten or contradicted")
}

// replyAfterUser reports whether a reply of the assistant follows a
// message of the user.
func replyAfterUser(msgs []pipeline.NumberedTurn) bool {
	user := false
	for _, m := range msgs {
		switch m.Role {
		case scoring.RoleUser:
			user = true
		case scoring.RoleAssistant:
			if user {
				return true
			}
		}
	}
	return false
}

// judgedReplies are the assistant replies with at least one fact from an
// earlier message: deepeval judges a reply only when knowledge was
// gathered before it.
func judgedReplies(msgs []pipeline.NumberedTurn, facts []Fact) []pipeline.TurnTarget {
	first := 0 // the earliest message with a fact
	for _, f := range facts {
		if first == 0 || f.Turn < first {
			first = f.Turn
		}
	}
	var out []pipeline.TurnTarget
	for _, m := range msgs {
		if first > 0 && m.Role == scoring.RoleAssistant && m.Number > first {
			out = append(out, pipeline.TurnTarget{Turn: m.Number})
		}
	}
	return out
}

// parseFacts parses a facts reply: facts, each from a message of the user
// the judge was shown, given by its number. A fact from another message is
// an error for a re-ask; blank facts are dropped, and those past MaxFacts
// counted.
func parseFacts(reply string, msgs []pipeline.NumberedTurn) (Facts, error) {
	v, err := pipeline.ExtractJSON(reply, schemaFacts)
	if err != nil {
		return Facts{}, err
	}
	list, err := pipeline.ListField(v, "facts", "fact")
	if err != nil {
		return Facts{}, err
	}
	user := map[int]bool{}
	for _, m := range msgs {
		if m.Role == scoring.RoleUser {
			user[m.Number] = true
		}
	}
	out := Facts{Facts: []Fact{}}
	for i, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			return Facts{}, fmt.Errorf("item %d of %q must be an object, got %s", i+1, "facts", pipeline.JSONKind(it))
		}
		raw, ok := pipeline.Lookup(m, "turn", "message")
		if !ok {
			return Facts{}, fmt.Errorf("item %d of %q has no %q", i+1, "facts", "turn")
		}
		n := pipeline.ItemNumber(raw, int(^uint(0)>>1))
		if !user[n] {
			return Facts{}, fmt.Errorf("item %d of %q gives turn %s, which is not a message of the user; give the number of the user's message each fact comes from", i+1, "facts", pipeline.Describe(raw))
		}
		fact := strings.TrimSpace(pipeline.OptionalString(m, "fact"))
		if fact == "" {
			continue
		}
		if len(out.Facts) == MaxFacts {
			out.Dropped++
			continue
		}
		out.Facts = append(out.Facts, Fact{Turn: n, Fact: fact})
	}
	return out, nil
}

func factsMessage(b []byte, d pipeline.PromptData) ([]byte, error) {
	b = append(b, "List the facts the user told the assistant in this conversation.\n\n"...)
	return pipeline.AppendJSONL(b, "CONVERSATION", d.Turns)
}

// verdictsMessage sends the conversation, the facts and the replies to
// judge, then the task, which names their number: what differs between
// calls comes last.
func verdictsMessage(b []byte, d pipeline.PromptData) ([]byte, error) {
	b, err := pipeline.AppendJSONL(b, "CONVERSATION", d.Turns)
	if err != nil {
		return nil, err
	}
	b = append(b, "\n\n"...)
	if b, err = pipeline.AppendJSONL(b, "FACTS", d.Facts); err != nil {
		return nil, err
	}
	b = append(b, "\n\n"...)
	if b, err = pipeline.AppendTargets(b, "REPLIES", d.Targets); err != nil {
		return nil, err
	}
	n := strconv.Itoa(len(d.Targets))
	return append(b, "\n\nJudge whether each of these "+n+" replies of the assistant keeps the facts the user told it before the reply. Return exactly "+n+" verdicts."...), nil
}
