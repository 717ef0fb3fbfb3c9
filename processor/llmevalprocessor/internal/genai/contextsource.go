package genai

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// attrRetrieverResults is the LangChain Azure tracer's retriever output:
// a JSON list of {"content", "metadata"} documents.
const attrRetrieverResults = "gen_ai.retriever.results"

// ContextRole says what kind of context a span supplies.
type ContextRole uint8

// Context roles.
const (
	RoleNone      ContextRole = iota // not a context source
	RoleRetrieval                    // retrieved documents
	RoleTool                         // a tool's result
	RoleMemory                       // memory records
)

// String names the role for logs and metrics.
func (r ContextRole) String() string {
	switch r {
	case RoleRetrieval:
		return "retrieval"
	case RoleTool:
		return "tool"
	case RoleMemory:
		return "memory"
	}
	return "none"
}

// ContextSource is what a retrieval, tool or memory span contributes as
// context to the generations of its trace.
type ContextSource struct {
	Role  ContextRole
	Texts []string // documents or tool results, de-duplicated, each clipped
}

// ReadContext reads the retrieved documents or tool results of a span
// Classify called KindContext. It understands semconv retrieval
// (gen_ai.retrieval.documents), execute_tool (gen_ai.tool.call.result) and
// memory (gen_ai.memory.records) spans, OpenInference RETRIEVER
// (retrieval.documents.N.document.content) and TOOL (output.value) spans,
// Vercel AI SDK ai.toolCall spans (ai.toolCall.result), OpenLLMetry tool
// and task spans (traceloop.entity.output), Genkit tool actions
// (genkit:output) and the LangChain Azure tracer's
// gen_ai.retriever.results. It never panics, whatever the attributes hold;
// a span without any of them gives no texts.
func ReadContext(span ptrace.Span) (src ContextSource) {
	defer func() {
		if r := recover(); r != nil {
			// A reader bug must not take the collector down: the span gives no context.
			src = ContextSource{}
		}
	}()
	attrs := span.Attributes()
	src.Role = contextRole(attrs)
	idx := collectIndexed(attrs)
	src.Texts = spanContext(attrs, idx)
	if v, ok := attrs.Get(attrRetrieverResults); ok {
		d := decoded(v)
		src.Texts = appendUnique(src.Texts, documentTexts(d)...)
	}
	for _, k := range [...]string{"ai.toolCall.result", "ai.toolCall.output"} {
		if v, ok := attrs.Get(k); ok {
			d := decoded(v)
			src.Texts = appendUnique(src.Texts, resultTexts(d)...)
		}
	}
	if v, ok := attrs.Get("traceloop.entity.output"); ok {
		d := decoded(v)
		src.Texts = appendUnique(src.Texts, resultTexts(d)...)
	}
	if v, ok := attrs.Get(attrGenkitOutput); ok && isGenkitTool(attrs) {
		src.Texts = appendUnique(src.Texts, resultTexts(decoded(v))...)
	}
	if len(src.Texts) == 0 && isOpenInferenceKind(attrs, "TOOL", "RETRIEVER") {
		// A tool or retriever that recorded only its raw output.
		if v, ok := attrs.Get("output.value"); ok {
			d := decoded(v)
			src.Texts = appendUnique(src.Texts, resultTexts(d)...)
		}
	}
	for i := range src.Texts {
		src.Texts[i] = clip(src.Texts[i])
	}
	if src.Role == RoleNone && len(src.Texts) > 0 {
		src.Role = RoleTool
	}
	return src
}

// contextRole tells a retrieval from a tool or memory span by the attributes
// that identify it.
func contextRole(attrs pcommon.Map) ContextRole {
	switch attrString(attrs, "gen_ai.operation.name") {
	case "retrieval":
		return RoleRetrieval
	case "execute_tool":
		return RoleTool
	case "search_memory":
		return RoleMemory
	}
	switch strings.ToUpper(attrString(attrs, "openinference.span.kind")) {
	case "RETRIEVER":
		return RoleRetrieval
	case "TOOL":
		return RoleTool
	}
	if _, ok := attrs.Get(attrRetrieverResults); ok {
		return RoleRetrieval
	}
	if attrString(attrs, "langfuse.observation.type") == "retriever" {
		return RoleRetrieval
	}
	return RoleNone
}

func isOpenInferenceKind(attrs pcommon.Map, kinds ...string) bool {
	k := strings.ToUpper(attrString(attrs, "openinference.span.kind"))
	for _, want := range kinds {
		if k == want {
			return true
		}
	}
	return false
}

// resultTexts reads a tool or task result: a list of documents (LangChain
// Documents, strings, {content|text|page_content} objects) gives one text
// each, a {"type","value"} wrapper is unwrapped, anything else is one text.
func resultTexts(v any) []string {
	switch t := v.(type) {
	case nil:
		return nil
	case []any:
		if docs := documentTexts(t); len(docs) > 0 {
			return docs
		}
		if isEmbedding(t) {
			return nil
		}
	case map[string]any:
		if inner, ok := t["value"]; ok && len(t) <= 2 {
			return resultTexts(inner)
		}
		if docs := documentTexts(t); len(docs) > 0 {
			return docs
		}
	}
	if s, ok := v.(string); ok {
		// A string result recorded as JSON ("\"shipped\"") is the string.
		v = unquoteJSONString(s)
	}
	if s := stringify(v); s != "" {
		return []string{s}
	}
	return nil
}
