package genai

import (
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// readOpenLLMetry reads the legacy indexed gen_ai.prompt.N.* and
// gen_ai.completion.N.* attributes.
func readOpenLLMetry(idx *indexedAttrs) extraction {
	x := extraction{convention: ConventionOpenLLMetry}
	if es := idx.get(prefixPrompt); len(es) > 0 {
		x.input, x.hasInput = openLLMetryMessages(es, prefixPrompt, "user"), true
	}
	if es := idx.get(prefixCompletion); len(es) > 0 {
		x.output, x.hasOutput = openLLMetryMessages(es, prefixCompletion, "assistant"), true
	}
	return x
}

// openLLMetryMessages reads the messages flattened under prefix; a content
// attribute that is a number, a boolean or empty is a not-text part named
// by its key.
func openLLMetryMessages(entries []indexedEntry, prefix, defaultRole string) []message {
	out := make([]message, 0, len(entries))
	for _, e := range entries {
		f := e.fields
		raw := map[string]any{
			"role":          field(f, "role"),
			"finish_reason": field(f, "finish_reason"),
		}
		if raw["role"] == "" {
			raw["role"] = defaultRole
		}
		var notText part
		if c, ok := f["content"]; ok {
			if issue := textIssue(c, false); issue != "" {
				notText = part{kind: partNotText, text: issue, attr: prefix + strconv.Itoa(e.index) + ".content"}
			} else if c.Type() == pcommon.ValueTypeStr {
				// Multimodal content lists arrive JSON-stringified.
				if parts, ok := contentParts(c.Str()); ok {
					raw["content"] = parts
				} else {
					raw["content"] = c.Str()
				}
			} else {
				raw["content"] = c.AsRaw()
			}
		}
		var calls []any
		for _, tc := range subIndexed(f, "tool_calls.") {
			calls = append(calls, map[string]any{
				"id":        field(tc.fields, "id"),
				"name":      field(tc.fields, "name"),
				"arguments": field(tc.fields, "arguments"),
			})
		}
		if id := field(f, "tool_call_id"); id != "" {
			raw["tool_call_id"] = id
		}
		if name := field(f, "function_call.name"); name != "" {
			calls = append(calls, map[string]any{"name": name, "arguments": field(f, "function_call.arguments")})
		}
		if len(calls) > 0 {
			raw["tool_calls"] = calls
		}
		m, _ := parseMessage(raw, defaultRole)
		m.index = e.index
		if notText.kind == partNotText {
			m.parts = append(m.parts, notText)
		}
		out = append(out, m)
	}
	return out
}
