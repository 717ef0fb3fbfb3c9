package genai

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// readStep classifies a span as the processor does and reads it as a step
// of the run of its parent.
func readStep(span ptrace.Span) (Step, bool) {
	span = withParent(span)
	return ReadStep(Classify(pcommon.NewResource(), span), span)
}

func withParent(span ptrace.Span) ptrace.Span {
	span.SetParentSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8})
	return span
}

func TestReadStepGenerations(t *testing.T) {
	tests := []struct {
		name  string
		attrs map[string]any
		want  Step
	}{
		{
			name: "semconv tool_call parts and the trailing tool_call_response",
			attrs: map[string]any{
				"gen_ai.operation.name": "chat",
				"gen_ai.input.messages": `[{"role":"user","parts":[{"type":"text","content":"Weather?"}]},` +
					`{"role":"tool","parts":[{"type":"tool_call_response","id":"old","response":"history"}]},` +
					`{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"get_weather","arguments":{"city":"Rome"}}]},` +
					`{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"sunny"}]}]`,
				"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"Sunny."},` +
					`{"type":"tool_call","id":"c2","name":"get_time","arguments":"not json, city=Rome"}],"finish_reason":"tool_call"}]`,
			},
			want: Step{Kind: StepGeneration, Output: "Sunny.",
				ToolCalls:   []ToolCall{{ID: "c2", Name: "get_time", Arguments: "not json, city=Rome"}},
				ToolResults: []ToolResult{{CallID: "c1", Name: "get_weather", Result: "sunny"}}},
		},
		{
			name: "OpenInference tool_calls and a tool message with tool_call_id",
			attrs: map[string]any{
				"openinference.span.kind":                                                 "LLM",
				"llm.input_messages.0.message.role":                                       "user",
				"llm.input_messages.0.message.content":                                    "Order?",
				"llm.input_messages.1.message.role":                                       "assistant",
				"llm.input_messages.1.message.tool_calls.0.tool_call.id":                  "c1",
				"llm.input_messages.1.message.tool_calls.0.tool_call.function.name":       "lookup",
				"llm.input_messages.2.message.role":                                       "tool",
				"llm.input_messages.2.message.content":                                    "shipped",
				"llm.input_messages.2.message.tool_call_id":                               "c1",
				"llm.output_messages.0.message.role":                                      "assistant",
				"llm.output_messages.0.message.tool_calls.0.tool_call.id":                 "c2",
				"llm.output_messages.0.message.tool_calls.0.tool_call.function.name":      "track",
				"llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": `{"id":"JD0142"}`,
			},
			want: Step{Kind: StepGeneration,
				ToolCalls:   []ToolCall{{ID: "c2", Name: "track", Arguments: `{"id":"JD0142"}`}},
				ToolResults: []ToolResult{{CallID: "c1", Name: "lookup", Result: "shipped"}}},
		},
		{
			name: "OpenLLMetry indexed tool calls and a tool prompt",
			attrs: map[string]any{
				"llm.request.type":                           "chat",
				"gen_ai.prompt.0.role":                       "user",
				"gen_ai.prompt.0.content":                    "Order?",
				"gen_ai.prompt.1.role":                       "tool",
				"gen_ai.prompt.1.content":                    "shipped",
				"gen_ai.prompt.1.tool_call_id":               "c1",
				"gen_ai.completion.0.role":                   "assistant",
				"gen_ai.completion.0.content":                "It shipped.",
				"gen_ai.completion.0.tool_calls.0.id":        "c2",
				"gen_ai.completion.0.tool_calls.0.name":      "track",
				"gen_ai.completion.0.tool_calls.0.arguments": `{"id":"JD0142"}`,
			},
			want: Step{Kind: StepGeneration, Output: "It shipped.",
				ToolCalls:   []ToolCall{{ID: "c2", Name: "track", Arguments: `{"id":"JD0142"}`}},
				ToolResults: []ToolResult{{CallID: "c1", Result: "shipped"}}},
		},
		{
			name: "Vercel ai.response.toolCalls and tool-result parts naming their tool",
			attrs: map[string]any{
				"ai.operationId":        "ai.generateText.doGenerate",
				"ai.prompt.messages":    `[{"role":"user","content":"Order?"},{"role":"tool","content":[{"type":"tool-result","toolCallId":"c1","toolName":"lookup","result":{"status":"shipped"}}]}]`,
				"ai.response.toolCalls": `[{"toolCallType":"function","toolCallId":"c2","toolName":"track","args":"{\"id\":\"JD0142\"}"}]`,
			},
			want: Step{Kind: StepGeneration,
				ToolCalls:   []ToolCall{{ID: "c2", Name: "track", Arguments: `{"id":"JD0142"}`}},
				ToolResults: []ToolResult{{CallID: "c1", Name: "lookup", Result: `{"status":"shipped"}`}}},
		},
		{
			name: "Mastra model step with toolCalls",
			attrs: map[string]any{
				"mastra.span.type":        "model_step",
				"mastra.model_step.input": `[{"role":"user","content":"Order?"}]`,
				"mastra.model_step.output": `{"text":"","toolCalls":[{"toolCallId":"call_3","toolName":"get_order_status",` +
					`"args":{"orderId":"1042"}}]}`,
			},
			want: Step{Kind: StepGeneration, ToolCalls: []ToolCall{{ID: "call_3", Name: "get_order_status", Arguments: `{"orderId":"1042"}`}}},
		},
		{
			name:  "no content at all is still a model call",
			attrs: map[string]any{"gen_ai.operation.name": "chat"},
			want:  Step{Kind: StepGeneration},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, ok := readStep(newSpan(t, "llm", tt.attrs))
			require.True(t, ok)
			assert.Equal(t, tt.want, st)
		})
	}
}

