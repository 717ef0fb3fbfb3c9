package scoring

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
)

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
func shapeOf(s *Schema) replyShape {
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

// allowed returns the values the schema allows for key, or def when the
// schema has no enum for it.
func (sh replyShape) allowed(key string, def ...string) []string {
	if vs := sh.enums[key]; len(vs) > 0 {
		return vs
	}
	return def
}

// verdictValue reads a verdict that must be one of allowed. Case, spaces
// and punctuation around the word do not count ("Yes.", " NO", `"n/a"`);
// anything else, such as "Yes/No", "maybe" or a sentence, is not a verdict.
func verdictValue(raw any, allowed []string) (string, bool) {
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

// quoteList renders allowed values for an error message: "yes", "no" or "n/a".
func quoteList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = `"` + v + `"`
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
