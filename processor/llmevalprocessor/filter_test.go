package llmevalprocessor

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"

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

	_, err = decode(t, map[string]any{"name": "bias", "targets": []any{"agent"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "scorers::0: targets: agent is not supported yet")
}
