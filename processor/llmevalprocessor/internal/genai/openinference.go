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
			if p := oiToolCall(tc.fields); !hasToolCall(m.parts, p.tool.id) {
				m.parts = append(m.parts, p)
			}
		}
		callID := field(f, "message.tool_call_id")
		if m.role == "user" && callID != "" {
			// Anthropic's tool_result blocks arrive as a user message that
			// names the tool_use it answers.
			m.role = "tool"
		}
		if m.role == "tool" {
			markToolResults(m.parts, callID, field(f, "message.name"))
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
		// Anthropic's tool_use block: the call under tool_call.*, which the
		// message's tool_calls list repeats.
		return oiToolCall(f)
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

// oiToolCall reads tool_call.{id,function.name,function.arguments}.
func oiToolCall(f map[string]pcommon.Value) part {
	ref := &toolRef{
		id:   field(f, "tool_call.id"),
		name: field(f, "tool_call.function.name"),
		args: field(f, "tool_call.function.arguments"),
	}
	text := ref.name
	if ref.args != "" {
		text += "(" + ref.args + ")"
	}
	return part{kind: partToolCall, text: text, tool: ref}
}

// hasToolCall says whether parts hold a tool call with the given id.
func hasToolCall(parts []part, id string) bool {
	if id == "" {
		return false
	}
	for _, p := range parts {
		if p.kind == partToolCall && p.tool != nil && p.tool.id == id {
			return true
		}
	}
	return false
}
