package genai

import "go.opentelemetry.io/collector/pdata/pcommon"

// ConventionLangfuse is Generation.Convention for the Langfuse JS SDK
// (v4+, built on OpenTelemetry), whose observations write their own
// attributes rather than GenAI ones.
const ConventionLangfuse = "langfuse"

// Langfuse observation attributes (@langfuse/tracing). The type is
// generation for a model call (observeOpenAI, startObservation with
// asType "generation"); Classify reads it.
const (
	attrLangfuseType   = "langfuse.observation.type"
	attrLangfuseInput  = "langfuse.observation.input"
	attrLangfuseOutput = "langfuse.observation.output"
	attrLangfuseModel  = "langfuse.observation.model.name"
)

// readLangfuse reads a Langfuse observation's input and output: JSON that
// is whatever the application or wrapper recorded. observeOpenAI records
// the request ({"messages": [...], "tools": [...]}) and the reply's
// message ({"role", "content", "tool_calls"}); a plain string is one
// message. The system messages of the input become the instructions. Text
// that opens as JSON but is none is not judged: the span is not scorable
// ("malformed langfuse.observation.output"); nor is a value that is no
// text (a number, a boolean, null, empty, JSON that is no message): the
// reason names the attribute and what it holds.
func readLangfuse(attrs pcommon.Map) extraction {
	x := extraction{convention: ConventionLangfuse}
	if v, ok := attrs.Get(attrLangfuseInput); ok {
		x.readInput(v, attrLangfuseInput)
	}
	if v, ok := attrs.Get(attrLangfuseOutput); ok {
		x.readOutput(v, attrLangfuseOutput)
	}
	return x
}
