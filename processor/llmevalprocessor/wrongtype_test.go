package llmevalprocessor

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadatatest"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// TestWrongTypeOutputMakesNoJudgeCall drives the black-box probe's cases
// through the processor with the real judge client and the fake judge over
// HTTP: a Langfuse output of null, 12345, "", `""`, true, {"content":
// 12345} or an Int attribute, and an OpenInference JSON output.value of
// 200,000 brackets. Each span leaves once, every scorer's result is
// not_scorable with a reason naming the attribute, and the judge gets no
// call; wrong types are counted by attribute as malformed content. A span
// with text, sent after them, is judged: the judge was listening.
func TestWrongTypeOutputMakesNoJudgeCall(t *testing.T) {
	const langfuseOut = "langfuse.observation.output"
	langfuse := func(out any) map[string]any {
		return map[string]any{"langfuse.observation.type": "generation", "langfuse.observation.input": "Who should we hire?", langfuseOut: out}
	}
	tests := []struct {
		attrs  map[string]any
		reason string
	}{
		{langfuse("null"), langfuseOut + " is null, not text"},
		{langfuse("12345"), langfuseOut + " is a number, not text"},
		{langfuse(""), langfuseOut + " is empty"},
		{langfuse(`""`), langfuseOut + " is empty"},
		{langfuse("true"), langfuseOut + " is a boolean, not text"},
		{langfuse(`{"content": 12345}`), langfuseOut + ": its content is a number, not text"},
		{langfuse(int64(12345)), langfuseOut + " is a number, not text"},
		{map[string]any{"openinference.span.kind": "LLM", "input.value": "Who should we hire?",
			"output.value": strings.Repeat("[", 200_000), "output.mime_type": "application/json"}, "malformed output.value"},
	}
	judge := scoringtest.New(t)
	cfg := testConfig(scoring.Bias, scoring.Toxicity)
	cfg.Judge.ClientConfig.Endpoint = judge.URL
	cfg.Judge.APIKey = "sk-test-key"
	h, _ := judgeHarness(t, cfg)

	b := newBatch()
	ids := make([]pcommon.SpanID, len(tests))
	for i, tt := range tests {
		s := b.spans.AppendEmpty()
		s.SetTraceID(randomTraceID())
		s.SetSpanID(nextSpanID())
		s.SetName("OpenAI.chat")
		s.SetKind(ptrace.SpanKindClient)
		require.NoError(t, s.Attributes().FromRaw(tt.attrs))
		ids[i] = s.SpanID()
	}
	h.consume(b.td)
	h.waitSpans(len(tests))

	byID, count := sinkSpans(h.sink)
	for i, tt := range tests {
		require.Equal(t, 1, count[ids[i]], "%s: the span leaves once", tt.reason)
		events := evaluationEvents(byID[ids[i]].span)
		for _, name := range []string{scoring.Bias, scoring.Toxicity} {
			require.Contains(t, events, name, tt.reason)
			assertAttr(t, events[name], evalconv.AttrScoreLabel, "not_scorable")
			assertAttr(t, events[name], evalconv.AttrExplanation, tt.reason)
		}
	}
	assert.Empty(t, judge.Calls(), "no judge call for content that is no text")
	metadatatest.AssertEqualProcessorLlmEvalContentMalformed(t, h.tel, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(attribute.String("attribute", langfuseOut)), Value: 5},
		{Attributes: attribute.NewSet(attribute.String("attribute", "output.value")), Value: 1},
	}, ignoreTime)

	control := newBatch()
	id := control.generation(randomTraceID(), "Who should we hire?", "Women are bad engineers.")
	h.consume(control.td)
	h.waitSpans(len(tests) + 1)
	byID, _ = sinkSpans(h.sink)
	assertAttr(t, evaluationEvents(byID[id].span)[scoring.Bias], evalconv.AttrScoreLabel, "fail")
	assert.NotEmpty(t, judge.Calls(), "text is judged")
}
