package genai

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// StepKind says what a span is in an agent run's trajectory.
type StepKind uint8

// Step kinds.
const (
	StepNone StepKind = iota
	// StepGeneration is one LLM call of the run.
	StepGeneration
	// StepTool is one execution of a tool.
	StepTool
	// StepAgent is a nested agent run, which its caller sees as one tool
	// execution.
	StepAgent
)

// Step is what one span of an agent run contributes to its trajectory.
// Which fields are set depends on Kind. Every text is clipped; the caller
// bounds them further.
type Step struct {
	Kind StepKind

	// Output is the text of a generation's first choice.
	Output string
	// ToolCalls are the tool calls of a generation's first choice.
	ToolCalls []ToolCall
	// ToolResults are the tool results in a generation's input that came
	// after its last assistant turn: the results of the previous step's
	// calls, which the trace may record nowhere else.
	ToolResults []ToolResult
	// Tools are the tools a generation offered the model
	// (ReadToolDefinitions).
	Tools []ToolDef

	// Name is the tool's name (the agent's, for StepAgent).
	Name string
	// CallID is the id of the call a tool execution answers, when the
	// span records it.
	CallID string
	// Arguments and Result are a tool's (an agent's input and output) as
	// text: structured values as JSON, a JSON string as its text.
	Arguments, Result string
	// Error is set when the execution, or a generation's model call,
	// failed: the span's status message, else its exception message, else
	// its error.type, else "error".
	Error string
}

// ToolCall is one tool call a generation asked for.
type ToolCall struct {
	ID, Name, Arguments string
}

// ToolResult is one tool result a generation's input carries.
type ToolResult struct {
	CallID, Name, Result string
}

// ReadStep reads a span of a sampled trace as a step of the agent run
// above it, given what Classify said of it:
//
//   - a generation (KindGeneration): its first choice's text and tool
//     calls, and the tool results of its input after its last assistant
//     turn;
//   - a tool execution (a KindContext span that is a tool: semconv
//     execute_tool, OpenInference TOOL, Vercel ai.toolCall, Mastra
//     tool_call, OpenLLMetry and Langfuse tool spans): its name, call id,
//     arguments, result and error;
//   - an agent span (KindAggregate and IsAgent), which may run inside
//     another agent: its name, input, output and error.
//
// A root span is below no agent, so it is no step (false), nor is any
// other span. It never panics, whatever the attributes hold.
func ReadStep(kind Kind, span ptrace.Span) (st Step, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			st, ok = Step{}, false
		}
	}()
	if span.ParentSpanID().IsEmpty() {
		return Step{}, false
	}
	switch kind {
	case KindGeneration:
		in, out, _ := extract(span, collectIndexed(span.Attributes()))
		return generationStep(span, in, out), true
	case KindContext:
		if !isToolSpan(span) {
			return Step{}, false
		}
		return readToolStep(span), true
	case KindAggregate:
		if !IsAgent(span) {
			return Step{}, false
		}
		return agentStep(span, ReadAgent(span)), true
	}
	return Step{}, false
}

// ReadAgentWithStep is ReadAgent and, for a span with a parent, ReadStep
// of it, reading the agent span once for both.
func ReadAgentWithStep(span ptrace.Span) (g Generation, st Step, ok bool) {
	g = ReadAgent(span)
	if span.ParentSpanID().IsEmpty() {
		return g, Step{}, false
	}
	defer func() {
		if r := recover(); r != nil {
			st, ok = Step{}, false
		}
	}()
	return g, agentStep(span, g), true
}

// agentStep is the step of an agent span whose run ReadAgent read as g.
func agentStep(span ptrace.Span, g Generation) Step {
	return Step{Kind: StepAgent, Name: clip(agentName(span)), Arguments: g.Input, Result: g.Output, Error: clip(spanError(span))}
}

// generationStep is the step of a generation span whose messages extract
// read; a failed model call keeps its error, since the run went on (or
// stopped) without that answer. It reads before Generation.fill, which
// does not change the messages.
func generationStep(span ptrace.Span, in, out *extraction) Step {
	st := Step{Kind: StepGeneration, Error: clip(spanError(span))}
	if out != nil {
		if first, ok := firstChoice(out.output); ok {
			st.Output = clip(first.text())
			for _, p := range first.parts {
				if p.kind == partToolCall && p.tool != nil {
					st.ToolCalls = append(st.ToolCalls, ToolCall{ID: clip(p.tool.id), Name: clip(p.tool.name), Arguments: clip(p.tool.args)})
				}
			}
		}
	}
	if in != nil {
		st.ToolResults = trailingToolResults(in.input)
	}
	st.Tools = ReadToolDefinitions(span)
	return st
}

// trailingToolResults are the tool results after the last assistant turn
// of an input, named after that turn's calls when they do not name their
// tool themselves. Earlier results are the conversation's history, which
// earlier steps already recorded.
func trailingToolResults(input []message) []ToolResult {
	last := -1
	for i, m := range input {
		if m.role == "assistant" {
			last = i
		}
	}
	names := map[string]string{}
	if last >= 0 {
		for _, p := range input[last].parts {
			if p.kind == partToolCall && p.tool != nil && p.tool.id != "" {
				names[p.tool.id] = p.tool.name
			}
		}
	}
	var out []ToolResult
	for _, m := range input[last+1:] {
		for _, p := range m.parts {
			if p.kind != partToolResult {
				continue
			}
			r := ToolResult{Result: clip(p.text)}
			if p.tool != nil {
				r.CallID, r.Name = clip(p.tool.id), clip(p.tool.name)
			}
			if r.Name == "" {
				r.Name = names[r.CallID]
			}
			out = append(out, r)
		}
	}
	return out
}

