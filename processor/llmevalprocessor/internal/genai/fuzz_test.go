package genai

import (
	"strings"
	"testing"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// checkGeneration fails when a field is not valid UTF-8 or exceeds its bound.
func checkGeneration(t *testing.T, g Generation) {
	t.Helper()
	if g.Missing == MissingUnreadable {
		t.Fatal("Read recovered from a panic")
	}
	fields := append([]string{g.Input, g.Conversation, g.Output, g.Model, g.ResponseID, g.Missing, g.Convention},
		append(g.Context(), g.SystemInstructions...)...)
	for _, s := range fields {
		if !utf8.ValidString(s) {
			t.Fatalf("invalid UTF-8 in %q", s)
		}
		if len(s) > maxFieldBytes {
			t.Fatalf("field of %d bytes exceeds the bound", len(s))
		}
	}
	if len(g.ToolResults) > maxItems || len(g.Documents) > maxItems || len(g.SystemInstructions) > maxItems {
		t.Fatalf("too many items: %d context, %d instructions", len(g.Context()), len(g.SystemInstructions))
	}
}

func fuzzSpan(attrs map[string]string) ptrace.Span {
	span := ptrace.NewSpan()
	for k, v := range attrs {
		span.Attributes().PutStr(k, v)
	}
	return span
}

// FuzzReadSemconv feeds arbitrary JSON-ish text to the current semconv
// attributes and to the operation-details event.
func FuzzReadSemconv(f *testing.F) {
	f.Add(`[{"role":"user","parts":[{"type":"text","content":"hi"}]}]`,
		`[{"role":"assistant","parts":[{"type":"text","content":"hello"}],"finish_reason":"stop"}]`,
		`[{"type":"text","content":"be brief"}]`)
	f.Add(`[{"role":"user","parts":[{"type":"te`, `[{"role":"assistant","parts":[{"type":"text","content":"cut`, "raw instructions")
	f.Add(`[{'role': 'user', 'content': 'hi'}]`, `{"choices":[{"message":{"content":"x"}}]}`, `{"type":"text"}`)
	f.Add(`[[[[[[`, `["\ud800",1e999,-,{"a":}]`, "\xff\xfe")
	f.Add(`[{"role":"tool","parts":[{"type":"tool_call_response","response":{"a":[1,2]}}]}]`,
		`[{"role":"assistant","parts":[{"type":"tool_call","name":"f","arguments":"{}"}],"finish_reason":"tool_call"}]`, "")
	f.Fuzz(func(t *testing.T, in, out, sys string) {
		span := fuzzSpan(map[string]string{attrInputMessages: in, attrOutputMessages: out, attrSystemInstructions: sys})
		checkGeneration(t, Read(span))
		ev := ptrace.NewSpan()
		e := ev.Events().AppendEmpty()
		e.SetName(eventOperationDetails)
		e.Attributes().PutStr(attrInputMessages, in)
		e.Attributes().PutStr(attrOutputMessages, out)
		checkGeneration(t, Read(ev))
	})
}

// FuzzReadEvents covers the v1.27 content events and the per-message events.
func FuzzReadEvents(f *testing.F) {
	f.Add(`[{"role":"user","content":"q"}]`, `[{"role":"assistant","content":"a"}]`, "q", `{"role":"assistant","content":"a"}`)
	f.Add(`[{'role': 'user'}]`, `[{"index":0,"message":{"content":"x`, `[{"type":"text","text":"multi"}]`, `not json`)
	f.Add("", "", "", `[{"id":"c","function":{"name":"f","arguments":"{"}}]`)
	f.Fuzz(func(t *testing.T, prompt, completion, content, message string) {
		span := ptrace.NewSpan()
		add := func(name string, kv ...string) {
			e := span.Events().AppendEmpty()
			e.SetName(name)
			for i := 0; i+1 < len(kv); i += 2 {
				e.Attributes().PutStr(kv[i], kv[i+1])
			}
		}
		add(eventContentPrompt, "gen_ai.prompt", prompt)
		add(eventContentCompletion, "gen_ai.completion", completion)
		add("gen_ai.user.message", "content", content)
		add("gen_ai.assistant.message", "tool_calls", message)
		add(eventChoice, "message", message, "index", content, "message.content", content)
		checkGeneration(t, Read(span))
	})
}

// FuzzReadIndexed covers OpenInference and OpenLLMetry flattened keys: the
// fuzzer picks key suffixes and values.
func FuzzReadIndexed(f *testing.F) {
	f.Add("0.message.role", "user", "0.message.contents.1.message_content.text", "hi", "0.content", `[{"type":"text","text":"x"}]`)
	f.Add("7.message.tool_calls.0.tool_call.function.arguments", "{", "x.y", "z", "99999999999.role", "tool")
	f.Add("0.message.content", "__REDACTED__", "0.finish_reason", "tool_calls", "0.tool_calls.3.name", "f")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, k3, v3 string) {
		attrs := map[string]string{}
		for _, p := range []string{prefixOIInput, prefixOIOutput, prefixPrompt, prefixCompletion, prefixOIDocs} {
			attrs[p+k1], attrs[p+k2], attrs[p+k3] = v1, v2, v3
		}
		attrs["input.value"], attrs["output.value"] = v1, v3
		attrs["llm.prompt_template.variables"] = v2
		checkGeneration(t, Read(fuzzSpan(attrs)))
	})
}

