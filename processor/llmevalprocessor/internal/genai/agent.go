package genai

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// IsAgent says whether a span Classify called KindAggregate is an agent run
// scored at agent level: a semconv invoke_agent span, an OpenInference
// AGENT span, a Vercel AI SDK outer call (ai.generateText, ai.streamText,
// ai.generateObject, ai.streamObject), a Mastra AGENT_RUN, a Langfuse agent
// or a Traceloop agent; or the root span (no parent) of a trace whose root
// is an aggregate: an OpenInference CHAIN, invoke_workflow, Traceloop
// workflow, Mastra WORKFLOW_RUN, or a Genkit flow or generate loop. Nested chains and workflows are steps,
// not agents, and create_agent only builds one.
func IsAgent(span ptrace.Span) bool {
	attrs := span.Attributes()
	root := span.ParentSpanID().IsEmpty()
	switch attrString(attrs, "gen_ai.operation.name") {
	case "invoke_agent":
		return true
	case "invoke_workflow":
		return root
	case "create_agent":
		return false
	}
	switch strings.ToUpper(attrString(attrs, "openinference.span.kind")) {
	case "AGENT":
		return true
	case "CHAIN":
		return root
	}
	if vercelKind(vercelOperation(span)) == KindAggregate {
		return true
	}
	switch strings.ToLower(attrString(attrs, attrMastraType)) {
	case "agent_run":
		return true
	case "workflow_run":
		return root
	}
	switch attrString(attrs, "langfuse.observation.type") {
	case "agent":
		return true
	case "chain":
		return root
	}
	switch attrString(attrs, "traceloop.span.kind") {
	case "agent":
		return true
	case "workflow":
		return root
	}
	return root && isGenkitRun(attrs)
}

// ReadAgent reads an agent span as one exchange: Input is the user's
// request and Output the final answer. It reads what Read reads, then the
// agent-only keys (Pydantic AI pydantic_ai.all_messages and final_result,
// Traceloop traceloop.entity.input/output), and unwraps a request or answer
// given as a one-field JSON object ({"input": ...}, {"question": ...},
// {"output": ...}, {"answer": ...}), as LangChain chains record them.
// Context is only what the span itself carries; the trace's retrieval and
// tool results come from the trace context index.
func ReadAgent(span ptrace.Span) (g Generation) {
	g = Read(span)
	if g.Missing == MissingUnreadable {
		return g
	}
	defer func() {
		if r := recover(); r != nil {
			g = Generation{Missing: MissingUnreadable}
		}
	}()
	attrs := span.Attributes()
	if g.Input == "" {
		if v, ok := attrs.Get("pydantic_ai.all_messages"); ok {
			d := decoded(v)
			g.Input = lastUserText(parseMessages(d, "user"))
		}
	}
	if g.Input == "" {
		if v, ok := attrs.Get("traceloop.entity.input"); ok {
			d := decoded(v)
			g.Input = entityInput(d)
		}
	}
	var notText, counted string
	if g.Output == "" {
		for _, k := range [...]string{"final_result", "traceloop.entity.output"} {
			v, ok := attrs.Get(k)
			if !ok {
				continue
			}
			if issue := textIssue(v, true); issue != "" {
				if notText == "" {
					notText, counted = k+" "+issue, countedAttr(k, issue)
				}
				continue
			}
			d := decodedOutput(v)
			if s := unquoteJSONString(unwrapText(d, outputKeys)); s != "" {
				g.Output = s
				break
			}
		}
	}
	g.Input = clipText(unwrapJSONText(g.Input, inputKeys))
	g.Output = clipText(unwrapJSONText(g.Output, outputKeys))
	switch {
	case g.Output != "" && (g.Missing == MissingOutput || g.Missing == MissingToolCalls):
		g.Missing = ""
	case g.Output == "" && g.Missing == MissingOutput && notText != "":
		g.Missing, g.Malformed = notText, counted
	}
	return g
}

// Field names under which chains record a request or an answer.
var (
	inputKeys  = []string{"input", "question", "query", "user_input", "prompt", "message"}
	outputKeys = []string{"output", "answer", "result", "response", "final_output", "text", "content"}
)

func lastUserText(ms []message) string {
	for i := len(ms) - 1; i >= 0; i-- {
		if isUserRole(ms[i].role) {
			if s := ms[i].text(); s != "" {
				return s
			}
		}
	}
	return ""
}

// entityInput reads Traceloop's {"args": [...], "kwargs": {...}}.
func entityInput(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return unwrapText(v, inputKeys)
	}
	if kw, ok := m["kwargs"].(map[string]any); ok && len(kw) > 0 {
		if s := unwrapText(kw, inputKeys); s != "" {
			return s
		}
	}
	if args, ok := m["args"].([]any); ok && len(args) > 0 {
		return unwrapText(args[0], inputKeys)
	}
	return unwrapText(v, inputKeys)
}

// unwrapText returns a string as it is, the first of keys holding a string
// in an object, and any other value as compact JSON.
func unwrapText(v any, keys []string) string {
	if m, ok := v.(map[string]any); ok {
		for _, k := range keys {
			if s, ok := m[k].(string); ok && s != "" {
				return s
			}
		}
	}
	return stringify(v)
}

// unwrapJSONText unwraps s when it is a JSON object naming the text under
// one of keys; otherwise s is returned unchanged.
func unwrapJSONText(s string, keys []string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "{") {
		return s
	}
	d := decodeText(t)
	m, ok := d.(map[string]any)
	if !ok {
		return s
	}
	for _, k := range keys {
		if v, ok := m[k].(string); ok && v != "" {
			return v
		}
	}
	return s
}
