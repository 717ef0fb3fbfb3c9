package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"slices"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/resultwrite"
	"github.com/llm-eval/llm_eval/scoring"
)

// evalSubject is an item the store holds: a held span, a log call, or the
// pair of both.
type evalSubject = evalstore.Subject[ScorerConfig]

// caseFromGeneration builds what the scorer evaluates of one call, read
// from a span or from log events.
func caseFromGeneration(gen genai.Generation, of evaluatedSpan, cfg ScorerConfig) scoring.Case {
	c := scoring.Case{
		Input:   gen.Input,
		Output:  gen.Output,
		Context: ownContext(gen, cfg),
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
	case len(cfg.Instructions) > 0:
		c.Instructions = cfg.Instructions
	case cfg.UseSystemInstructions:
		c.Instructions = gen.SystemInstructions
	}
	return c
}

// ownContext is the context a scorer takes from the call itself, by its
// context_sources: the tool results in its input (tool_messages), the
// documents recorded on its span (trace) and its system messages (system).
func ownContext(gen genai.Generation, cfg ScorerConfig) []string {
	var out []string
	add := func(texts []string) {
		for _, t := range texts {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	if cfg.takesContextFrom(contextSourceToolMessages) {
		add(gen.ToolResults)
	}
	if cfg.takesContextFrom(contextSourceTrace) {
		add(gen.Documents)
	}
	if cfg.takesContextFrom(contextSourceSystem) {
		add(gen.SystemInstructions)
	}
	return out
}

// evalResult is one scorer's finished evaluation of one item.
type evalResult = evalstore.Result

// errorResult is a failed evaluation of type t.
func errorResult(t scoring.ErrorType, err error) scoring.Result { return evalstore.ErrorResult(t, err) }

// evaluatedSpan identifies the span whose results a subject writes.
type evaluatedSpan = resultwrite.Evaluated