// isToolSpan tells a tool execution from the other context spans
// (retrieval, memory, OpenLLMetry tasks).
func isToolSpan(span ptrace.Span) bool {
	attrs := span.Attributes()
	if attrString(attrs, "gen_ai.operation.name") == "execute_tool" || isOpenInferenceKind(attrs, "TOOL") {
		return true
	}
	switch strings.ToLower(attrString(attrs, attrMastraType)) {
	case "tool_call", "mcp_tool_call":
		return true
	}
	if attrString(attrs, "traceloop.span.kind") == "tool" || attrString(attrs, "langfuse.observation.type") == "tool" || isGenkitTool(attrs) {
		return true
	}
	return vercelOperation(span) == "ai.toolCall"
}

// Where each convention puts a tool execution's name, call id, arguments
// and result, most specific first.
var (
	toolNameKeys   = []string{"gen_ai.tool.name", "tool.name", "ai.toolCall.name", "traceloop.entity.name", attrGenkitName}
	toolCallIDKeys = []string{"gen_ai.tool.call.id", "ai.toolCall.id", "tool_call.id"}
	toolArgsKeys   = []string{"gen_ai.tool.call.arguments", "ai.toolCall.args", "ai.toolCall.input", "mastra.tool_call.input", "input.value", attrGenkitInput}
	toolResultKeys = []string{"gen_ai.tool.call.result", "ai.toolCall.result", "ai.toolCall.output", "mastra.tool_call.output", "output.value", "traceloop.entity.output", attrGenkitOutput}
)

func readToolStep(span ptrace.Span) Step {
	attrs := span.Attributes()
	st := Step{
		Kind:      StepTool,
		Name:      firstAttr(attrs, toolNameKeys...),
		CallID:    firstAttr(attrs, toolCallIDKeys...),
		Arguments: firstText(attrs, toolArgsKeys...),
		Result:    firstText(attrs, toolResultKeys...),
		Error:     spanError(span),
	}
	if st.CallID == "" && isOpenInferenceKind(attrs, "TOOL") {
		// OpenInference's tool.id is the id of the call a TOOL span answers;
		// elsewhere tool.id may name the tool itself.
		st.CallID = attrString(attrs, "tool.id")
	}
	if st.Arguments == "" {
		if v, ok := attrs.Get("traceloop.entity.input"); ok {
			st.Arguments = entityArguments(decoded(v))
		}
	}
	if st.Name == "" {
		// "execute_tool get_weather", as semconv names the span.
		st.Name = strings.TrimSpace(strings.TrimPrefix(span.Name(), "execute_tool"))
	}
	st.Name, st.CallID, st.Arguments, st.Result, st.Error = clip(st.Name), clip(st.CallID), clip(st.Arguments), clip(st.Result), clip(st.Error)
	return st
}

// firstText is the text of the first of keys present: a string as it is
// (a JSON string literal unquoted), anything else as JSON.
func firstText(attrs pcommon.Map, keys ...string) string {
	for _, k := range keys {
		v, ok := attrs.Get(k)
		if !ok {
			continue
		}
		if s := valueText(v); s != "" {
			return s
		}
	}
	return ""
}

// valueText renders a tool's argument or result value as text. A string
// holding a JSON string literal ("\"shipped\"", as JSON.stringify writes a
// string result) is unquoted; other strings, JSON or not, are kept as
// they are.
func valueText(v pcommon.Value) string {
	if v.Type() != pcommon.ValueTypeStr {
		return valueString(v)
	}
	return unquoteJSONString(v.Str())
}

// entityArguments reads Traceloop's {"args": [...], "kwargs": {...}}
// input of a tool as its arguments: the keyword arguments when there are
// only those, else the whole value.
func entityArguments(v any) string {
	if m, ok := v.(map[string]any); ok {
		args, _ := m["args"].([]any)
		if kw, ok := m["kwargs"].(map[string]any); ok && len(args) == 0 && len(kw) > 0 {
			return stringify(kw)
		}
	}
	return stringify(v)
}

// agentName is the name an agent span gives its agent.
func agentName(span ptrace.Span) string {
	attrs := span.Attributes()
	if s := firstAttr(attrs, "gen_ai.agent.name", "agent.name", "ai.telemetry.functionId", "traceloop.entity.name"); s != "" {
		return s
	}
	return span.Name()
}

// spanError says why a span failed, or "" when it did not: its status
// message when its status is Error, else the message of its exception
// event (or attribute), else its error.type; a span whose status is Error
// or that has an error.type but says nothing more failed with "error".
func spanError(span ptrace.Span) string {
	attrs := span.Attributes()
	errType := attrString(attrs, "error.type")
	if span.Status().Code() != ptrace.StatusCodeError && errType == "" {
		return ""
	}
	if msg := strings.TrimSpace(span.Status().Message()); msg != "" {
		return msg
	}
	events := span.Events()
	for i := 0; i < events.Len(); i++ {
		if ev := events.At(i); ev.Name() == "exception" {
			if msg := attrString(ev.Attributes(), "exception.message"); msg != "" {
				return msg
			}
		}
	}
	if msg := attrString(attrs, "exception.message"); msg != "" {
		return msg
	}
	if errType != "" {
		return errType
	}
	return "error"
}
