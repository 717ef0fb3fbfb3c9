package llmevalprocessor

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadatatest"
	"github.com/llm-eval/llm_eval/scoring"
)

// TestPerScorerFilterAndWhen checks scorers[].include/exclude and
// when.context_present: a scorer that does not apply leaves no result and
// is not called; the others score as usual; every span leaves once.
func TestPerScorerFilterAndWhen(t *testing.T) {
	cfg := testConfig(scoring.Bias, scoring.Hallucination)
	cfg.Scorers[0].Exclude = []AttributeMatchConfig{{Span: map[string]ValueMatchConfig{"gen_ai.agent.name": {Regexp: "^internal-"}}}}
	cfg.Scorers[1].When.ContextPresent = true
	cfg.TraceContext.ContextWait = 0
	var mu sync.Mutex
	calls := map[string]int{}
	scorer := func(name string) *fakeScorer {
		return &fakeScorer{name: name, fn: func(context.Context, scoring.Case) scoring.Result {
			mu.Lock()
			calls[name]++
			mu.Unlock()
			return scoring.Result{Label: scoring.LabelPass, Score: 0.1}
		}}
	}
	h := newHarness(t, cfg, scorer(scoring.Bias), scorer(scoring.Hallucination))

	b := newBatch()
	kept := b.generation(randomTraceID(), "q", "a")
	internal := b.generation(randomTraceID(), "q", "a")
	b.spans.At(1).Attributes().PutStr("gen_ai.agent.name", "internal-router")
	tid := randomTraceID()
	withContext := b.generation(tid, "q", "a")
	b.retrieval(tid, nextSpanID(), "a retrieved document")
	b.spans.At(2).SetParentSpanID(b.spans.At(3).ParentSpanID()) // siblings
	want := b.td.SpanCount()
	h.consume(b.td)
	h.waitSpans(want)
	h.drain()

	byID, count := sinkSpans(h.sink)
	require.Len(t, byID, want)
	for id, n := range count {
		assert.Equal(t, 1, n, "span %s", id)
	}
	has := func(id [8]byte, name string) bool {
		_, ok := evaluationEvents(byID[id].span)[name]
		return ok
	}
	assert.True(t, has(kept, scoring.Bias))
	assert.False(t, has(kept, scoring.Hallucination), "no context: hallucination does not apply")
	assert.False(t, has(internal, scoring.Bias), "excluded for bias")
	assert.True(t, has(withContext, scoring.Bias))
	assert.True(t, has(withContext, scoring.Hallucination), "joined context: hallucination applies")
	assert.Equal(t, 2, calls[scoring.Bias])
	assert.Equal(t, 1, calls[scoring.Hallucination])
}

// TestUnscoredMarkersRespectScorerFilters checks that a span that stays
// in its batch unevaluated (not scorable, queue full, after shutdown) gets
// markers only from the scorers whose include/exclude it passes, as an
// evaluated span gets results only from those.
func TestUnscoredMarkersRespectScorerFilters(t *testing.T) {
	tests := []struct {
		name      string
		wantLabel string // hallucination's flat label on the internal span
		setup     func(h *harness, b *batchBuilder) pcommon.SpanID
	}{
		{
			name: "not scorable", wantLabel: "not_scorable",
			setup: func(_ *harness, b *batchBuilder) pcommon.SpanID { return b.emptyGeneration(randomTraceID()) },
		},
		{
			name: "queue full", wantLabel: "error",
			setup: func(h *harness, b *batchBuilder) pcommon.SpanID {
				first := newBatch()
				first.generation(randomTraceID(), "q", "a")
				h.consume(first.td) // takes the only queue place and hangs
				return b.generation(randomTraceID(), "q", "a")
			},
		},
		{
			name: "after shutdown", wantLabel: "error",
			setup: func(h *harness, b *batchBuilder) pcommon.SpanID {
				h.shutdown()
				return b.generation(randomTraceID(), "q", "a")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(scoring.Bias, scoring.Hallucination)
			cfg.QueueSize = 1
			cfg.Scorers[0].Exclude = []AttributeMatchConfig{{Span: map[string]ValueMatchConfig{"gen_ai.agent.name": {Regexp: "^internal-"}}}}
			h := newHarness(t, cfg, hangingScorer(scoring.Bias), hangingScorer(scoring.Hallucination))
			b := newBatch()
			id := tt.setup(h, b)
			b.spans.At(b.spans.Len()-1).Attributes().PutStr("gen_ai.agent.name", "internal-router")
			h.consume(b.td)

			byID, count := sinkSpans(h.sink)
			require.Equal(t, 1, count[id], "the span stays in its batch")
			events := evaluationEvents(byID[id].span)
			assert.NotContains(t, events, scoring.Bias, "bias is excluded for this span")
			require.Contains(t, events, scoring.Hallucination)
			attrs := byID[id].span.Attributes()
			assert.Equal(t, tt.wantLabel, mustStr(t, attrs, evalconv.FlatLabel(scoring.Hallucination)))
			_, flat := attrs.Get(evalconv.FlatLabel(scoring.Bias))
			assert.False(t, flat, "no flat bias label")
		})
	}
}

