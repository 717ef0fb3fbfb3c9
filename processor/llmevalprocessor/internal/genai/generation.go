// Package genai recognises LLM generation spans of the known trace
// conventions and reads what was asked and answered from them.
package genai

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Kind is what a span is to the evaluator.
type Kind int

// Kinds of span.
const (
	KindOther      Kind = iota // not an LLM span: passes through
	KindGeneration             // one LLM call: scored
	KindAggregate              // agent/workflow span repeating a child's content: not scored
	KindJudge                  // a span of the judge's own calls: never scored
)

// Generation is what one generation span says.
type Generation struct {
	Convention         string   // gen_ai, gen_ai_events, openinference, openllmetry, vercel
	Input              string   // last user turn
	Conversation       string   // the whole input conversation as text, role-prefixed
	Output             string   // text of the first choice
	Context            []string // tool results and retrieved documents on the span
	SystemInstructions []string
	Model              string
	ResponseID         string
	// Missing is set when the span has no usable content (absent,
	// redacted, or only tool calls): the span is not scorable.
	Missing string
}

// Classify says what span is. It is called for every span and must be cheap.
func Classify(resource pcommon.Resource, scope pcommon.InstrumentationScope, span ptrace.Span) Kind {
	panic("skeleton")
}

// Read extracts the generation from a span Classify called KindGeneration.
// It never panics, whatever the attributes hold.
func Read(scope pcommon.InstrumentationScope, span ptrace.Span) Generation {
	panic("skeleton")
}
