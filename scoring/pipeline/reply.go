package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/llm-eval/llm_eval/internal/lenientjson"
	"github.com/llm-eval/llm_eval/scoring"
)

// errIncompleteJSON reports JSON that starts but never closes, the usual
// sign of a reply cut at the token limit.
var errIncompleteJSON = errors.New("the JSON in the reply is incomplete: it was cut off before its closing bracket")

// Bounds of reading a reply.
const (
	// maxJSONCandidates bounds how many opening brackets ExtractJSON tries.
	maxJSONCandidates = 64
	// maxReplyBytes is the longest reply read. The longest reply a step
	// asks for, 50 verdicts of one sentence each, is about 10 KB; a reply
	// far beyond that is a runaway generation, not an answer.
	maxReplyBytes = 256 << 10
)

// ExtractJSON finds the reply object of schema in a judge reply. It
// tolerates code fences, prose before and after the JSON, and trailing
// commas (the shared lenient scanner reads them). The first value that
// decodes and has every key schema requires wins, so bracketed prose
// ("checked [1] and [2]") or a stray {} before the object is passed over.
// When no value has them all, the first with the most of them is
// returned, else the first value that decodes (the code fence's, when
// there is a fence), for the caller to read or reject.
func ExtractJSON(reply string, schema *scoring.Schema) (any, error) {
	if len(reply) > maxReplyBytes {
		return nil, fmt.Errorf("the reply is %d bytes long, more than the %d bytes allowed; reply with the JSON object only", len(reply), maxReplyBytes)
	}
	if strings.TrimSpace(reply) == "" {
		return nil, errors.New("the reply is empty")
	}
	shape := shapeOf(schema)
	body := unfence(reply)
	found := scanJSON(body, shape)
	if found.match {
		return found.value, nil
	}
	if body != reply {
		whole := scanJSON(reply, shape)
		if whole.match {
			return whole.value, nil
		}
		if (!found.decoded && found.err == nil) || whole.keys > found.keys {
			found = whole // the fence held no JSON at all, or less of the reply
		}
	}
	switch {
	case found.decoded:
		return found.value, nil
	case found.err != nil:
		return nil, found.err
	}
	return nil, errors.New("the reply contains no JSON object")
}

// scanned is what scanJSON found in a text.
type scanned struct {
	// value is the value with the shape's keys; else the first with the
	// most of them; else the first that decoded.
	value   any
	match   bool // value has all the shape's keys
	decoded bool // some value decoded
	keys    int  // required keys value has
	err     error
}

// scanJSON tries the opening brackets of text in turn, at most
// maxJSONCandidates, and stops at the first value of shape. A value that
// decodes is skipped whole, so its inner brackets are not tried again.
func scanJSON(text string, shape replyShape) scanned {
	var out scanned
	start := 0
	for range maxJSONCandidates {
		i := strings.IndexAny(text[start:], "{[")
		if i < 0 {
			break
		}
		i += start
		v, n, err := lenientjson.Prefix(text[i:])
		if err != nil {
			if out.err == nil {
				out.err = fmt.Errorf("the reply is not valid JSON: %w", err)
				if errors.Is(err, lenientjson.ErrTruncated) {
					out.err = errIncompleteJSON
				}
			}
			if errors.Is(err, lenientjson.ErrTruncated) {
				// The value runs to the end of text: every later bracket
				// is a part of it, not a reply of its own.
				break
			}
			start = i + 1
			continue
		}
		if shape.fits(v) {
			return scanned{value: v, match: true, decoded: true}
		}
		if k := shape.keysOf(v); !out.decoded || k > out.keys {
			out.value, out.decoded, out.keys = v, true, k
		}
		start = i + max(n, 1)
	}
	return out
}

