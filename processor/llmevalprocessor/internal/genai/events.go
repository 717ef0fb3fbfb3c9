package genai

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Span event names of the older GenAI conventions.
const (
	eventOperationDetails  = "gen_ai.client.inference.operation.details" // v1.37+, attributes like the span's
	eventContentPrompt     = "gen_ai.content.prompt"                     // v1.26-v1.27
	eventContentCompletion = "gen_ai.content.completion"                 // v1.26-v1.27
	eventChoice            = "gen_ai.choice"                             // v1.28-v1.36
	eventMessagePrefix     = "gen_ai."                                   // gen_ai.{system,user,assistant,tool}.message
)

// readEvents reads content carried as span events. The operation-details
// event wins over the v1.27 content events, which win over per-message events.
func readEvents(events ptrace.SpanEventSlice) extraction {
	details := extraction{convention: ConventionGenAIEvents}
	content := extraction{convention: ConventionGenAIEvents}
	perMessage := extraction{convention: ConventionGenAIEvents}
	for i := 0; i < events.Len(); i++ {
		ev := events.At(i)
		attrs := ev.Attributes()
		switch name := ev.Name(); name {
		case eventOperationDetails:
			d := readSemconv(attrs, ConventionGenAIEvents)
			details.merge(d)
		case eventContentPrompt:
			if v, ok := attrs.Get("gen_ai.prompt"); ok {
				content.readInput(v, "gen_ai.prompt")
			}
		case eventContentCompletion:
			if v, ok := attrs.Get("gen_ai.completion"); ok {
				content.readOutput(v, "gen_ai.completion")
			}
		case eventChoice:
			m := eventMessage(attrs, "assistant")
			if m.index < 0 {
				m.index = len(perMessage.output)
			}
			nameNotText(&m, name+" content")
			perMessage.output = appendMessages(perMessage.output, []message{m})
			perMessage.hasOutput = true
		default:
			if role, ok := messageEventRole(name); ok {
				m := eventMessage(attrs, role)
				nameNotText(&m, name+" content")
				perMessage.input = appendMessages(perMessage.input, []message{m})
				perMessage.hasInput = true
			}
		}
	}
	details.merge(content)
	details.merge(perMessage)
	return details
}

// merge fills the sides x lacks from y, with what y says of their
// attributes.
func (x *extraction) merge(y extraction) {
	if !x.hasInput && y.hasInput {
		x.input, x.hasInput, x.inAttr, x.inIssue = y.input, true, y.inAttr, y.inIssue
		if y.malformed != "" && y.malformed == y.inAttr {
			x.malformed = y.malformed
		}
	}
	if !x.hasOutput && y.hasOutput {
		x.output, x.hasOutput, x.outAttr, x.outIssue = y.output, true, y.outAttr, y.outIssue
		if y.malformed != "" && y.malformed == y.outAttr {
			x.malformed = y.malformed
		}
	}
	x.system = append(x.system, y.system...)
}

// nameNotText names attr as the attribute of m's not-text parts that do
// not name their own.
func nameNotText(m *message, attr string) {
	for i := range m.parts {
		if m.parts[i].kind == partNotText && m.parts[i].attr == "" {
			m.parts[i].attr = attr
		}
	}
}

func appendMessages(dst, add []message) []message {
	for _, m := range add {
		if len(dst) >= maxItems {
			break
		}
		dst = append(dst, m)
	}
	return dst
}

// messageEventRole maps gen_ai.{system,user,assistant,tool}.message to its role.
func messageEventRole(name string) (string, bool) {
	if !strings.HasPrefix(name, eventMessagePrefix) || !strings.HasSuffix(name, ".message") {
		return "", false
	}
	switch role := name[len(eventMessagePrefix) : len(name)-len(".message")]; role {
	case "system", "user", "assistant", "tool":
		return role, true
	}
	return "", false
}

// eventMessage reads a message event or a gen_ai.choice whose body fields
// were recorded as event attributes: content (string or structured),
// role, tool_calls, index, finish_reason, and message either as a map or
// flattened as message.content / message.role.
func eventMessage(attrs pcommon.Map, role string) message {
	raw := attrs.AsRaw()
	nested := map[string]any{}
	for k, v := range raw {
		if rest, ok := strings.CutPrefix(k, "message."); ok {
			nested[rest] = v
		}
	}
	if len(nested) > 0 {
		if _, ok := raw["message"]; !ok {
			raw["message"] = nested
		}
	}
	if s, ok := raw["message"].(string); ok {
		raw["message"] = decodeText(s)
	}
	if s, ok := raw["tool_calls"].(string); ok {
		raw["tool_calls"] = decodeText(s)
	}
	if inner, ok := raw["message"].(map[string]any); ok {
		decodeContentParts(inner)
	}
	decodeContentParts(raw)
	m, _ := parseMessage(raw, role)
	if _, ok := raw["index"]; !ok {
		m.index = -1
	}
	return m
}

// decodeContentParts replaces a string content holding a JSON list of
// typed parts by that list; any other string stays text.
func decodeContentParts(m map[string]any) {
	s, ok := m["content"].(string)
	if !ok {
		return
	}
	if d, ok := contentParts(s); ok {
		m["content"] = d
	}
}

// contentParts decodes s when it is a JSON array of typed parts
// (for example OpenLLMetry's stringified multimodal content).
func contentParts(s string) ([]any, bool) {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "[") {
		return nil, false
	}
	d := decodeText(t)
	arr, ok := d.([]any)
	if !ok || len(arr) == 0 {
		return nil, false
	}
	for _, e := range arr {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		if _, typed := m["type"]; !typed {
			return nil, false
		}
	}
	return arr, true
}