// TestReadStepFailedGeneration: a model call that failed is a generation
// step with its error, read the same way by both readers.
func TestReadStepFailedGeneration(t *testing.T) {
	tests := []struct {
		name string
		set  func(ptrace.Span)
		want string
	}{
		{"status message", func(s ptrace.Span) {
			s.Status().SetCode(ptrace.StatusCodeError)
			s.Status().SetMessage("429 Rate limit reached")
		}, "429 Rate limit reached"},
		{"error.type only", func(s ptrace.Span) { s.Attributes().PutStr("error.type", "timeout") }, "timeout"},
		{"status ok", func(s ptrace.Span) { s.Status().SetCode(ptrace.StatusCodeOk) }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			span := withParent(newSpan(t, "chat", map[string]any{
				"gen_ai.operation.name": "chat",
				"gen_ai.input.messages": `[{"role":"user","parts":[{"type":"text","content":"Weather?"}]}]`,
			}))
			tt.set(span)
			st, ok := readStep(span)
			require.True(t, ok)
			assert.Equal(t, Step{Kind: StepGeneration, Error: tt.want}, st)
			_, st, ok = ReadWithStep(span)
			require.True(t, ok)
			assert.Equal(t, tt.want, st.Error)
		})
	}
}

func TestReadStepTools(t *testing.T) {
	tests := []struct {
		name  string
		attrs map[string]any
		setup func(ptrace.Span)
		want  Step
	}{
		{
			name: "semconv execute_tool with structured arguments",
			attrs: map[string]any{
				"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": "c1",
				"gen_ai.tool.call.arguments": map[string]any{"city": "Rome"}, "gen_ai.tool.call.result": "sunny",
			},
			want: Step{Kind: StepTool, Name: "get_weather", CallID: "c1", Arguments: `{"city":"Rome"}`, Result: "sunny"},
		},
		{
			name: "a JSON string result is unquoted, arguments that are not JSON are kept",
			attrs: map[string]any{
				"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "shell",
				"gen_ai.tool.call.arguments": "ls -la /tmp", "gen_ai.tool.call.result": `"done"`,
			},
			want: Step{Kind: StepTool, Name: "shell", Arguments: "ls -la /tmp", Result: "done"},
		},
		{
			name:  "the tool name from the span name",
			attrs: map[string]any{"gen_ai.operation.name": "execute_tool"},
			want:  Step{Kind: StepTool, Name: "lookup_order"},
		},
		{
			name: "OpenInference TOOL",
			attrs: map[string]any{
				"openinference.span.kind": "TOOL", "tool.name": "lookup", "input.value": `{"id":7}`, "output.value": "found",
			},
			want: Step{Kind: StepTool, Name: "lookup", Arguments: `{"id":7}`, Result: "found"},
		},
		{
			name: "OpenInference TOOL with the id of the call it answers (tool.id)",
			attrs: map[string]any{
				"openinference.span.kind": "TOOL", "tool.name": "lookup", "tool.id": "call_62136355",
				"input.value": `{"id":7}`, "output.value": "found",
			},
			want: Step{Kind: StepTool, Name: "lookup", CallID: "call_62136355", Arguments: `{"id":7}`, Result: "found"},
		},
		{
			name: "tool.id outside OpenInference names a tool, not a call",
			attrs: map[string]any{
				"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup", "tool.id": "lookup-v2",
			},
			want: Step{Kind: StepTool, Name: "lookup"},
		},
		{
			name: "Vercel ai.toolCall (v4 names)",
			attrs: map[string]any{
				"ai.operationId": "ai.toolCall", "ai.toolCall.name": "lookup", "ai.toolCall.id": "c9",
				"ai.toolCall.args": `{"id":7}`, "ai.toolCall.result": `{"status":"ok"}`,
			},
			want: Step{Kind: StepTool, Name: "lookup", CallID: "c9", Arguments: `{"id":7}`, Result: `{"status":"ok"}`},
		},
		{
			name: "Vercel ai.toolCall (v5 names) that threw",
			attrs: map[string]any{
				"operation.name": "ai.toolCall fn", "ai.toolCall.name": "lookup", "ai.toolCall.id": "c9",
				"ai.toolCall.input": `{"id":7}`,
			},
			setup: func(s ptrace.Span) {
				s.Status().SetCode(ptrace.StatusCodeError)
				ev := s.Events().AppendEmpty()
				ev.SetName("exception")
				ev.Attributes().PutStr("exception.message", "order service unreachable")
			},
			want: Step{Kind: StepTool, Name: "lookup", CallID: "c9", Arguments: `{"id":7}`, Error: "order service unreachable"},
		},
		{
			name: "Mastra tool_call",
			attrs: map[string]any{
				"mastra.span.type": "tool_call", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_order_status",
				"gen_ai.tool.call.id": "call_3", "gen_ai.tool.call.arguments": `{"orderId":"1042"}`, "gen_ai.tool.call.result": "shipped",
			},
			want: Step{Kind: StepTool, Name: "get_order_status", CallID: "call_3", Arguments: `{"orderId":"1042"}`, Result: "shipped"},
		},
		{
			name: "OpenLLMetry tool with keyword arguments",
			attrs: map[string]any{
				"traceloop.span.kind": "tool", "traceloop.entity.name": "get_weather",
				"traceloop.entity.input": `{"args":[],"kwargs":{"city":"Rome"}}`, "traceloop.entity.output": `"sunny"`,
			},
			want: Step{Kind: StepTool, Name: "get_weather", Arguments: `{"city":"Rome"}`, Result: "sunny"},
		},
		{
			name: "error.type alone, and a status Error without a message",
			attrs: map[string]any{
				"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t", "error.type": "TimeoutError",
			},
			want: Step{Kind: StepTool, Name: "t", Error: "TimeoutError"},
		},
		{
			name:  "a status Error that says nothing",
			attrs: map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"},
			setup: func(s ptrace.Span) { s.Status().SetCode(ptrace.StatusCodeError) },
			want:  Step{Kind: StepTool, Name: "t", Error: "error"},
		},
		{
			name:  "the status message wins",
			attrs: map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t", "error.type": "E"},
			setup: func(s ptrace.Span) { s.Status().SetCode(ptrace.StatusCodeError); s.Status().SetMessage("boom") },
			want:  Step{Kind: StepTool, Name: "t", Error: "boom"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			span := newSpan(t, "execute_tool lookup_order", tt.attrs)
			if tt.setup != nil {
				tt.setup(span)
			}
			st, ok := readStep(span)
			require.True(t, ok)
			assert.Equal(t, tt.want, st)
		})
	}
}

