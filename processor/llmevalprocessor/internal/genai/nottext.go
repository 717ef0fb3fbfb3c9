package genai

import (
	"encoding/json"
	"io"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// What a content attribute holds instead of text, after the attribute's
// name in a not_scorable reason ("langfuse.observation.output is a number,
// not text"). A failed or empty generation is not scorable: judged as
// text, "null" or "12345" would pass and water down every fail ratio.
const (
	issueEmpty     = "is empty"
	issueNoMessage = "holds JSON that is not a message"
)

// issueType is the issue of a value of the JSON type typ ("a number").
func issueType(typ string) string { return "is " + typ + ", not text" }

// scalarType names the type of a decoded value that is no text where text
// belongs: "null", "a boolean", "a number"; "" for a string or a container.
func scalarType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, int64, float64, int:
		return "a number"
	case []byte:
		return "bytes"
	}
	return ""
}

// attrType names the type of an attribute value that cannot be text: an
// Int, Double, Bool, Bytes or empty value; "" for a string, map or slice.
func attrType(v pcommon.Value) string {
	switch v.Type() {
	case pcommon.ValueTypeInt, pcommon.ValueTypeDouble:
		return "a number"
	case pcommon.ValueTypeBool:
		return "a boolean"
	case pcommon.ValueTypeBytes:
		return "bytes"
	case pcommon.ValueTypeEmpty:
		return "null"
	}
	return ""
}

// jsonScalar decodes s when the whole of it is one JSON scalar: null,
// true, false, a number or a string literal.
func jsonScalar(s string) (v any, ok bool) {
	if s == "" || strings.ContainsRune("[{", rune(s[0])) {
		return nil, false
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false // more than one value: text that starts like JSON
	}
	return v, true
}

// textIssue says why v, the value of a content attribute, holds no text:
// it is a number, a boolean or null (as its attribute type or, with
// jsonText, as the JSON its convention defines), or it is empty. It is ""
// when v may hold text; the reader then looks inside.
func textIssue(v pcommon.Value, jsonText bool) string {
	if typ := attrType(v); typ != "" {
		return issueType(typ)
	}
	switch v.Type() {
	case pcommon.ValueTypeMap:
		if v.Map().Len() == 0 {
			return issueEmpty
		}
	case pcommon.ValueTypeSlice:
		if v.Slice().Len() == 0 {
			return issueEmpty
		}
	case pcommon.ValueTypeStr:
		s := strings.TrimSpace(v.Str())
		if s == "" {
			return issueEmpty
		}
		if !jsonText {
			return ""
		}
		d, ok := jsonScalar(s)
		if !ok {
			return ""
		}
		if typ := scalarType(d); typ != "" {
			return issueType(typ)
		}
		if text, _ := d.(string); strings.TrimSpace(text) == "" {
			return issueEmpty
		}
	}
	return ""
}

// contentPart is the part of content given as a decoded value where text
// belongs (a message's content or text field): the text of a string, a
// not-text part naming the type of a number, boolean or null. ok is false
// for anything else, which the caller reads on.
func contentPart(v any) (p part, ok bool) {
	if s, isStr := v.(string); isStr {
		return part{kind: partText, text: s}, true
	}
	if typ := scalarType(v); typ != "" {
		return part{kind: partNotText, text: issueType(typ)}, true
	}
	return part{}, false
}

// textField reads the text field key of m as a part: ok is false when
// the field is absent, null or an empty string, or holds a container.
func textField(m map[string]any, key string) (part, bool) {
	v, present := m[key]
	if !present || v == nil {
		return part{}, false
	}
	p, ok := contentPart(v)
	if !ok || (p.kind == partText && p.text == "") {
		return part{}, false
	}
	return p, true
}

// messageKeys are the keys of a message, choice or request object in the
// JSON shapes parseMessages reads; an object with none of them is no message.
var messageKeys = [...]string{
	"role", "content", "parts", "text", "refusal", "tool_calls", "function_call",
	"message", "messages", "choices", "finish_reason", "finishReason",
}

// messageShaped says whether a decoded attribute value can hold messages:
// text, or JSON with at least one object of a message's keys or one string.
func messageShaped(v any) bool {
	switch t := v.(type) {
	case string:
		return true
	case map[string]any:
		for _, k := range messageKeys {
			if _, ok := t[k]; ok {
				return true
			}
		}
		_, ok := langChainMessage(t)
		return ok
	case []any:
		for i, e := range t {
			if i >= maxItems {
				break
			}
			switch e.(type) {
			case string:
				return true
			case map[string]any:
				if messageShaped(e) {
					return true
				}
			}
		}
	}
	return false
}

// emptyContainer says whether v is an empty JSON array or object.
func emptyContainer(v any) bool {
	switch t := v.(type) {
	case []any:
		return len(t) == 0
	case map[string]any:
		return len(t) == 0
	}
	return false
}

// readMessageAttr reads a content attribute whose convention defines it
// as JSON messages (or plain text): its messages, or the issue that keeps
// it from holding any (textIssue, JSON that is no message), or malformed
// when it opens as JSON and is none (decodedMessages).
func readMessageAttr(v pcommon.Value, defaultRole string, keepCut bool) (msgs []message, issue string, malformed bool) {
	if issue = textIssue(v, true); issue != "" {
		return nil, issue, false
	}
	val, bad := decodedMessages(v, keepCut)
	if bad {
		return nil, "", true
	}
	if s, ok := val.(string); ok {
		val = unquoteJSONString(s)
	}
	if !messageShaped(val) {
		if emptyContainer(val) {
			return nil, issueEmpty, false
		}
		return nil, issueNoMessage, false
	}
	return parseMessages(val, defaultRole), "", false
}

// sideIssue is the not_scorable reason of one side of a call that gave no
// text: the issue of its attribute attr, or the first not-text part of
// parts, named by its own attribute or as content of attr; a part that is
// empty counts only with empty. counted is the attribute for the
// content_malformed count, "" for an empty value.
func sideIssue(attr, issue string, parts []part, empty bool) (reason, counted string) {
	if issue != "" && attr != "" {
		return attr + " " + issue, countedAttr(attr, issue)
	}
	for _, p := range parts {
		if p.kind != partNotText || (p.text == issueEmpty && !empty) {
			continue
		}
		if p.attr != "" {
			return p.attr + " " + p.text, countedAttr(p.attr, p.text)
		}
		if attr != "" {
			return attr + ": its content " + p.text, countedAttr(attr, p.text)
		}
	}
	return "", ""
}

// countedAttr is the attribute counted as malformed for issue: none for
// an empty value, and an indexed key with its indexes as N
// ("llm.output_messages.N.message.content"), so the count's label takes
// few values.
func countedAttr(attr, issue string) string {
	if issue == issueEmpty {
		return ""
	}
	parts := strings.Split(attr, ".")
	for i, p := range parts {
		if p != "" && strings.Trim(p, "0123456789") == "" {
			parts[i] = "N"
		}
	}
	return strings.Join(parts, ".")
}
