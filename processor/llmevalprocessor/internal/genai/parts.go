package genai

import (
	"strings"
)

// partKind says what a piece of message content is to the evaluator.
type partKind uint8

const (
	partText       partKind = iota // answer or prompt text
	partRefusal                    // a model refusal: kept as text, it is what the user sees
	partReasoning                  // chain of thought: never judged as the answer
	partToolCall                   // a request to call a tool
	partToolResult                 // what a tool returned: context
	partMedia                      // image, audio, file, blob, uri: stripped
	partOther                      // unknown or bookkeeping types: ignored
	// partNotText stands where text belongs and is none (a number, a
	// boolean, null): never judged; its text says what it is ("is a
	// number, not text").
	partNotText
)

type part struct {
	kind partKind
	text string // text, refusal, reasoning, tool result; for a tool call its name and arguments
	// tool names the call of a tool call or tool result part: its id,
	// tool name and (for a call) arguments, as far as the message says.
	tool *toolRef
	// attr names the attribute a not-text part was read from, when it is
	// an attribute of its own (an indexed message's content).
	attr string
}

// toolRef is what a tool call or tool result part says about its call.
type toolRef struct {
	id, name, args string
}

// message is one chat turn or one output choice, whatever convention it came from.
type message struct {
	role         string
	parts        []part
	finishReason string
	index        int // choice index; position when the convention has none
}

// text joins the text and refusal parts of m.
func (m message) text() string {
	var b strings.Builder
	for _, p := range m.parts {
		if p.kind == partText || p.kind == partRefusal {
			appendBounded(&b, "\n", p.text)
		}
	}
	return b.String()
}

func (m message) hasToolCalls() bool {
	for _, p := range m.parts {
		if p.kind == partToolCall {
			return true
		}
	}
	return false
}

// normRole lower-cases a role and maps aliases to the OpenAI names.
func normRole(r string) string {
	r = strings.ToLower(strings.TrimSpace(r))
	switch r {
	case "human":
		return "user"
	case "ai", "model", "bot":
		return "assistant"
	case "ipython", "function":
		return "tool"
	}
	return r
}

func isSystemRole(r string) bool { return r == "system" || r == "developer" }

// isUserRole is true for user turns, including custom roles that are
// neither the model, the system nor a tool.
func isUserRole(r string) bool {
	switch r {
	case "system", "developer", "assistant", "tool":
		return false
	}
	return true
}

// parseMessages reads a list of messages in any of the JSON shapes seen in
// the wild: OTel parts messages, OpenAI chat messages or choices, Vercel and
// Anthropic content parts, an OpenAI request ({"messages": ...}) or response
// ({"choices": ...}), or a bare string (one message with role given).
func parseMessages(v any, defaultRole string) []message {
	switch t := v.(type) {
	case []any:
		out := make([]message, 0, min(len(t), maxItems))
		for i, e := range t {
			if len(out) >= maxItems {
				break
			}
			if s, ok := e.(string); ok {
				// An array element that is itself JSON text.
				if d := decodeText(s); d != nil {
					e = d
				}
			}
			m, ok := parseMessage(e, defaultRole)
			if !ok {
				continue
			}
			if m.index < 0 {
				m.index = i
			}
			out = append(out, m)
		}
		return out
	case map[string]any:
		if ms, ok := t["messages"]; ok {
			return parseMessages(ms, defaultRole)
		}
		if cs, ok := t["choices"]; ok {
			return parseMessages(cs, "assistant")
		}
		if m, ok := parseMessage(t, defaultRole); ok {
			if m.index < 0 {
				m.index = 0
			}
			return []message{m}
		}
	case string:
		if t == "" {
			return nil
		}
		return []message{{role: defaultRole, parts: []part{{kind: partText, text: t}}}}
	case nil:
	default:
		// A number or boolean where the messages belong.
		if p, ok := contentPart(t); ok {
			return []message{{role: defaultRole, parts: []part{p}}}
		}
	}
	return nil
}

