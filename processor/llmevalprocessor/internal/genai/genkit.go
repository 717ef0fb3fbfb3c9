package genai

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// ConventionGenkit is Generation.Convention for Genkit's own spans.
const ConventionGenkit = "genkit"

// Genkit span attributes. Every Genkit action is a span with genkit:type
// "action" and its kind in genkit:metadata:subtype: "model" for a model
// call (scored), "tool", "embedder", ...; the generate loop around them is
// genkit:type "util". genkit:input and genkit:output are the action's JSON.
const (
	attrGenkitType    = "genkit:type"
	attrGenkitName    = "genkit:name"
	attrGenkitSubtype = "genkit:metadata:subtype"
	attrGenkitInput   = "genkit:input"
	attrGenkitOutput  = "genkit:output"
)

// genkitKind classifies a Genkit span: a model action is a generation, a
// tool action a tool execution (context), a flow or the generate loop
// (genkit:type util) the run around them; other actions (embedders,
// retrievers without documents read here) are other spans.
func genkitKind(typ, subtype string) (Kind, bool) {
	switch {
	case typ == "action" && subtype == "model":
		return KindGeneration, true
	case typ == "action" && subtype == "tool":
		return KindContext, true
	case typ == "flow" || typ == "util":
		return KindAggregate, true
	}
	return KindOther, false
}

// isGenkitTool says whether a span is a Genkit tool action.
func isGenkitTool(attrs pcommon.Map) bool {
	return attrString(attrs, attrGenkitType) == "action" && attrString(attrs, attrGenkitSubtype) == "tool"
}

// isGenkitRun says whether a span is a Genkit flow or generate loop.
func isGenkitRun(attrs pcommon.Map) bool {
	switch attrString(attrs, attrGenkitType) {
	case "flow", "util":
		return true
	}
	return false
}

// readGenkit reads a Genkit model action or generate loop (its input and
// output have the same shape): genkit:input is the request
// ({"messages": [...], "tools": [...], "config": ...}), genkit:output the
// response ({"message": {...}, "finishReason"}, or "candidates" in older
// releases). A message is {"role": "system"|"user"|"model"|"tool",
// "content": [parts]}, a part one of {"text"}, {"toolRequest": {name, ref,
// input}}, {"toolResponse": {name, ref, output}}, {"media"},
// {"reasoning"}. Parts of any other shape are ignored. Text that opens as
// JSON but is none is not judged: the span is not scorable ("malformed
// genkit:output").
func readGenkit(attrs pcommon.Map) extraction {
	x := extraction{convention: ConventionGenkit}
	model := attrString(attrs, attrGenkitType) == "action" && attrString(attrs, attrGenkitSubtype) == "model"
	if !model && attrString(attrs, attrGenkitType) != "util" {
		return x
	}
	if v, ok := attrs.Get(attrGenkitInput); ok {
		x.hasInput, x.inAttr = true, attrGenkitInput
		req, issue, bad := genkitValue(v, false, "messages")
		x.inIssue = issue
		if bad {
			x.malformed = attrGenkitInput
		} else if req != nil {
			x.input = genkitMessages(req["messages"], "user")
		}
	}
	if v, ok := attrs.Get(attrGenkitOutput); ok {
		x.hasOutput, x.outAttr = true, attrGenkitOutput
		resp, issue, bad := genkitValue(v, true, "message", "candidates")
		x.outIssue = issue
		if bad {
			x.malformed = attrGenkitOutput
		} else if resp != nil {
			x.output = genkitOutput(resp)
		}
	}
	return x
}

// genkitValue decodes genkit:input or genkit:output: the object, or the
// issue of a value that is no text or an object without any of keys, or
// malformed for text that opens as JSON and is none.
func genkitValue(v pcommon.Value, keepCut bool, keys ...string) (obj map[string]any, issue string, malformed bool) {
	if issue = textIssue(v, true); issue != "" {
		return nil, issue, false
	}
	val, bad := decodedMessages(v, keepCut)
	if bad {
		return nil, "", true
	}
	if obj, ok := val.(map[string]any); ok {
		for _, k := range keys {
			if _, ok := obj[k]; ok {
				return obj, "", false
			}
		}
	}
	switch {
	case emptyContainer(val):
		return nil, issueEmpty, false
	case isString(val):
		return nil, issueNotJSON, false
	}
	return nil, issueNoMessage, false
}

// issueNotJSON is the issue of plain text where Genkit records JSON.
const issueNotJSON = "is text, not the JSON of a model action"

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

// genkitOutput reads a model response: its message, or its candidates.
func genkitOutput(resp map[string]any) []message {
	if msg, ok := resp["message"].(map[string]any); ok {
		m := genkitMessage(msg, "assistant")
		m.finishReason = firstStr(resp, "finishReason", "finish_reason")
		return []message{m}
	}
	cands, _ := resp["candidates"].([]any)
	var out []message
	for i, c := range cands {
		if len(out) >= maxItems {
			break
		}
		cm, ok := c.(map[string]any)
		if !ok {
			continue
		}
		msg, ok := cm["message"].(map[string]any)
		if !ok {
			continue
		}
		m := genkitMessage(msg, "assistant")
		m.finishReason = firstStr(cm, "finishReason", "finish_reason")
		m.index = i
		if n, ok := toInt(cm["index"]); ok {
			m.index = n
		}
		out = append(out, m)
	}
	return out
}

// genkitMessages reads a list of Genkit messages.
func genkitMessages(v any, defaultRole string) []message {
	list, _ := v.([]any)
	out := make([]message, 0, min(len(list), maxItems))
	for i, e := range list {
		if len(out) >= maxItems {
			break
		}
		if mm, ok := e.(map[string]any); ok {
			m := genkitMessage(mm, defaultRole)
			m.index = i
			out = append(out, m)
		}
	}
	return out
}

// genkitMessage reads one message; "model" is Genkit's assistant role.
func genkitMessage(mm map[string]any, defaultRole string) message {
	role := str(mm, "role")
	if role == "" {
		role = defaultRole
	}
	m := message{role: normRole(role)}
	switch c := mm["content"].(type) {
	case nil:
	case string:
		if c != "" {
			m.parts = append(m.parts, part{kind: partText, text: c})
		}
	default:
		if p, ok := contentPart(c); ok {
			m.parts = append(m.parts, p)
		}
	case []any:
		for _, e := range c {
			if len(m.parts) >= maxItems {
				break
			}
			if pm, ok := e.(map[string]any); ok {
				m.parts = append(m.parts, genkitPart(pm))
			}
		}
	}
	return m
}

// genkitPart reads one Genkit part by the key it carries.
func genkitPart(pm map[string]any) part {
	if req, ok := pm["toolRequest"].(map[string]any); ok {
		name, args := str(req, "name"), stringify(req["input"])
		text := name
		if args != "" {
			text += "(" + args + ")"
		}
		return part{kind: partToolCall, text: text, tool: &toolRef{id: str(req, "ref"), name: name, args: args}}
	}
	if resp, ok := pm["toolResponse"].(map[string]any); ok {
		return part{kind: partToolResult, text: stringify(resp["output"]), tool: &toolRef{id: str(resp, "ref"), name: str(resp, "name")}}
	}
	if _, ok := pm["media"]; ok {
		return part{kind: partMedia}
	}
	if _, ok := pm["reasoning"]; ok {
		return part{kind: partReasoning}
	}
	if t, ok := pm["text"].(string); ok && strings.TrimSpace(t) != "" {
		return part{kind: partText, text: t}
	}
	if p, ok := textField(pm, "text"); ok && p.kind == partNotText {
		return p
	}
	return part{kind: partOther}
}