// unfence returns the body of the first Markdown code fence in s, or s
// when it has none.
func unfence(s string) string {
	i := strings.Index(s, "```")
	if i < 0 {
		return s
	}
	body := s[i+3:]
	// Skip the info string (```json).
	if nl := strings.IndexByte(body, '\n'); nl >= 0 && !strings.ContainsAny(body[:nl], "{[") {
		body = body[nl+1:]
	}
	if j := strings.Index(body, "```"); j >= 0 {
		body = body[:j]
	}
	if !strings.ContainsAny(body, "{[") {
		return s
	}
	return body
}

// ListField returns the list a step's reply carries under field. It also
// accepts a bare list, a single object where a list was expected (one
// holding one of itemKeys), a differently capitalised field name, and an
// object whose only list is under another name. A string where the list
// was expected is rejected: it is usually the whole text, not one item.
func ListField(v any, field string, itemKeys ...string) ([]any, error) {
	switch t := v.(type) {
	case []any:
		return t, nil
	case map[string]any:
		val, ok := t[field]
		if !ok {
			for k, kv := range t {
				if strings.EqualFold(strings.TrimSpace(k), field) {
					val, ok = kv, true
					break
				}
			}
		}
		if !ok {
			for _, key := range itemKeys {
				if hasKey(t, key) {
					return []any{t}, nil
				}
			}
			if l, only := onlyList(t); only {
				return l, nil
			}
			return nil, fmt.Errorf("the reply has no %q field", field)
		}
		switch vt := val.(type) {
		case []any:
			return vt, nil
		case map[string]any:
			return []any{vt}, nil
		}
		return nil, fmt.Errorf("the %q field must be a list, got %s", field, JSONKind(val))
	}
	return nil, fmt.Errorf("the reply must be a JSON object with a %q list, got %s", field, JSONKind(v))
}

func hasKey(m map[string]any, key string) bool {
	for k := range m {
		if strings.EqualFold(strings.TrimSpace(k), key) {
			return true
		}
	}
	return false
}

// Lookup returns the value of the first of keys that m has, spelled
// exactly, else spelled in any case.
func Lookup(m map[string]any, keys ...string) (any, bool) {
	for _, key := range keys {
		if v, ok := m[key]; ok {
			return v, true
		}
	}
	for _, key := range keys {
		for k, v := range m {
			if strings.EqualFold(strings.TrimSpace(k), key) {
				return v, true
			}
		}
	}
	return nil, false
}

// onlyList returns the value of m's single list-valued property.
func onlyList(m map[string]any) ([]any, bool) {
	var found []any
	n := 0
	for _, v := range m {
		if l, ok := v.([]any); ok {
			found = l
			n++
		}
	}
	return found, n == 1
}

// JSONKind names the kind of a decoded JSON value for an error message.
func JSONKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// ParseStrings parses a preprocess reply: a list of strings under field.
// Blank entries are dropped.
func ParseStrings(reply string, schema *scoring.Schema, field string) ([]string, error) {
	v, err := ExtractJSON(reply, schema)
	if err != nil {
		return nil, err
	}
	list, err := ListField(v, field)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(list))
	for i, it := range list {
		s, ok := it.(string)
		if !ok {
			return nil, fmt.Errorf("item %d of %q must be a string, got %s", i+1, field, JSONKind(it))
		}
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

// Describe renders a bad value for an error message, bounded in length.
func Describe(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return JSONKind(v)
	}
	const limit = 60
	if len(b) > limit {
		return string(b[:limit]) + "..."
	}
	return string(b)
}

// OptionalString returns m's string under key, trimmed; "" when it has
// none.
func OptionalString(m map[string]any, key string) string {
	v, ok := Lookup(m, key)
	if !ok {
		return ""
	}
	s, _ := v.(string)
	return strings.TrimSpace(s)
}