// parseMessage reads one message or choice. index is -1 unless the value
// names one.
func parseMessage(v any, defaultRole string) (message, bool) {
	switch t := v.(type) {
	case string:
		return message{role: defaultRole, index: -1, parts: []part{{kind: partText, text: t}}}, true
	case map[string]any:
		if lc, ok := langChainMessage(t); ok {
			t = lc
		}
		m := message{index: -1}
		if inner, ok := t["message"].(map[string]any); ok {
			// A choice: {index, finish_reason, message{role, content}}.
			m, _ = parseMessage(inner, defaultRole)
			m.index = -1
		}
		if r := str(t, "role"); r != "" {
			m.role = r
		}
		if m.role == "" {
			m.role = defaultRole
		}
		m.role = normRole(m.role)
		if i, ok := toInt(t["index"]); ok {
			m.index = i
		}
		for _, k := range []string{"finish_reason", "finishReason", "stop_reason"} {
			if fr := str(t, k); fr != "" {
				m.finishReason = fr
			}
		}
		if ps, ok := t["parts"]; ok {
			m.parts = appendParts(m.parts, ps)
		}
		if c, ok := t["content"]; ok {
			m.parts = appendParts(m.parts, c)
		}
		if p, ok := textField(t, "text"); ok {
			m.parts = append(m.parts, p)
		}
		if s := str(t, "refusal"); s != "" {
			m.parts = append(m.parts, part{kind: partRefusal, text: s})
		}
		if tcs, ok := t["tool_calls"].([]any); ok {
			for _, tc := range tcs {
				if len(m.parts) >= maxItems {
					break
				}
				if tcm, ok := tc.(map[string]any); ok {
					m.parts = append(m.parts, toolCallPart(tcm))
				}
			}
		}
		if fc, ok := t["function_call"].(map[string]any); ok {
			m.parts = append(m.parts, toolCallPart(fc))
		}
		if m.role == "tool" {
			// Whatever a tool message says is the tool's result, for the
			// call its tool_call_id names (OpenAI chat messages).
			markToolResults(m.parts, firstStr(t, "tool_call_id", "toolCallId", "call_id"), str(t, "name"))
		}
		return m, true
	}
	return message{}, false
}

// langChainMessage unwraps a LangChain message as its serialisation
// writes it ({"lc": 1, "type": "constructor", "id": [..., "AIMessage"],
// "kwargs": {...}}, as LangGraph's state lands in an OpenInference
// output.value): its fields, with the role its class names and the tool
// calls of its additional_kwargs.
func langChainMessage(m map[string]any) (map[string]any, bool) {
	kw, ok := m["kwargs"].(map[string]any)
	id, _ := m["id"].([]any)
	if !ok || m["lc"] == nil || len(id) == 0 {
		return nil, false
	}
	class, _ := id[len(id)-1].(string)
	var role string
	switch strings.TrimSuffix(class, "Chunk") {
	case "HumanMessage":
		role = "user"
	case "AIMessage":
		role = "assistant"
	case "SystemMessage":
		role = "system"
	case "ToolMessage", "FunctionMessage":
		role = "tool"
	case "ChatMessage":
		role = str(kw, "role")
	default:
		return nil, false
	}
	out := make(map[string]any, len(kw)+2)
	for k, v := range kw {
		out[k] = v
	}
	out["role"] = role
	if ak, ok := kw["additional_kwargs"].(map[string]any); ok && out["tool_calls"] == nil {
		if calls, ok := ak["tool_calls"]; ok {
			out["tool_calls"] = calls
		}
	}
	return out, true
}

// appendParts adds content given as a string, a list of parts or one part.
func appendParts(dst []part, v any) []part {
	switch t := v.(type) {
	case nil:
	case string:
		if t != "" {
			dst = append(dst, part{kind: partText, text: t})
		}
	case []any:
		for _, e := range t {
			if len(dst) >= maxItems {
				break
			}
			if p, ok := parsePart(e); ok {
				dst = append(dst, p)
			}
		}
	case map[string]any:
		if p, ok := parsePart(t); ok {
			dst = append(dst, p)
		}
	default:
		if p, ok := contentPart(t); ok {
			dst = append(dst, p)
		}
	}
	return dst
}

