package genai

import "testing"

// FuzzReadLibraryAttributes feeds arbitrary JSON-ish text to the attributes
// of the Langfuse, Genkit and Anthropic (OpenInference) readers: Read never
// panics and keeps every field valid and bounded.
func FuzzReadLibraryAttributes(f *testing.F) {
	f.Add(`{"messages":[{"role":"user","content":"hi"}]}`, `{"role":"assistant","content":"hello"}`, `{"system":"be brief"}`)
	f.Add(`{"messages":[{"role":"system","content":[{"text":"be brief"}]},{"role":"user","content":[{"text":"hi"}]}]}`,
		`{"finishReason":"stop","message":{"role":"model","content":[{"text":"hello"},{"toolRequest":{"name":"f","input":{}}}]}}`,
		`{"system":[{"type":"text","text":"be brief"},{"type":"mystery"}]}`)
	f.Add(`{"messages":[{"role":`, `{"candidates":[{"message":{"content":[{"toolResponse":{"output":[1,`, `{system: x}`)
	f.Add(`[[[[`, `"\ud800"`, "\xff\xfe")
	f.Fuzz(func(t *testing.T, in, out, params string) {
		for _, attrs := range []map[string]string{
			{attrLangfuseType: "generation", attrLangfuseInput: in, attrLangfuseOutput: out},
			{attrGenkitType: "action", attrGenkitSubtype: "model", attrGenkitInput: in, attrGenkitOutput: out},
			{"openinference.span.kind": "LLM", attrOIInvocationParameters: params,
				"llm.input_messages.0.message.content": in, "llm.output_messages.0.message.content": out},
		} {
			checkGeneration(t, Read(fuzzSpan(attrs)))
		}
	})
}
