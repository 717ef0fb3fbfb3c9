package genai

import "go.opentelemetry.io/collector/pdata/pcommon"

// readVercel reads the Vercel AI SDK ai.* attributes: the provider prompt
// ai.prompt.messages on doGenerate/doStream spans (ai.prompt on outer
// spans), and ai.response.text / ai.response.object / ai.response.toolCalls
// (ai.result.* before v4).
func readVercel(attrs pcommon.Map) extraction {
	x := extraction{convention: ConventionVercel}
	if v, ok := attrs.Get("ai.prompt.messages"); ok {
		x.input, x.hasInput = parseMessages(decoded(v), "user"), true
	} else if v, ok := attrs.Get("ai.prompt"); ok {
		d := decoded(v)
		x.hasInput = true
		if m, ok := d.(map[string]any); ok {
			// {"system": ..., "prompt": string|messages, "messages": [...]}
			x.system = instructionTexts(m["system"])
			x.input = parseMessages(m["prompt"], "user")
			x.input = appendMessages(x.input, parseMessages(m["messages"], "user"))
		} else {
			x.input = parseMessages(d, "user")
		}
	}

	out := message{role: "assistant", index: 0}
	for _, k := range [...]string{"ai.response.text", "ai.result.text", "ai.response.object", "ai.result.object"} {
		if v, ok := attrs.Get(k); ok {
			x.hasOutput = true
			if s := valueString(v); s != "" {
				out.parts = append(out.parts, part{kind: partText, text: s})
				break
			}
		}
	}
	for _, k := range [...]string{"ai.response.toolCalls", "ai.result.toolCalls"} {
		if v, ok := attrs.Get(k); ok {
			x.hasOutput = true
			d := decoded(v)
			out.parts = appendParts(out.parts, toolCallList(d))
			break
		}
	}
	out.finishReason = firstAttr(attrs, "ai.response.finishReason", "ai.finishReason")
	if x.hasOutput {
		x.output = []message{out}
	}
	return x
}

// toolCallList marks Vercel tool calls ({toolCallId, toolName, args|input})
// as tool-call parts.
func toolCallList(v any) []any {
	arr, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]any, 0, len(arr))
	for _, e := range arr {
		if m, ok := e.(map[string]any); ok {
			c := make(map[string]any, len(m)+1)
			for k, v := range m {
				c[k] = v
			}
			c["type"] = "tool-call"
			out = append(out, c)
		}
	}
	return out
}