// FuzzReadVercel covers ai.prompt.messages, ai.prompt and the response keys.
func FuzzReadVercel(f *testing.F) {
	f.Add(`[{"role":"user","content":[{"type":"text","text":"q"},{"type":"file","data":"AAAA"}]}]`,
		`{"system":"s","prompt":"p"}`, "answer", `[{"toolName":"t","args":{}}]`)
	f.Add(`[{"role":"tool","content":[{"type":"tool-result","output":{"type":"json","value":{"a":1}}}]}]`,
		`{"messages":[{"role":"user","content":"cut`, "", `[{`)
	f.Fuzz(func(t *testing.T, messages, prompt, text, toolCalls string) {
		span := fuzzSpan(map[string]string{
			"ai.prompt.messages": messages, "ai.response.text": text, "ai.response.toolCalls": toolCalls,
		})
		checkGeneration(t, Read(span))
		outer := fuzzSpan(map[string]string{"ai.prompt": prompt, "ai.response.object": text})
		checkGeneration(t, Read(outer))
	})
}

// FuzzClassify checks Classify never panics on any key/value/name.
func FuzzClassify(f *testing.F) {
	f.Add("gen_ai.operation.name", "chat", "chat gpt-4")
	f.Add("operation.name", "ai.generateText.doGenerate fn", "ai.generateText")
	f.Add("", "", "")
	f.Fuzz(func(t *testing.T, k, v, name string) {
		span := fuzzSpan(map[string]string{k: v})
		span.SetName(name)
		k1 := Classify(pcommon.NewResource(), span)
		if k1 < KindOther || k1 > KindContext {
			t.Fatalf("unknown kind %d", k1)
		}
	})
}

func TestReadHugeValuesAreBounded(t *testing.T) {
	big := strings.Repeat("word ", maxFieldBytes/2)
	span := fuzzSpan(map[string]string{
		attrInputMessages:  `[{"role":"user","parts":[{"type":"text","content":"` + big + `"}]}]`,
		attrOutputMessages: `[{"role":"assistant","parts":[{"type":"text","content":"` + big + `"},{"type":"text","content":"` + big + `"}]}]`,
	})
	g := read(span)
	checkGeneration(t, g)
	if len(g.Output) != maxFieldBytes {
		t.Fatalf("output should be cut at the bound, got %d bytes", len(g.Output))
	}
}