// parsePart reads one content part of the OTel, OpenAI, Anthropic or Vercel
// shapes. Unknown types are kept as partOther and never judged.
func parsePart(v any) (part, bool) {
	switch t := v.(type) {
	case string:
		return part{kind: partText, text: t}, true
	case map[string]any:
		typ := strings.ToLower(str(t, "type"))
		switch typ {
		case "text", "input_text", "output_text", "":
			p, ok := textField(t, "content")
			if !ok {
				p, ok = textField(t, "text")
			}
			switch {
			case ok:
				return p, true
			case typ == "":
				return part{kind: partOther}, true
			}
			return part{kind: partText}, true
		case "refusal":
			s := str(t, "refusal")
			if s == "" {
				s = str(t, "content")
			}
			return part{kind: partRefusal, text: s}, true
		case "reasoning", "thinking", "redacted_thinking", "redacted-reasoning":
			return part{kind: partReasoning}, true
		case "tool_call", "tool-call", "tool_use", "function_call", "server_tool_call", "function":
			return toolCallPart(t), true
		case "tool_call_response", "tool-result", "tool_result", "function_call_output",
			"server_tool_call_response", "function_response":
			return toolResultPart(t), true
		case "blob", "file", "uri", "image", "image_url", "input_image", "audio", "input_audio",
			"video", "document", "media":
			return part{kind: partMedia}, true
		default:
			return part{kind: partOther}, true
		}
	}
	return part{}, false
}

func toolCallPart(m map[string]any) part {
	name := firstStr(m, "name", "toolName")
	id := firstStr(m, "id", "toolCallId", "tool_call_id", "call_id")
	args, hasArgs := m["arguments"]
	if !hasArgs {
		args, hasArgs = m["args"]
	}
	if !hasArgs {
		args, hasArgs = m["input"]
	}
	if fn, ok := m["function"].(map[string]any); ok {
		if name == "" {
			name = str(fn, "name")
		}
		if !hasArgs {
			args = fn["arguments"]
		}
	}
	s := name
	a := stringify(args)
	if a != "" {
		s += "(" + a + ")"
	}
	return part{kind: partToolCall, text: s, tool: &toolRef{id: id, name: name, args: a}}
}

// toolResultPart reads a tool result part: its text, and the call it
// answers (semconv id, Vercel toolCallId and toolName, Anthropic
// tool_use_id, OpenAI Responses call_id).
func toolResultPart(m map[string]any) part {
	return part{kind: partToolResult, text: toolResultText(m), tool: &toolRef{
		id:   firstStr(m, "id", "toolCallId", "tool_call_id", "tool_use_id", "call_id"),
		name: firstStr(m, "name", "toolName"),
	}}
}

// markToolResults turns the text parts of a tool message into tool
// results of the call id (and tool name) the message names; parts that
// name their own call keep it.
func markToolResults(parts []part, id, name string) {
	for i := range parts {
		p := &parts[i]
		if p.kind == partText {
			p.kind = partToolResult
		}
		if p.kind != partToolResult {
			continue
		}
		if p.tool == nil {
			p.tool = &toolRef{}
		}
		if p.tool.id == "" {
			p.tool.id = id
		}
		if p.tool.name == "" {
			p.tool.name = name
		}
	}
}

// firstStr is the first of keys holding a non-empty string (or number) in m.
func firstStr(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s := str(m, k); s != "" {
			return s
		}
	}
	return ""
}

// toolResultText takes the result of a tool call part. The schema names it
// response, the registry example result, Vercel output or result, Anthropic
// content.
func toolResultText(m map[string]any) string {
	for _, k := range []string{"response", "result", "output", "content"} {
		v, ok := m[k]
		if !ok {
			continue
		}
		// Vercel v5 wraps outputs as {"type":"text"|"json", "value": ...}.
		if w, ok := v.(map[string]any); ok {
			if inner, ok := w["value"]; ok && len(w) <= 2 {
				v = inner
			}
		}
		if arr, ok := v.([]any); ok && k == "content" {
			// Anthropic tool_result content: a list of text blocks.
			var b strings.Builder
			for _, e := range arr {
				if p, ok := parsePart(e); ok && p.kind == partText {
					appendBounded(&b, "\n", p.text)
				}
			}
			return b.String()
		}
		return stringify(v)
	}
	return ""
}
