package genai

import (
	"strconv"
	"strings"
	"unicode"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// readOpenInference reads llm.input_messages.N.message.* and
// llm.output_messages.N.message.* (and the legacy llm.prompts / llm.choices).
func readOpenInference(idx *indexedAttrs) extraction {
	x := extraction{convention: ConventionOpenInference}
	if es := idx.get(prefixOIInput); len(es) > 0 {
		x.input, x.hasInput = oiMessages(es, prefixOIInput, "user"), true
	} else if es := idx.get(prefixOIPrompts); len(es) > 0 {
		x.input, x.hasInput = textEntries(es, prefixOIPrompts, "prompt.text", "user"), true
	}
	if es := idx.get(prefixOIOutput); len(es) > 0 {
		x.output, x.hasOutput = oiMessages(es, prefixOIOutput, "assistant"), true
	} else if es := idx.get(prefixOIChoices); len(es) > 0 {
		x.output, x.hasOutput = textEntries(es, prefixOIChoices, "completion.text", "assistant"), true
	}
	return x
}

func oiMessages(entries []indexedEntry, prefix, defaultRole string) []message {
	out := make([]message, 0, len(entries))
	for _, e := range entries {
		f := e.fields
		m := message{index: e.index, role: field(f, "message.role")}
		if m.role == "" {
			m.role = defaultRole
		}
		m.role = normRole(m.role)
		key := prefix + strconv.Itoa(e.index) + "."
		if p, ok := indexedText(f, "message.content", key); ok {
			m.parts = append(m.parts, p)
		}
		for _, c := range subIndexed(f, "message.contents.") {
			p := oiContentPart(c.fields)
			if p.kind == partNotText {
				p.attr = key + "message.contents." + strconv.Itoa(c.index) + ".message_content.text"
			}
			m.parts = append(m.parts, p)
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
		if v, ok := f["message_content.text"]; ok && attrType(v) != "" {
			return part{kind: partNotText, text: issueType(attrType(v))}
		}
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
func textEntries(entries []indexedEntry, prefix, key, role string) []message {
	out := make([]message, 0, len(entries))
	for _, e := range entries {
		m := message{index: e.index, role: role}
		if p, ok := indexedText(e.fields, key, prefix+strconv.Itoa(e.index)+"."); ok {
			m.parts = []part{p}
		}
		out = append(out, m)
	}
	return out
}

// indexedText reads the text field key of one flattened entry whose keys
// start with at: its text, or a not-text part naming the attribute when it
// is a number, a boolean or empty. ok is false when the field is absent.
func indexedText(fields map[string]pcommon.Value, key, at string) (part, bool) {
	v, ok := fields[key]
	if !ok {
		return part{}, false
	}
	if issue := textIssue(v, false); issue != "" {
		return part{kind: partNotText, text: issue, attr: at + key}, true
	}
	return part{kind: partText, text: valueString(v)}, true
}

// readRawIO reads OpenInference input.value / output.value (rawMessages).
func readRawIO(attrs pcommon.Map) extraction {
	x := extraction{convention: ConventionOpenInference}
	var bad bool
	if v, ok := attrs.Get(attrOIInputValue); ok {
		x.hasInput, x.inAttr = true, attrOIInputValue
		if x.input, x.inIssue, bad = rawMessages(v, attrString(attrs, "input.mime_type"), "user", false); bad {
			x.malformed = attrOIInputValue
		}
	}
	if v, ok := attrs.Get(attrOIOutputValue); ok {
		x.hasOutput, x.outAttr = true, attrOIOutputValue
		if x.output, x.outIssue, bad = rawMessages(v, attrString(attrs, "output.mime_type"), "assistant", true); bad {
			x.malformed = attrOIOutputValue
		}
	}
	return x
}

// OpenInference's raw input and output of a span.
const (
	attrOIInputValue  = "input.value"
	attrOIOutputValue = "output.value"
)

// rawMessages reads an input.value or output.value. A text/* mime type
// makes it plain text. Otherwise it is JSON when it opens as JSON: an
// OpenAI or Anthropic request or response, messages, or a chain's result
// naming its text ({"output": ...}); other JSON is no message (the issue
// says so). JSON that does not parse is malformed when the mime type says
// JSON or the text holds no letter at all; otherwise it is prose that
// starts with a bracket. A value that is not text/* and is a JSON scalar
// (a number, a boolean, null, "") is no text either: the instrumentations
// mark a string output text/plain.
func rawMessages(v pcommon.Value, mime, role string, isOutput bool) (msgs []message, issue string, malformed bool) {
	isJSON := strings.HasPrefix(mime, "application/json")
	isText := strings.HasPrefix(mime, "text/") && v.Type() == pcommon.ValueTypeStr
	if issue = textIssue(v, !isText); issue != "" {
		return nil, issue, false
	}
	if isText {
		return parseMessages(v.Str(), role), "", false
	}
	val, bad := decodedMessages(v, isOutput)
	if s, ok := val.(string); ok {
		if bad && (isJSON || strings.IndexFunc(s, unicode.IsLetter) < 0) {
			return nil, "", true
		}
		return parseMessages(unquoteJSONString(s), role), "", false
	}
	if messageShaped(val) {
		return finalAnswer(parseMessages(val, role), isOutput), "", false
	}
	keys := inputKeys
	if isOutput {
		keys = outputKeys
	}
	if m, ok := val.(map[string]any); ok {
		for _, k := range keys {
			if inner := m[k]; messageShaped(inner) {
				return finalAnswer(parseMessages(inner, role), isOutput), "", false
			}
		}
	}
	if emptyContainer(val) {
		return nil, issueEmpty, false
	}
	return nil, issueNoMessage, false
}

// finalAnswer is the answer of an output that holds a whole conversation
// (a LangGraph state's messages, user turns and tool results included):
// its last assistant message, or none. An output of assistant messages
// only (choices) and any input are returned as they are.
func finalAnswer(msgs []message, isOutput bool) []message {
	if !isOutput {
		return msgs
	}
	last, conversation := -1, false
	for i, m := range msgs {
		if m.role == "assistant" {
			last = i
		} else {
			conversation = true
		}
	}
	switch {
	case !conversation:
		return msgs
	case last < 0:
		return nil
	}
	m := msgs[last]
	m.index = 0
	return []message{m}
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
