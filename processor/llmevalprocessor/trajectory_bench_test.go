package llmevalprocessor

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadata"
	"github.com/llm-eval/llm_eval/scoring"
)

// benchAgentSteps is the number of tool-calling model calls of the
// benchmark's agent run; with their tool executions and the answering call
// the run has 2*benchAgentSteps+1 steps.
const benchAgentSteps = 10

// benchAgentRun is one agent run in one batch, as an agent loop exports
// it: an invoke_agent root; per step a chat span whose input is the whole
// conversation so far and whose output asks for a tool, and that tool's
// execute_tool span; the answering chat span; and 15 HTTP spans.
func benchAgentRun() ptrace.Traces {
	const question = "Which of my orders from December have not shipped yet, and when will they?"
	r := newAgentRun(question, "Orders 1042 and 1043 ship on Friday; the others have shipped.")
	conversation := []any{map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "content": question}}}}
	for i := range benchAgentSteps {
		id := fmt.Sprint("call_", i)
		args := fmt.Sprintf(`{"order_id":"%d","fields":["status","eta"]}`, 1040+i)
		result := fmt.Sprintf(`{"order_id":"%d","status":"packed","eta":"Friday","warehouse":"Lyon","carrier":"DHL","note":"%s"}`,
			1040+i, strings.Repeat("waiting for the carrier's pickup slot ", 3))
		call := map[string]any{"type": "tool_call", "id": id, "name": "lookup_order", "arguments": args}
		chat := r.add(nextSpanID(), r.agent, "chat gpt-4o")
		chat.Attributes().PutStr("gen_ai.operation.name", "chat")
		chat.Attributes().PutStr("gen_ai.request.model", "gpt-4o")
		chat.Attributes().PutStr("gen_ai.input.messages", mustJSON(conversation))
		chat.Attributes().PutStr("gen_ai.output.messages", mustJSON([]any{map[string]any{"role": "assistant", "parts": []any{call}, "finish_reason": "tool_call"}}))
		r.tool(pcommon.SpanID{}, id, "lookup_order", args, result)
		conversation = append(conversation,
			map[string]any{"role": "assistant", "parts": []any{call}},
			map[string]any{"role": "tool", "parts": []any{map[string]any{"type": "tool_call_response", "id": id, "response": result}}})
	}
	final := r.add(nextSpanID(), r.agent, "chat gpt-4o")
	final.Attributes().PutStr("gen_ai.operation.name", "chat")
	final.Attributes().PutStr("gen_ai.input.messages", mustJSON(conversation))
	final.Attributes().PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"Orders 1042 and 1043 ship on Friday; the others have shipped."}],"finish_reason":"stop"}]`)
	for i := range 15 {
		s := r.add(nextSpanID(), r.agent, fmt.Sprintf("GET /api/orders/%d", i))
		s.Attributes().PutStr("http.request.method", "GET")
		s.Attributes().PutStr("http.route", "/api/orders/{id}")
		s.Attributes().PutInt("http.response.status_code", 200)
	}
	return r.td
}

// BenchmarkAgentTrajectory measures ConsumeTraces per agent run (one batch
// of benchAgentRun, every trace sampled, a fake scorer) without a
// trajectory scorer (bias on generations and agents) and with one
// (task_completion added): the difference is reading the steps, keeping
// them in the trace context index and assembling the run at dispatch.
// index_B/run is what the index holds for one run after it was scored.
func BenchmarkAgentTrajectory(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "trajectory_off"
		if on {
			name = "trajectory_on"
		}
		b.Run(name, func(b *testing.B) {
			cfg := testConfig(scoring.Bias)
			cfg.Scorers[0].Targets = []string{targetGeneration, targetAgent}
			cfg.QueueSize = 100000
			scorers := []scoring.Scorer{fixedScorer(scoring.Bias, 0.1, scoring.LabelPass)}
			if on {
				scorers = withTaskCompletion(cfg, scorers)
			}
			build := func(context.Context, *Config, component.Host, component.TelemetrySettings, judgeHooks) (judgeSet, error) {
				return judgeSet{scorers: scorers}, nil
			}
			p, proc, err := newTracesProcessor(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop(), build)
			if err != nil {
				b.Fatal(err)
			}
			if err := proc.Start(context.Background(), componenttest.NewNopHost()); err != nil {
				b.Fatal(err)
			}
			defer func() { _ = proc.Shutdown(context.Background()) }()

			before := p.join.Index.Stats().Bytes
			if err := proc.ConsumeTraces(context.Background(), benchAgentRun()); err != nil {
				b.Fatal(err)
			}
			held := p.join.Index.Stats().Bytes - before

			consumeBatches(b, proc, 200, benchAgentRun)
			b.ReportMetric(float64(held), "index_B/run")
		})
	}
}