// parseReason parses a reason reply: a JSON object with a non-empty
// "reason" string. Prose around it is ignored and prose alone is rejected,
// so the reason is always the field the judge filled in.
func parseReason(reply string) (string, error) {
	v, err := ExtractJSON(reply, schemaReason)
	if err != nil {
		return "", err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return "", fmt.Errorf("the reply must be a JSON object with a %q string, got %s", "reason", JSONKind(v))
	}
	raw, ok := Lookup(m, "reason")
	if !ok {
		return "", errors.New(`the reply has no "reason" field`)
	}
	s, ok := raw.(string)
	if !ok || strings.TrimSpace(s) == "" {
		return "", fmt.Errorf(`the "reason" field must be a non-empty string, got %s`, Describe(raw))
	}
	return strings.TrimSpace(s), nil
}

// replyShape is what reading a reply takes from its step's schema: the keys
// the reply object must have, and the values each enum property allows.
// Every parser reads it from the schema, so a scorer that adds a schema
// gets schema-matched reading and strict verdict values without code of
// its own.
type replyShape struct {
	// required are the top-level keys of the reply object.
	required []string
	// enums maps a property name, at any depth, to its allowed values.
	enums map[string][]string
}

// replyShapes caches the shape of each schema by name; schemas are fixed
// package values, so a name always has the same shape.
var replyShapes sync.Map // string -> replyShape

// shapeOf returns the reply shape of s; a nil schema has no requirements.
func shapeOf(s *scoring.Schema) replyShape {
	if s == nil {
		return replyShape{}
	}
	if v, ok := replyShapes.Load(s.Name); ok {
		return v.(replyShape)
	}
	var root map[string]any
	_ = json.Unmarshal(s.Schema, &root) // the schemas are constants; tests decode each
	sh := replyShape{enums: map[string][]string{}}
	for _, r := range asList(root["required"]) {
		if k, ok := r.(string); ok {
			sh.required = append(sh.required, k)
		}
	}
	collectEnums(root, sh.enums)
	replyShapes.Store(s.Name, sh)
	return sh
}

// collectEnums adds the string enums of node's properties, and of the
// properties of its items and nested objects, to into.
func collectEnums(node map[string]any, into map[string][]string) {
	props, _ := node["properties"].(map[string]any)
	for name, p := range props {
		pm, _ := p.(map[string]any)
		for _, e := range asList(pm["enum"]) {
			if v, ok := e.(string); ok && !slices.Contains(into[name], v) {
				into[name] = append(into[name], v)
			}
		}
		collectEnums(pm, into)
	}
	if items, ok := node["items"].(map[string]any); ok {
		collectEnums(items, into)
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// fits reports whether v is a reply object of this shape: an object that
// has every required key (spelled in any case). A shape with no required
// keys fits any value.
func (sh replyShape) fits(v any) bool {
	return sh.keysOf(v) == len(sh.required)
}

// keysOf counts the required keys v has (spelled in any case); 0 for a
// value that is not an object.
func (sh replyShape) keysOf(v any) int {
	m, ok := v.(map[string]any)
	if !ok {
		return 0
	}
	n := 0
	for _, k := range sh.required {
		if hasKey(m, k) {
			n++
		}
	}
	return n
}

// Allowed returns the values schema allows for key, at any depth, or def
// when it has no enum for it.
func Allowed(schema *scoring.Schema, key string, def ...string) []string {
	if vs := shapeOf(schema).enums[key]; len(vs) > 0 {
		return vs
	}
	return def
}

// VerdictValue reads a verdict that must be one of allowed. Case, spaces
// and punctuation around the word do not count ("Yes.", " NO", `"n/a"`);
// anything else, such as "Yes/No", "maybe" or a sentence, is not a verdict.
func VerdictValue(raw any, allowed []string) (string, bool) {
	s, ok := raw.(string)
	if !ok {
		return "", false
	}
	s = strings.ToLower(strings.TrimFunc(s, isVerdictPadding))
	for _, a := range allowed {
		if s == a {
			return a, true
		}
	}
	return "", false
}

// QuoteList renders allowed values for an error message: "yes", "no" or "n/a".
func QuoteList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = `"` + v + `"`
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
