package genai

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// attrOIInvocationParameters is OpenInference's JSON of the request's
// parameters, everything but the messages.
const attrOIInvocationParameters = "llm.invocation_parameters"

// readInvocationSystem reads Anthropic's `system` request parameter (a
// string or a list of text blocks). The Messages API takes the system prompt
// as a parameter, not a message, so the OpenInference instrumentation keeps
// it only in llm.invocation_parameters (and in the whole request in
// input.value, which is not parsed again for it). It sets only the system
// instructions: the messages come from the convention's own reader. JSON
// that does not parse, or has no system parameter, gives nothing.
func readInvocationSystem(attrs pcommon.Map) extraction {
	x := extraction{convention: ConventionOpenInference}
	v, ok := attrs.Get(attrOIInvocationParameters)
	if !ok || (v.Type() == pcommon.ValueTypeStr && !strings.Contains(v.Str(), `"system"`)) {
		// Most requests (all OpenAI ones) have no system parameter: their
		// parameters, tool schemas included, are not parsed.
		return x
	}
	if params, ok := decoded(v).(map[string]any); ok {
		if sys, ok := params["system"]; ok {
			x.system = instructionTexts(sys)
		}
	}
	return x
}
