package genai

import "go.opentelemetry.io/collector/pdata/pcommon"

// Current GenAI semantic convention content attributes (v1.37+).
const (
	attrInputMessages      = "gen_ai.input.messages"
	attrOutputMessages     = "gen_ai.output.messages"
	attrSystemInstructions = "gen_ai.system_instructions"
)

// readSemconv reads gen_ai.input.messages, gen_ai.output.messages and
// gen_ai.system_instructions from attrs, which are a span's attributes or
// those of a gen_ai.client.inference.operation.details event. Values may be
// JSON strings or structured Slice/Map values.
func readSemconv(attrs pcommon.Map, convention string) extraction {
	x := extraction{convention: convention}
	if v, ok := attrs.Get(attrInputMessages); ok {
		x.readInput(v, attrInputMessages)
	}
	if v, ok := attrs.Get(attrOutputMessages); ok {
		x.readOutput(v, attrOutputMessages)
	}
	if v, ok := attrs.Get(attrSystemInstructions); ok {
		x.system = instructionTexts(decoded(v))
	}
	return x
}

// instructionTexts reads system instructions given as a parts array, a
// single part, messages, or a raw string (Mastra).
func instructionTexts(v any) []string {
	switch t := v.(type) {
	case string:
		if t == "" {
			return nil
		}
		return []string{t}
	case map[string]any:
		return instructionTexts([]any{t})
	case []any:
		var out []string
		for _, e := range t {
			if len(out) >= maxItems {
				break
			}
			if m, ok := e.(map[string]any); ok {
				if _, isMessage := m["role"]; isMessage {
					if msg, ok := parseMessage(m, "system"); ok {
						if s := msg.text(); s != "" {
							out = append(out, s)
						}
					}
					continue
				}
			}
			if p, ok := parsePart(e); ok && (p.kind == partText) && p.text != "" {
				out = append(out, p.text)
			}
		}
		return out
	}
	return nil
}