func TestReadStepAgentsAndOthers(t *testing.T) {
	agent := map[string]any{
		"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "billing",
		"gen_ai.input.messages":  `[{"role":"user","parts":[{"type":"text","content":"Refund me."}]}]`,
		"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"Refunded."}]}]`,
	}
	st, ok := readStep(withParent(newSpan(t, "invoke_agent billing", agent)))
	require.True(t, ok, "a nested agent is a step of the run above it")
	assert.Equal(t, Step{Kind: StepAgent, Name: "billing", Arguments: "Refund me.", Result: "Refunded."}, st)

	for _, attrs := range []map[string]any{agent, {"gen_ai.operation.name": "chat"}, {"gen_ai.operation.name": "execute_tool"}} {
		span := newSpan(t, "root", attrs)
		_, ok = ReadStep(Classify(pcommon.NewResource(), span), span)
		assert.False(t, ok, "a root span is no step of anything: %v", attrs)
	}

	for name, attrs := range map[string]map[string]any{
		"retrieval":              {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.documents": `["doc"]`},
		"OpenLLMetry task":       {"traceloop.span.kind": "task", "traceloop.entity.output": "x"},
		"nested chain":           {"openinference.span.kind": "CHAIN"},
		"Mastra model_inference": {"mastra.span.type": "model_inference", "gen_ai.operation.name": "chat"},
		"HTTP":                   {"http.request.method": "GET"},
	} {
		_, ok := readStep(withParent(newSpan(t, name, attrs)))
		assert.False(t, ok, "%s is not a step", name)
	}
}

// FuzzReadStep checks ReadStep never panics and keeps every text valid
// UTF-8 and bounded, on any tool attributes and generation messages.
func FuzzReadStep(f *testing.F) {
	f.Add("execute_tool", `{"a":1}`, `"quoted"`, `[{"role":"tool","parts":[{"type":"tool_call_response","id":"x"}]}]`)
	f.Add("ai.toolCall", "not json", "\xff\xfe", `[{"role":"assistant","tool_calls":[{"id":1,"function":{"name":{}}}]},{"role":"tool"}]`)
	f.Add("chat", `[[[[`, `"\ud800"`, `{"toolCalls":[{"toolCallId":null}]}`)
	f.Fuzz(func(t *testing.T, op, args, result, messages string) {
		for _, attrs := range []map[string]string{
			{"gen_ai.operation.name": op, "gen_ai.tool.call.arguments": args, "gen_ai.tool.call.result": result},
			{"ai.operationId": op, "ai.toolCall.args": args, "ai.toolCall.output": result},
			{"traceloop.span.kind": "tool", "traceloop.entity.input": args, "traceloop.entity.output": result},
			{"gen_ai.operation.name": "chat", "gen_ai.input.messages": messages, "gen_ai.output.messages": messages},
			{"mastra.span.type": "model_step", "mastra.model_step.input": messages, "mastra.model_step.output": messages},
		} {
			span := fuzzSpan(attrs)
			span.SetParentSpanID(pcommon.SpanID{1})
			st, _ := readStep(span)
			texts := []string{st.Output, st.Name, st.CallID, st.Arguments, st.Result, st.Error}
			for _, c := range st.ToolCalls {
				texts = append(texts, c.ID, c.Name, c.Arguments)
			}
			for _, r := range st.ToolResults {
				texts = append(texts, r.CallID, r.Name, r.Result)
			}
			for _, s := range texts {
				if !utf8.ValidString(s) || len(s) > maxFieldBytes {
					t.Fatalf("text of %d bytes, valid UTF-8 %v", len(s), utf8.ValidString(s))
				}
			}
		}
	})
}

func TestReadStepHugeArgumentsAreBounded(t *testing.T) {
	big := strings.Repeat("x", 3*maxFieldBytes)
	st, ok := readStep(fuzzSpan(map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.arguments": big}))
	require.True(t, ok)
	assert.Len(t, st.Arguments, maxFieldBytes)
}

// TestReadWithStepIsReadAndReadStep: the one-pass reads give what Read (or
// ReadAgent) and ReadStep give apart, on every generation and agent span
// of the testdata.
func TestReadWithStepIsReadAndReadStep(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/conventions/*.json")
	more, _ := filepath.Glob("../../../../testdata/otlp/trajectories/*.json")
	files = append(files, more...)
	require.NotEmpty(t, more)
	n, agents := 0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
		require.NoError(t, err)
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, span := range ss.Spans().All() {
					kind := Classify(rs.Resource(), span)
					read, readWithStep := Read, ReadWithStep
					switch {
					case kind == KindAggregate && IsAgent(span):
						read, readWithStep = ReadAgent, ReadAgentWithStep
						agents++
					case kind != KindGeneration:
						continue
					}
					for _, parent := range []pcommon.SpanID{{}, {9}} {
						span.SetParentSpanID(parent)
						g, st, ok := readWithStep(span)
						wantSt, wantOK := ReadStep(kind, span)
						assert.Equal(t, read(span), g, "%s: %s", f, span.Name())
						assert.Equal(t, wantOK, ok, "%s: %s", f, span.Name())
						assert.Equal(t, wantSt, st, "%s: %s", f, span.Name())
						n++
					}
				}
			}
		}
	}
	assert.Greater(t, n, 20)
	assert.Positive(t, agents, "no agent span in the testdata")
}
