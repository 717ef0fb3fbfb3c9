// Package roleadherence is the role_adherence scorer, deepeval's
// RoleAdherenceMetric: the judge reads the role the assistant's system
// prompt gives it and decides for each of the assistant's messages in a
// conversation whether it stays in that role; the score is the share that
// does. Higher is better.
package roleadherence

import (
	"embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
)

// SchemaVerdicts is the schema name of the role adherence scorer's reply.
const SchemaVerdicts = "role_adherence_verdicts"

// Verdicts is the analyze result: one verdict per message of the
// assistant, "yes" when it stays in role, "no" when it breaks it.
type Verdicts = pipeline.TurnVerdicts

//go:embed *.tmpl
var templates embed.FS

var verdictsPrompt = &pipeline.Prompt{Schema: pipeline.TurnVerdictsSchema(SchemaVerdicts), User: verdictsMessage, Demo: demoVerdicts}

// Definition is the role adherence scorer.
var Definition = pipeline.Definition{
	Name:         scoring.RoleAdherence,
	Sends:        []scoring.Field{scoring.FieldTurns, scoring.FieldInstructions},
	Conversation: true,
	Prompts:      pipeline.NewPrompts(templates, nil, verdictsPrompt),
	Run:          run,
}

// New returns the role adherence scorer, asking judge.
func New(judge scoring.Judge, opts scoring.Options) (scoring.Scorer, error) {
	return pipeline.New(Definition, judge, opts)
}

var verdictSpec = pipeline.TurnVerdictSpec(verdictsPrompt.Schema, "message")

// run is the role_adherence pipeline: one call judges every message of
// the assistant against the role its system prompt (the case's
// Instructions) gives it; score = messages in role / messages × scale,
// rounded to two decimals. A conversation without a system prompt has no
// role to keep and is not scorable (deepeval requires chatbot_role); one
// without a message of the assistant scores the scale, as in deepeval,
// without a call.
func run(e *pipeline.Evaluation) {
	turns := e.Case.Turns
	msgs := pipeline.NumberTurns(turns)
	role := systemPrompt(e.Case.Instructions)
	if role == "" {
		e.NotScorable("The conversation has no system prompt, so there is no role to judge the assistant's messages against.")
		return
	}
	var targets []pipeline.TurnTarget
	for _, m := range msgs {
		if m.Role == scoring.RoleAssistant {
			targets = append(targets, pipeline.TurnTarget{Turn: m.Number})
		}
	}
	if len(targets) == 0 {
		e.ScoreAll()
		e.SetReason("The score is " + pipeline.FormatScore(e.Result.Score) + " because the assistant wrote no message in the conversation, so it never left its role.")
		return
	}
	verdicts, reordered, ok := e.JudgeTurns(verdictsPrompt, pipeline.PromptData{SystemPrompt: role, Turns: pipeline.TurnLines(turns), Targets: targets}, verdictSpec)
	if !ok {
		return
	}
	e.ScoreTurns(Verdicts{Reordered: reordered}, targets, verdicts, func(score string, yes, n int) string {
		return fmt.Sprintf("The score is %s because %d of the assistant's %d %s %s in the role its system prompt gives it",
			score, yes, n, pipeline.Plural(n, "message", "messages"), pipeline.Plural(yes, "stays", "stay"))
	}, "out of role")
}

// systemPrompt joins the non-blank instructions into the system prompt
// the role is read from.
func systemPrompt(instructions []string) string {
	var parts []string
	for _, s := range instructions {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n\n")
}

// verdictsMessage sends the system prompt, the conversation and the
// messages to judge, then the task, which names their number: what
// differs between calls comes last.
func verdictsMessage(b []byte, d pipeline.PromptData) ([]byte, error) {
	b = pipeline.AppendText(b, "SYSTEM", d.SystemPrompt)
	b = append(b, "\n\n"...)
	b, err := pipeline.AppendJSONL(b, "CONVERSATION", d.Turns)
	if err != nil {
		return nil, err
	}
	b = append(b, "\n\n"...)
	if b, err = pipeline.AppendTargets(b, "REPLIES", d.Targets); err != nil {
		return nil, err
	}
	n := strconv.Itoa(len(d.Targets))
	return append(b, "\n\nJudge whether each of these "+n+" messages of the assistant stays in the role its system prompt gives it. Return exactly "+n+" verdicts."...), nil
}
