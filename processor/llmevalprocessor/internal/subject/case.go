package subject // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/subject"

import (
	"slices"
	"strings"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/resultwrite"
	"github.com/llm-eval/llm_eval/scoring"
)

// caseFromGeneration builds what the scorer evaluates of one call, read
// from a span or from log events.
func caseFromGeneration(gen genai.Generation, of resultwrite.Evaluated, sc evalstore.Scorer) scoring.Case {
	c := scoring.Case{
		Input:   gen.Input,
		Turns:   history(gen.History),
		Output:  gen.Output,
		Context: ownContext(gen, sc),
		Metadata: map[string]string{
			"trace_id":   of.TraceID.String(),
			"span_id":    of.SpanID.String(),
			"convention": gen.Convention,
		},
	}
	if c.Input == "" {
		c.Input = gen.Conversation
	}
	switch {
	case len(sc.Instructions) > 0:
		c.Instructions = sc.Instructions
	case sc.UseSystemInstructions:
		c.Instructions = gen.SystemInstructions
		if slices.ContainsFunc(c.Instructions, readerCut) {
			c.Cut = append(c.Cut, scoring.FieldInstructions)
		}
	}
	if readerCut(c.Input) {
		c.Cut = append(c.Cut, scoring.FieldInput)
	}
	if readerCut(c.Output) {
		c.Cut = append(c.Cut, scoring.FieldOutput)
	}
	return c
}

// readerCut reports whether t was cut before it reached the case: the
// reader's cut at 1 MiB, or the conversation keeper's cut of a message to
// fit its conversation, are the only ones that end a text with
// scoring.TruncationMarker (genai neutralises the marker at the end of a
// text it did not cut).
func readerCut(t string) bool {
	return strings.HasSuffix(t, scoring.TruncationMarker)
}

// history is the conversation before the request, as the scorers take it;
// a message the reader cut is marked so (scoring.Turn.Cut).
func history(turns []genai.Turn) []scoring.Turn {
	if len(turns) == 0 {
		return nil
	}
	out := make([]scoring.Turn, len(turns))
	for i, t := range turns {
		role := scoring.RoleUser
		if t.Role == genai.RoleAssistant {
			role = scoring.RoleAssistant
		}
		out[i] = scoring.Turn{Role: role, Content: t.Content, Cut: readerCut(t.Content)}
	}
	return out
}

// ownContext is the context a scorer takes from the call itself, by its
// context_sources: the tool results in its input (tool_messages), the
// documents recorded on its span (trace) and its system messages (system).
// The scorers take scoring.TruncationMarker at the end of a context item
// as a cut made before them: the reader ends a text it cut at 1 MiB with
// it, and neutralises it at the end of a text it did not cut, so only that
// cut reaches them marked (the scorers neutralise every other marker).
func ownContext(gen genai.Generation, sc evalstore.Scorer) []string {
	var out []string
	add := func(texts []string) {
		for _, t := range texts {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	if sc.FromToolMessages {
		add(gen.ToolResults)
	}
	if sc.FromTrace {
		add(gen.Documents)
	}
	if sc.FromSystem {
		add(gen.SystemInstructions)
	}
	return out
}
