package llmevalprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadatatest"
	"github.com/llm-eval/llm_eval/scoring"
)

// TestMalformedContentIsNotJudged: a generation whose
// gen_ai.output.messages is not JSON is not judged as raw text; every
// scorer says why it is not scorable, and the attribute is counted.
func TestMalformedContentIsNotJudged(t *testing.T) {
	bias := fixedScorer(scoring.Bias, 0.1, scoring.LabelPass)
	h := newHarness(t, testConfig(scoring.Bias), bias)
	trace := randomTraceID()
	b := newBatch()
	bad := b.generation(trace, "Who should we hire?", "")
	b.spans.At(0).Attributes().PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[[[{{{"]]`)
	good := b.generation(trace, "Who should we hire?", "Anyone who fits the role.")
	h.consume(b.td)
	h.waitSpans(2)
	h.drain()

	byID, _ := sinkSpans(h.sink)
	ev := evaluationEvents(byID[bad].span)[scoring.Bias]
	assertAttr(t, ev, evalconv.AttrScoreLabel, "not_scorable")
	assertAttr(t, ev, evalconv.AttrExplanation, "malformed gen_ai.output.messages")
	assert.Contains(t, evaluationEvents(byID[good].span), scoring.Bias)
	assert.EqualValues(t, 1, bias.calls.Load(), "the judge sees only the well-formed answer")
	metadatatest.AssertEqualProcessorLlmEvalContentMalformed(t, h.tel, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(attribute.String("attribute", "gen_ai.output.messages")), Value: 1},
	}, ignoreTime)
}

func assertAttr(t *testing.T, m pcommon.Map, key, want string) {
	t.Helper()
	v, ok := m.Get(key)
	if assert.True(t, ok, key) {
		assert.Equal(t, want, v.AsString(), key)
	}
}
