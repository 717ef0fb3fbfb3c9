package subject // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/subject"

import (
	"slices"

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
	}
	return c
}

// history is the conversation before the request, as the scorers take it.
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
		out[i] = scoring.Turn{Role: role, Content: t.Content}
	}
	return out
}

// ownContext is the context a scorer takes from the call itself, by its
// context_sources: the tool results in its input (tool_messages), the
// documents recorded on its span (trace) and its system messages (system).
// A marker a text wrote itself is neutralised: the scorers take one at the
// end of a context item as a cut made before them, and only the trace
// context index's cut may end a document with it.
func ownContext(gen genai.Generation, sc evalstore.Scorer) []string {
	var out []string
	add := func(texts []string) {
		for _, t := range texts {
			t = scoring.NeutralizeTruncationMarkers(t)
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
