package llmevalprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/scoring"
)

// TestScorerSamplingByTraceID: toxicity samples 30% of the traces, bias
// all of them. Toxicity scores exactly the spans whose trace id the
// processor's own hash puts in a 30% sample, and leaves no result and no
// marker on the others; bias scores every span.
func TestScorerSamplingByTraceID(t *testing.T) {
	cfg := testConfig(scoring.Bias, scoring.Toxicity)
	cfg.Scorers[1].Sampling = &SamplingConfig{Percentage: 30}
	require.NoError(t, cfg.Validate())
	bias, tox := fixedScorer(scoring.Bias, 0.1, scoring.LabelPass), fixedScorer(scoring.Toxicity, 0.0, scoring.LabelPass)
	h := newHarness(t, cfg, bias, tox)

	const spans = 200
	b := newBatch()
	traces := map[pcommon.SpanID]pcommon.TraceID{}
	for range spans {
		tid := randomTraceID()
		traces[b.generation(tid, "q", "an answer")] = tid
	}
	h.consume(b.td)
	h.waitSpans(spans)

	want := newTraceSampler(30)
	byID, _ := sinkSpans(h.sink)
	scored := 0
	for id, rec := range byID {
		events := evaluationEvents(rec.span)
		assert.Contains(t, events, scoring.Bias)
		_, hasTox := events[scoring.Toxicity]
		_, hasFlat := rec.span.Attributes().Get(evalconv.FlatLabel(scoring.Toxicity))
		assert.Equal(t, want.sampled(traces[id]), hasTox, "span %v", id)
		assert.Equal(t, hasTox, hasFlat, "no marker on a span outside the sample")
		if hasTox {
			scored++
		}
	}
	assert.EqualValues(t, spans, bias.calls.Load())
	assert.EqualValues(t, scored, tox.calls.Load())
	assert.InDelta(t, 0.3*spans, scored, 0.12*spans, "about 30%% of the traces")
}

func TestScorerSamplingValidated(t *testing.T) {
	_, err := loadScorers(t, []any{map[string]any{"name": "bias", "sampling": map[string]any{"percentage": 120}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "scorers::0::sampling")
	assert.Contains(t, err.Error(), "percentage")
}
