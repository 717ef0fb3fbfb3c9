package llmevalprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadatatest"
	"github.com/llm-eval/llm_eval/scoring"
)

const toolCallOnlyOutput = `[{"role":"assistant","finish_reason":"tool_call","parts":[{"type":"tool_call","id":"call_1","name":"get_weather","arguments":{"city":"Paris"}}]}]`

// TestToolCallOnlyStepGetsNoResult checks an agent loop's two steps: the
// step that only asks for a tool leaves untouched and is counted in
// spans_skipped; the answering step is scored.
func TestToolCallOnlyStepGetsNoResult(t *testing.T) {
	bias := fixedScorer(scoring.Bias, 0.1, scoring.LabelPass)
	h := newHarness(t, testConfig(scoring.Bias), bias)
	trace := randomTraceID()
	b := newBatch()
	step := b.generation(trace, "What's the weather in Paris?", "")
	b.spans.At(0).Attributes().PutStr("gen_ai.output.messages", toolCallOnlyOutput)
	answer := b.generation(trace, "What's the weather in Paris?", "It is sunny in Paris.")
	h.consume(b.td)
	h.waitSpans(2)
	h.drain()

	byID, count := sinkSpans(h.sink)
	assert.Equal(t, 1, count[step])
	assert.Equal(t, 1, count[answer])
	assert.Empty(t, evaluationEvents(byID[step].span), "no result and no marker on a tool-call-only step")
	_, hasLabel := byID[step].span.Attributes().Get("llm_eval.bias.label")
	assert.False(t, hasLabel)
	assert.Contains(t, evaluationEvents(byID[answer].span), scoring.Bias, "the answer is scored")
	assert.EqualValues(t, 1, bias.calls.Load(), "one evaluation: the answer")
	metadatatest.AssertEqualProcessorLlmEvalSpansSkipped(t, h.tel, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(attribute.String("reason", "tool_calls_only")), Value: 1},
	}, ignoreTime)
	_, err := h.tel.GetMetric("otelcol_processor_llm_eval_spans_unscored")
	assert.Error(t, err, "a skipped step is not an unscored span")
}

// TestToolCallOnlyLogCallGetsNoResult is the same for a call read from
// per-message log events whose gen_ai.choice only calls a tool.
func TestToolCallOnlyLogCallGetsNoResult(t *testing.T) {
	bias := fixedScorer(scoring.Bias, 0.1, scoring.LabelPass)
	h := newLogsHarness(t, testConfig(scoring.Bias), bias)
	ld := plog.NewLogs()
	recs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	trace, span := randomTraceID(), nextSpanID()
	user := recs.AppendEmpty()
	user.SetEventName("gen_ai.user.message")
	user.SetTraceID(trace)
	user.SetSpanID(span)
	user.Body().SetEmptyMap().PutStr("content", "What's the weather in Paris?")
	choice := recs.AppendEmpty()
	choice.SetEventName("gen_ai.choice")
	choice.SetTraceID(trace)
	choice.SetSpanID(span)
	body := choice.Body().SetEmptyMap()
	body.PutInt("index", 0)
	body.PutStr("finish_reason", "tool_calls")
	call := body.PutEmptySlice("tool_calls").AppendEmpty().SetEmptyMap()
	call.PutStr("id", "call_1")
	call.PutStr("type", "function")
	fn := call.PutEmptyMap("function")
	fn.PutStr("name", "get_weather")
	fn.PutStr("arguments", `{"city":"Paris"}`)
	body.PutEmptyMap("message").PutStr("role", "assistant")
	h.consume(ld)
	require.NoError(t, h.p.Shutdown(context.Background()))

	_, results := h.split()
	assert.Empty(t, results, "no result records for a tool-call-only call")
	assert.Zero(t, bias.calls.Load())
	metadatatest.AssertEqualProcessorLlmEvalSpansSkipped(t, h.tel, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(attribute.String("reason", "tool_calls_only")), Value: 1},
	}, ignoreTime)
}
