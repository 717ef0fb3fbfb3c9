package llmevalprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadatatest"
	"github.com/llm-eval/llm_eval/scoring"
)

// TestMalformedLibraryContentIsNotJudged: the message attributes of the
// Langfuse, Genkit and Anthropic (OpenInference) readers holding text that
// opens as JSON but is none, or an Anthropic content block of a type no
// reader knows: each span leaves once, not scorable with the reason, and
// the judge is never called.
func TestMalformedLibraryContentIsNotJudged(t *testing.T) {
	const broken = `{"role": [[[{{{]]`
	tests := []struct {
		name      string
		attrs     map[string]any
		reason    string
		malformed string // the attribute content_malformed counts; "" for none
	}{
		{
			name:   "langfuse output",
			attrs:  map[string]any{"langfuse.observation.type": "generation", "langfuse.observation.input": "Who should we hire?", "langfuse.observation.output": broken},
			reason: "malformed langfuse.observation.output", malformed: "langfuse.observation.output",
		},
		{
			name: "genkit output",
			attrs: map[string]any{"genkit:type": "action", "genkit:metadata:subtype": "model",
				"genkit:input": `{"messages":[{"role":"user","content":[{"text":"Who should we hire?"}]}]}`, "genkit:output": broken},
			reason: "malformed genkit:output", malformed: "genkit:output",
		},
		{
			name: "anthropic block of an unknown type",
			attrs: map[string]any{"openinference.span.kind": "LLM", "llm.system": "anthropic",
				"llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": "Who should we hire?",
				"llm.output_messages.0.message.contents.0.message_content.type": "server_tool_use"},
			reason: "no output content",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bias := fixedScorer(scoring.Bias, 0.1, scoring.LabelPass)
			h := newHarness(t, testConfig(scoring.Bias), bias)
			b := newBatch()
			s := b.spans.AppendEmpty()
			s.SetTraceID(randomTraceID())
			s.SetSpanID(nextSpanID())
			s.SetName("library call")
			s.SetKind(ptrace.SpanKindInternal)
			assert.NoError(t, s.Attributes().FromRaw(tt.attrs))
			id := s.SpanID()
			h.consume(b.td)
			h.waitSpans(1)
			h.drain()

			byID, count := sinkSpans(h.sink)
			assert.Equal(t, 1, count[id], "the span leaves once")
			ev := evaluationEvents(byID[id].span)[scoring.Bias]
			assertAttr(t, ev, evalconv.AttrScoreLabel, "not_scorable")
			assertAttr(t, ev, evalconv.AttrExplanation, tt.reason)
			assert.Zero(t, bias.calls.Load(), "no judge call")
			if tt.malformed != "" {
				metadatatest.AssertEqualProcessorLlmEvalContentMalformed(t, h.tel, []metricdata.DataPoint[int64]{
					{Attributes: attribute.NewSet(attribute.String("attribute", tt.malformed)), Value: 1},
				}, ignoreTime)
			}
		})
	}
}
