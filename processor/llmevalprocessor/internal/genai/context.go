package genai

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// spanContext gathers retrieved documents and tool results recorded on the
// span itself: gen_ai.retrieval.documents (text in a content extension),
// gen_ai.tool.call.result, gen_ai.memory.records, OpenInference
// retrieval.documents.N.document.content, and the context variables of
// llm.prompt_template.variables.
func spanContext(attrs pcommon.Map, idx *indexedAttrs) []string {
	var out []string
	if v, ok := attrs.Get("gen_ai.retrieval.documents"); ok {
		d := decoded(v)
		out = appendUnique(out, documentTexts(d)...)
	}
	if v, ok := attrs.Get("gen_ai.memory.records"); ok {
		d := decoded(v)
		out = appendUnique(out, documentTexts(d)...)
	}
	if v, ok := attrs.Get("gen_ai.tool.call.result"); ok {
		out = appendUnique(out, resultTexts(decoded(v))...)
	}
	for _, e := range idx.get(prefixOIDocs) {
		out = appendUnique(out, field(e.fields, "document.content"))
	}
	if v, ok := attrs.Get("llm.prompt_template.variables"); ok {
		d := decoded(v)
		if m, ok := d.(map[string]any); ok {
			for k, val := range m {
				if isContextVariable(k) {
					out = appendUnique(out, documentTexts(val)...)
				}
			}
		}
	}
	return out
}

// isContextVariable says whether a prompt template variable holds retrieved
// context by its name (context, retrieved_context, documents, ...).
func isContextVariable(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "context") || strings.Contains(n, "document")
}

// documentTexts reads documents given as strings or objects whose text is
// under content, text, page_content or document, or under node (LlamaIndex).
func documentTexts(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, e := range t {
			if len(out) >= maxItems {
				break
			}
			out = append(out, documentTexts(e)...)
		}
		return out
	case map[string]any:
		for _, k := range [...]string{"content", "text", "page_content", "document"} {
			if c, ok := t[k]; ok {
				return []string{stringify(c)}
			}
		}
		if node, ok := t["node"].(map[string]any); ok {
			// LlamaIndex NodeWithScore: {"node": {"text", ...}, "score"}.
			return documentTexts(node)
		}
	}
	return nil
}
