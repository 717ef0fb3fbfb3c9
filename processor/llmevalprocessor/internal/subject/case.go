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

// ownContext is the context a scorer takes from the call itself, by its
// context_sources: the tool results in its input (tool_messages), the
// documents recorded on its span (trace) and its system messages (system).
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