func TestScorerSelectionKeys(t *testing.T) {
	decode := func(t *testing.T, scorer map[string]any) (*Config, error) {
		cfg := createDefaultConfig().(*Config)
		cfg.Judge.ClientConfig.Endpoint = "http://localhost:1/v1"
		cfg.Judge.Model = "m"
		conf := confmap.NewFromStringMap(map[string]any{"scorers": []any{scorer}})
		if err := conf.Unmarshal(cfg); err != nil {
			return nil, err
		}
		return cfg, confmap.Validate(cfg)
	}
	cfg, err := decode(t, map[string]any{
		"name":    "hallucination",
		"when":    map[string]any{"context_present": true},
		"include": []any{map[string]any{"span": map[string]any{"gen_ai.agent.name": map[string]any{"regexp": "^support-"}}}},
	})
	require.NoError(t, err)
	sc := cfg.Scorers[0]
	assert.Equal(t, []string{targetGeneration}, sc.Targets, "default target")
	assert.True(t, sc.When.ContextPresent)
	assert.Equal(t, "^support-", sc.Include[0].Span["gen_ai.agent.name"].Regexp)

	_, err = decode(t, map[string]any{"name": "bias", "exclude": []any{map[string]any{"span": map[string]any{"k": map[string]any{"regexp": "("}}}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `scorers::0: exclude[0].span["k"].regexp`)

	cfg, err = decode(t, map[string]any{"name": "bias", "targets": []any{"agent"}})
	require.NoError(t, err)
	assert.Equal(t, []string{targetAgent}, cfg.Scorers[0].Targets, "a given list replaces the default")

	_, err = decode(t, map[string]any{"name": "bias", "targets": []any{"agents"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `scorers::0: targets[0]: "agents" is not one of generation, agent`)
}

// TestAgentTarget scores the semconv agent trace's invoke_agent span with
// scorers targeting agent: the user's request, the final answer and every
// retrieval and tool result below it; the chat span is scored only by the
// scorers targeting generation. Every span leaves once.
func TestAgentTarget(t *testing.T) {
	const (
		question = "I returned order 1042. When will I get my money back?"
		answer   = "Your order 1042 was paid by card and reached our warehouse on 20 November, so the refund is issued within 5 business days of that date."
		doc1     = "Refunds for card payments are issued within 5 business days after the returned item reaches our warehouse."
		doc2     = "Orders paid by bank transfer are refunded within 10 business days."
		tool     = `{"order_id":"1042","payment":"card","received_at_warehouse":"2026-11-20","status":"returned"}`
	)
	cfg := testConfig(scoring.Bias, scoring.Hallucination)
	cfg.Scorers[0].Targets = []string{targetAgent}
	cfg.Scorers[1].Targets = []string{targetGeneration, targetAgent}
	var mu sync.Mutex
	cases := map[string][]scoring.Case{} // by scorer
	record := func(name string) *fakeScorer {
		return &fakeScorer{name: name, fn: func(_ context.Context, c scoring.Case) scoring.Result {
			mu.Lock()
			cases[name] = append(cases[name], c)
			mu.Unlock()
			return scoring.Result{Label: scoring.LabelPass, Score: 0.1}
		}}
	}
	h := newHarness(t, cfg, record(scoring.Bias), record(scoring.Hallucination))
	consumeAgentTrace(t, h)
	require.Len(t, cases[scoring.Bias], 1, "bias scores the agent span only")
	agentCase := cases[scoring.Bias][0]
	assert.Equal(t, question, agentCase.Input)
	assert.Equal(t, answer, agentCase.Output)
	assert.Equal(t, []string{doc1, doc2, tool}, agentCase.Context)
	require.Len(t, cases[scoring.Hallucination], 2, "hallucination scores the chat span and the agent span")
	for _, c := range cases[scoring.Hallucination] {
		assert.Contains(t, c.Context, doc1)
	}
	// The chat span and the agent span are both candidates (sampling is 100 %).
	ignore := metricdatatest.IgnoreTimestamp()
	metadatatest.AssertEqualProcessorLlmEvalSpansSelected(t, h.tel, []metricdata.DataPoint[int64]{{Value: 2}}, ignore)
	metadatatest.AssertEqualProcessorLlmEvalSpansSampled(t, h.tel, []metricdata.DataPoint[int64]{{Value: 2}}, ignore)
}
