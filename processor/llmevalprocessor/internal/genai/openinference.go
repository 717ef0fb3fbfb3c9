package genai

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// readOpenInference reads llm.input_messages.N.message.* and
// llm.output_messages.N.message.* (and the legacy llm.prompts / llm.choices).
func readOpenInference(idx *indexedAttrs) extraction {
	x := extraction{convention: ConventionOpenInference}
	if es := idx.get(prefixOIInput); len(es) > 0 {
		x.input, x.hasInput = oiMessages(es, "user"), true
	} else if es := idx.get(prefixOIPrompts); len(es) > 0 {
		x.input, x.hasInput = textEntries(es, "prompt.text", "user"), true
	}
	if es := idx.get(prefixOIOutput); len(es) > 0 {
		x.output, x.hasOutput = oiMessages(es, "assistant"), true
	} else if es := idx.get(prefixOIChoices); len(es) > 0 {
		x.output, x.hasOutput = textEntries(es, "completion.text", "assistant"), true
	}
	return x
}

func oiMessages(entries []indexedEntry, defaultRole string) []message {
	out := make([]message, 0, len(entries))
	for _, e := range entries {
		f := e.fields
		m := message{index: e.index, role: field(f, "message.role")}
		if m.role == "" {
			m.role = defaultRole
		}
		m.role = normRole(m.role)
		if c := field(f, "message.content"); c != "" {
			m.parts = append(m.parts, part{kind: partText, text: c})
		}
		for _, c := range subIndexed(f, "message.contents.") {
			m.parts = append(m.parts, oiContentPart(c.fields))
		}
		for _, tc := range subIndexed(f, "message.tool_calls.") {
			ref := &toolRef{
				id:   field(tc.fields, "tool_call.id"),
				name: field(tc.fields, "tool_call.function.name"),
				args: field(tc.fields, "tool_call.function.arguments"),
			}
			text := ref.name
			if ref.args != "" {
				text += "(" + ref.args + ")"
			}
			m.parts = append(m.parts, part{kind: partToolCall, text: text, tool: ref})
		}
		if m.role == "tool" {
			markToolResults(m.parts, field(f, "message.tool_call_id"), field(f, "message.name"))
		}
		out = append(out, m)
	}
	return out
}

// oiContentPart reads message.contents.M.message_content.{type,text,image...}.
func oiContentPart(f map[string]pcommon.Value) part {
	text := field(f, "message_content.text")
	switch strings.ToLower(field(f, "message_content.type")) {
	case "text", "":
		if text == "" {
			return part{kind: partOther}
		}
		return part{kind: partText, text: text}
	case "reasoning", "thinking":
		return part{kind: partReasoning}
	case "tool_use", "tool_call":
		return part{kind: partToolCall, text: text}
	case "tool_result":
		return part{kind: partToolResult, text: text}
	case "image", "audio", "file", "video":
		return part{kind: partMedia}
	}
	return part{kind: partOther}
}

// textEntries reads a flattened list whose entries hold one text field.
func textEntries(entries []indexedEntry, key, role string) []message {
	out := make([]message, 0, len(entries))
	for _, e := range entries {
		out = append(out, message{index: e.index, role: role, parts: []part{{kind: partText, text: field(e.fields, key)}}})
	}
	return out
}

// readRawIO reads OpenInference input.value / output.value: JSON (an OpenAI
// or Anthropic request/response, or messages) when it parses as such,
// otherwise plain text.
func readRawIO(attrs pcommon.Map) extraction {
	x := extraction{convention: ConventionOpenInference}
	if v, ok := attrs.Get("input.value"); ok {
		x.input, x.hasInput = rawMessages(v, attrString(attrs, "input.mime_type"), "user", false), true
	}
	if v, ok := attrs.Get("output.value"); ok {
		x.output, x.hasOutput = rawMessages(v, attrString(attrs, "output.mime_type"), "assistant", true), true
	}
	return x
}

func rawMessages(v pcommon.Value, mime, role string, isOutput bool) []message {
	raw := valueString(v)
	if strings.HasPrefix(mime, "text/") && v.Type() == pcommon.ValueTypeStr {
		return parseMessages(raw, role)
	}
	msgs := parseMessages(decodedValue(v, isOutput), role)
	for _, m := range msgs {
		if m.text() != "" || m.hasToolCalls() {
			return msgs
		}
	}
	// JSON of an unknown shape: judge the raw text.
	return parseMessages(raw, role)
}
