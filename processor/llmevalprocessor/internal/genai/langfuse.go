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
// ("malformed langfuse.observation.output").
func readLangfuse(attrs pcommon.Map) extraction {
	x := extraction{convention: ConventionLangfuse}
	if v, ok := attrs.Get(attrLangfuseInput); ok {
		x.hasInput = true
		if val, bad := decodedMessages(v, false); bad {
			x.malformed = attrLangfuseInput
		} else {
			x.input = parseMessages(val, "user")
		}
	}
	if v, ok := attrs.Get(attrLangfuseOutput); ok {
		x.hasOutput = true
		if val, bad := decodedMessages(v, true); bad {
			x.malformed = attrLangfuseOutput
		} else {
			x.output = parseMessages(val, "assistant")
		}
	}
	return x
}
