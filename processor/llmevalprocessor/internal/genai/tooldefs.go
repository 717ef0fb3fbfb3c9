package genai

import (
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// ToolDef is one tool a model call offered the model, or an agent had.
type ToolDef struct {
	Name, Description string
}

// Bounds of the tools read from one span: enough for any real agent, and a
// hostile span cannot make the index hold more.
const (
	maxToolDefs      = 64
	maxToolDescBytes = 1024
)

// Attributes that list the tools a model call or an agent had.
const (
	// attrToolDefinitions is the semantic conventions' list (a JSON array
	// of {type, name, description, parameters}); OpenLLMetry nests each
	// under "function", and Mastra lists its agent's tool names.
	attrToolDefinitions = "gen_ai.tool.definitions"
	// attrVercelPromptTools is the AI SDK's list: one JSON object per
	// element of a string array.
	attrVercelPromptTools = "ai.prompt.tools"
	// prefixOITools is OpenInference's flattened list, each element's
	// JSON in "llm.tools.N.tool.json_schema".
	prefixOITools    = "llm.tools."
	suffixOIToolJSON = ".tool.json_schema"
)

// ReadToolDefinitions returns the tools span lists, in order, each name
// once: from gen_ai.tool.definitions, ai.prompt.tools and OpenInference's
// llm.tools, whichever the span has. Names and descriptions are clipped
// and at most maxToolDefs are kept. It never panics.
func ReadToolDefinitions(span ptrace.Span) (defs []ToolDef) {
	defer func() {
		if r := recover(); r != nil {
			defs = nil
		}
	}()
	attrs := span.Attributes()
	seen := map[string]bool{}
	add := func(v any) {
		for _, d := range toolDefsOf(v) {
			if len(defs) == maxToolDefs {
				return
			}
			if !seen[d.Name] {
				seen[d.Name] = true
				defs = append(defs, d)
			}
		}
	}
	for _, key := range []string{attrToolDefinitions, attrVercelPromptTools} {
		if v, ok := attrs.Get(key); ok {
			add(decoded(v))
		}
	}
	for _, v := range openInferenceTools(attrs) {
		add(decoded(v))
	}
	return defs
}

// openInferenceTools returns the json_schema values of llm.tools.N in
// index order.
func openInferenceTools(attrs pcommon.Map) []pcommon.Value {
	byIndex := map[int]pcommon.Value{}
	for k, v := range attrs.All() {
		if !strings.HasPrefix(k, prefixOITools) || !strings.HasSuffix(k, suffixOIToolJSON) {
			continue
		}
		n, err := strconv.Atoi(k[len(prefixOITools) : len(k)-len(suffixOIToolJSON)])
		if err != nil || n < 0 || n > maxIndex {
			continue
		}
		byIndex[n] = v
	}
	if len(byIndex) == 0 {
		return nil
	}
	idx := make([]int, 0, len(byIndex))
	for n := range byIndex {
		idx = append(idx, n)
	}
	slices.Sort(idx)
	out := make([]pcommon.Value, len(idx))
	for i, n := range idx {
		out[i] = byIndex[n]
	}
	return out
}

// toolDefsOf reads tool definitions from a decoded value: a list of
// definitions or one definition; a definition is an object naming the
// tool (itself or under "function"), a string holding such an object as
// JSON, or a bare tool name.
func toolDefsOf(v any) []ToolDef {
	switch t := v.(type) {
	case []any:
		var out []ToolDef
		for _, it := range t {
			if len(out) == maxToolDefs {
				break
			}
			if d, ok := toolDefOf(it); ok {
				out = append(out, d)
			}
		}
		return out
	default:
		if d, ok := toolDefOf(t); ok {
			return []ToolDef{d}
		}
	}
	return nil
}

func toolDefOf(v any) (ToolDef, bool) {
	switch t := v.(type) {
	case string:
		switch d := decodeText(t).(type) {
		case map[string]any:
			return toolDefOf(d)
		case []any:
			return ToolDef{}, false
		}
		name := strings.TrimSpace(t)
		if name == "" || strings.ContainsAny(name, "\n{}[]") {
			return ToolDef{}, false
		}
		return ToolDef{Name: clipBytes(name, maxToolNameBytes)}, true
	case map[string]any:
		m := t
		if fn, ok := t["function"].(map[string]any); ok {
			m = fn
		}
		name := strings.TrimSpace(str(m, "name"))
		if name == "" {
			return ToolDef{}, false
		}
		return ToolDef{Name: clipBytes(name, maxToolNameBytes), Description: clipBytes(strings.TrimSpace(str(m, "description")), maxToolDescBytes)}, true
	}
	return ToolDef{}, false
}

// maxToolNameBytes caps a tool name; names are identifiers.
const maxToolNameBytes = 200

// clipBytes is clip to at most n bytes.
func clipBytes(s string, n int) string {
	return cutRunes(clip(s), n)
}
