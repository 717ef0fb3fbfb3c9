package genai

import "go.opentelemetry.io/collector/pdata/pcommon"

// readVercel reads the Vercel AI SDK ai.* attributes: the provider prompt
// ai.prompt.messages on doGenerate/doStream spans (ai.prompt on outer
// spans), and ai.response.text / ai.response.object / ai.response.toolCalls
// (ai.result.* before v4).
func readVercel(attrs pcommon.Map) extraction {
	x := extraction{convention: ConventionVercel}
	if v, ok := attrs.Get("ai.prompt.messages"); ok {
		x.readInput(v, "ai.prompt.messages")
	} else if v, ok := attrs.Get("ai.prompt"); ok {
		x.hasInput, x.inAttr = true, "ai.prompt"
		if x.inIssue = textIssue(v, true); x.inIssue == "" {
			x.input, x.system = vercelPrompt(decoded(v))
		}
	}

	out := message{role: "assistant", index: 0}
	for _, k := range [...]string{"ai.response.text", "ai.result.text", "ai.response.object", "ai.result.object"} {
		v, ok := attrs.Get(k)
		if !ok {
			continue
		}
		x.hasOutput = true
		if issue := textIssue(v, false); issue != "" {
			// Said when no other key has the answer and no tool was called.
			if x.outIssue == "" {
				x.outAttr, x.outIssue = k, issue
			}
			continue
		}
		out.parts = append(out.parts, part{kind: partText, text: valueString(v)})
		break
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

// vercelPrompt reads the ai.prompt of an outer span: {"system", "prompt":
// text or messages, "messages"}, or the prompt itself.
func vercelPrompt(d any) (input []message, system []string) {
	m, ok := d.(map[string]any)
	if !ok {
		return parseMessages(d, "user"), nil
	}
	input = parseMessages(m["prompt"], "user")
	return appendMessages(input, parseMessages(m["messages"], "user")), instructionTexts(m["system"])
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
