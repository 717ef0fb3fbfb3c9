//go:build e2e

package e2e

import (
	"encoding/json"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// conversationTurns is a batch of one chat span per exchange of a
// conversation, each in its own trace (ids from first on), naming the
// conversation in gen_ai.conversation.id and carrying the messages before
// it, as a chat client that resends the history does.
func conversationTurns(service, id, model string, first uint64, exchanges [][2]string) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("e2e.chat")
	start := time.Now()
	var history []map[string]any
	for i, ex := range exchanges {
		s := ss.Spans().AppendEmpty()
		s.SetTraceID(traceIDOf(first + uint64(i)))
		s.SetSpanID(spanIDOf(first + uint64(i)))
		s.SetName("chat " + model)
		s.SetKind(ptrace.SpanKindClient)
		at := start.Add(time.Duration(i) * time.Second)
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(at))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(at.Add(500 * time.Millisecond)))
		a := s.Attributes()
		a.PutStr("gen_ai.operation.name", "chat")
		a.PutStr("gen_ai.request.model", model)
		a.PutStr("gen_ai.conversation.id", id)
		a.PutStr("gen_ai.system_instructions", `[{"type":"text","content":"You are the support assistant of a bicycle shop."}]`)
		history = append(history, map[string]any{"role": "user", "parts": []map[string]string{{"type": "text", "content": ex[0]}}})
		in, _ := json.Marshal(history)
		out, _ := json.Marshal([]map[string]any{{"role": "assistant", "finish_reason": "stop", "parts": []map[string]string{{"type": "text", "content": ex[1]}}}})
		a.PutStr("gen_ai.input.messages", string(in))
		a.PutStr("gen_ai.output.messages", string(out))
		history = append(history, map[string]any{"role": "assistant", "parts": []map[string]string{{"type": "text", "content": ex[1]}}})
	}
	return td
}

// supportConversation is a short conversation of the e2e tests.
var supportConversation = [][2]string{
	{"I want to return my bike, order 1042.", "I can help with that. Is the bike unused?"},
	{"Yes, it is still in its box.", "Then you can return it within 30 days; I have sent you a return label."},
}
