package genai

import (
	"encoding/json"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llm-eval/llm_eval/internal/lenientjson"
)

const (
	// maxFieldBytes caps every text field of a Generation.
	maxFieldBytes = 1 << 20
	// maxItems caps messages, parts, rebuilt indexed entries and context items.
	maxItems = 1000
	// redacted is the value OpenInference and others put in place of hidden content.
	redacted = "__REDACTED__"
)

// decoded turns an attribute value into plain Go values: a Str holding a JSON
// array or object is parsed leniently, Map and Slice values are taken as they
// are, anything else stays a scalar. JSON cut short is read as far as it
// goes; a string cut by the end of such JSON is dropped.
func decoded(v pcommon.Value) any {
	return decodedValue(v, false)
}

// decodedOutput is decoded for model output: a string cut by the end of the
// JSON is kept as far as it goes.
func decodedOutput(v pcommon.Value) any {
	return decodedValue(v, true)
}

func decodedValue(v pcommon.Value, keepCut bool) any {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return decodeTextOpt(v.Str(), keepCut)
	case pcommon.ValueTypeMap, pcommon.ValueTypeSlice:
		return v.AsRaw()
	case pcommon.ValueTypeEmpty:
		return nil
	default:
		return v.AsString()
	}
}

// decodeText parses s as JSON when it looks like a JSON array or object and
// otherwise returns s itself, so plain text and Python-repr strings pass as
// raw text.
func decodeText(s string) any {
	return decodeTextOpt(s, false)
}

func decodeTextOpt(s string, keepCut bool) any {
	t := strings.TrimSpace(s)
	if t == "" || (t[0] != '[' && t[0] != '{') {
		return s
	}
	v, ok := lenientjson.Parse(t, keepCut)
	if !ok {
		return s
	}
	return v
}

// decodedMessages is decodedValue for a message attribute whose
// convention defines it as JSON, decoded once; malformed reports a string
// that opens as JSON ([ or {) and cannot be read as such, even leniently as
// JSON cut short. Such text is not judged: brackets and escapes are no
// answer. A Python instrumentation's repr is read as raw text, not malformed.
func decodedMessages(v pcommon.Value, keepCut bool) (val any, malformed bool) {
	if v.Type() != pcommon.ValueTypeStr {
		return decodedValue(v, keepCut), false
	}
	s := v.Str()
	t := strings.TrimSpace(s)
	if t == "" || (t[0] != '[' && t[0] != '{') {
		return s, false
	}
	if parsed, ok := lenientjson.Parse(t, keepCut); ok {
		return parsed, false
	}
	return s, !pythonRepr(t)
}

// pythonRepr reports whether t looks like the repr of a Python list or dict
// of strings, as some Python instrumentations record messages: its first
// key or item is quoted with single quotes.
func pythonRepr(t string) bool {
	t = strings.TrimLeft(t, "[{ \t\r\n")
	return strings.HasPrefix(t, "'")
}

// unquoteJSONString returns the text of s when s is a JSON string literal
// ("\"shipped\"", as JSON.stringify writes a string), and s otherwise.
func unquoteJSONString(s string) string {
	t := strings.TrimSpace(s)
	if len(t) < 2 || t[0] != '"' || t[len(t)-1] != '"' {
		return s
	}
	var u string
	if json.Unmarshal([]byte(t), &u) != nil {
		return s
	}
	return u
}

// attrString returns a string attribute, or the string form of a scalar one.
func attrString(m pcommon.Map, key string) string {
	v, ok := m.Get(key)
	if !ok {
		return ""
	}
	return valueString(v)
}

func valueString(v pcommon.Value) string {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return v.Str()
	case pcommon.ValueTypeEmpty:
		return ""
	case pcommon.ValueTypeMap, pcommon.ValueTypeSlice:
		return stringify(v.AsRaw())
	default:
		return v.AsString()
	}
}

// stringify renders a decoded value as text: strings as they are, anything
// else as compact JSON.
func stringify(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case json.Number:
		return t.String()
	case []byte:
		return "" // binary content is never judged
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// str returns m[key] when it is a string (or a number, rendered).
func str(m map[string]any, key string) string {
	switch t := m[key].(type) {
	case string:
		return t
	case json.Number:
		return t.String()
	case int64:
		return strconv.FormatInt(t, 10)
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64)
	}
	return ""
}

// toInt reads an index that may be a JSON number, an int64 or a digit string.
func toInt(v any) (int, bool) {
	switch t := v.(type) {
	case json.Number:
		n, err := strconv.Atoi(t.String())
		return n, err == nil
	case int64:
		return int(t), true
	case float64:
		return int(t), true
	case string:
		n, err := strconv.Atoi(t)
		return n, err == nil
	}
	return 0, false
}

// appendBounded joins parts into b with sep without letting b grow past
// maxFieldBytes+1: a text one byte over the bound tells clipText that
// something was left out, so the cut is marked.
func appendBounded(b *strings.Builder, sep, s string) {
	if b.Len() > maxFieldBytes || s == "" {
		return
	}
	if b.Len() > 0 {
		b.WriteString(sep)
	}
	if room := maxFieldBytes + 1 - b.Len(); len(s) > room {
		s = s[:max(room, 0)]
	}
	b.WriteString(s)
}
