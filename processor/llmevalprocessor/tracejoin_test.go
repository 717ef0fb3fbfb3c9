package llmevalprocessor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadatatest"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// spanIDs lists the span ids of a batch.
// loadTraceContextBatch reads one batch of testdata/otlp/tracecontext.
func loadTraceContextBatch(t *testing.T, name string) ptrace.Traces {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(otlpTestdata, "tracecontext", name))
	require.NoError(t, err)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
	require.NoError(t, err)
	return td
}

func spanIDs(td ptrace.Traces) []pcommon.SpanID {
	var ids []pcommon.SpanID
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				ids = append(ids, s.SpanID())
			}
		}
	}
	return ids
}

// generationID is the span id of the batch's one generation span.
func generationID(t *testing.T, td ptrace.Traces) pcommon.SpanID {
	t.Helper()
	var ids []pcommon.SpanID
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				if genai.Classify(rs.Resource(), s) == genai.KindGeneration {
					ids = append(ids, s.SpanID())
				}
			}
		}
	}
	require.Len(t, ids, 1)
	return ids[0]
}

// TestTraceContextJoinGolden sends the two standard RAG shapes as two
// batches in both orders through the real judge client against the fake
// judge: the hallucination call carries the sibling's documents and the
// generation is scored, not not_scorable. context_wait equals a max_wait
// far beyond the test's patience, so the "context after" order passes only
// when the context's arrival dispatches the waiting generation.
func TestTraceContextJoinGolden(t *testing.T) {
	const doc = "Refunds for card payments are issued within 5 business days after the returned item reaches our warehouse."
	shapes := []struct{ name, context, generation string }{
		{"openinference", "openinference_rag_context.json", "openinference_rag_generation.json"},
		{"semconv agent", "semconv_agent_context.json", "semconv_agent_generation.json"},
	}
	for _, shape := range shapes {
		for _, contextFirst := range []bool{true, false} {
			name := shape.name + "/context_after"
			if contextFirst {
				name = shape.name + "/context_before"
			}
			t.Run(name, func(t *testing.T) {
				judge := scoringtest.New(t)
				cfg := testConfig(scoring.Hallucination)
				cfg.Judge.ClientConfig.Endpoint = judge.URL
				cfg.MaxWait = time.Hour
				cfg.TraceContext.ContextWait = time.Hour
				h, _ := judgeHarness(t, cfg)

				ctxBatch := loadTraceContextBatch(t, shape.context)
				genBatch := loadTraceContextBatch(t, shape.generation)
				genID := generationID(t, genBatch)
				want := append(spanIDs(ctxBatch), spanIDs(genBatch)...)
				order := []ptrace.Traces{genBatch, ctxBatch}
				if contextFirst {
					order = []ptrace.Traces{ctxBatch, genBatch}
				}
				for _, td := range order {
					h.consume(td)
				}
				h.waitSpans(len(want))
				h.waitIdle()

				byID, count := sinkSpans(h.sink)
				require.Len(t, byID, len(want))
				for _, id := range want {
					assert.Equal(t, 1, count[id], "span %s leaves exactly once", id)
				}
				ev := evaluationEvents(byID[genID].span)[scoring.Hallucination]
				require.NotNil(t, ev, "the generation carries a hallucination result")
				label := mustStr(t, ev, evalconv.AttrScoreLabel)
				assert.Contains(t, []string{string(scoring.LabelPass), string(scoring.LabelFail)}, label, "scored, not not_scorable")

				sent := false
				for _, c := range judge.Calls() {
					sent = sent || strings.Contains(c.Text(), doc)
				}
				assert.True(t, sent, "a hallucination judge call carries the sibling's document")
			})
		}
	}
}

// TestContextSpansPassThroughAndGenerationWaits checks that context spans
// leave at once and unchanged, and that a generation without context whose
// scorer needs it is parked (not dispatched) and still leaves exactly once.
func TestContextSpansPassThroughAndGenerationWaits(t *testing.T) {
	called := make(chan scoring.Case, 1)
	cfg := testConfig(scoring.Hallucination)
	cfg.MaxWait = time.Hour
	cfg.TraceContext.ContextWait = time.Hour
	h := newHarness(t, cfg, &fakeScorer{name: scoring.Hallucination, fn: func(_ context.Context, c scoring.Case) scoring.Result {
		called <- c
		return scoring.Result{Label: scoring.LabelPass}
	}})
	ctxBatch := loadTraceContextBatch(t, "openinference_rag_context.json")
	before := canonicalTraces([]ptrace.Traces{loadTraceContextBatch(t, "openinference_rag_context.json")})
	h.consume(ctxBatch)
	require.Equal(t, ctxBatch.SpanCount(), h.sink.SpanCount(), "context spans are forwarded in the same call")
	assert.Equal(t, before, canonicalTraces(h.sink.AllTraces()), "context spans pass through unchanged")

	b := newBatch()
	id := b.generation(randomTraceID(), "q", "a") // a trace without context
	h.consume(b.td)
	parked := h.p.store.Stats().WaitingForContext
	assert.Equal(t, 1, parked, "the generation waits for context")
	assert.Empty(t, called, "nothing dispatched while waiting")

	h.shutdown()
	_, count := sinkSpans(h.sink)
	assert.Equal(t, 1, count[id], "the waiting generation leaves once at shutdown")
}

// TestTopLevelFilter checks include and exclude: a generation that does
// not pass is forwarded untouched and not scored; one that passes is.
func TestTopLevelFilter(t *testing.T) {
	cfg := testConfig(scoring.Bias)
	cfg.Include = []AttributeMatchConfig{{Resource: map[string]ValueMatchConfig{"service.name": {Regexp: "^support-"}}}}
	cfg.Exclude = []AttributeMatchConfig{{Span: map[string]ValueMatchConfig{"gen_ai.request.model": {Equals: "gpt-3.5-turbo"}}}}
	h := newHarness(t, cfg, fixedScorer(scoring.Bias, 0.1, scoring.LabelPass))

	tests := []struct {
		name, service, model string
		scored               bool
	}{
		{"included", "support-bot", "gpt-4o-mini", true},
		{"not included", "checkout", "gpt-4o-mini", false},
		{"excluded", "support-bot", "gpt-3.5-turbo", false},
	}
	ids := map[string]pcommon.SpanID{}
	for _, tt := range tests {
		b := newBatch()
		b.td.ResourceSpans().At(0).Resource().Attributes().PutStr("service.name", tt.service)
		id := b.generation(randomTraceID(), "q", "a")
		b.spans.At(b.spans.Len()-1).Attributes().PutStr("gen_ai.request.model", tt.model)
		ids[tt.name] = id
		h.consume(b.td)
	}
	h.waitSpans(len(tests))
	h.waitIdle()
	byID, count := sinkSpans(h.sink)
	for _, tt := range tests {
		id := ids[tt.name]
		assert.Equal(t, 1, count[id], tt.name)
		_, scored := evaluationEvents(byID[id].span)[scoring.Bias]
		assert.Equal(t, tt.scored, scored, tt.name)
	}
}

func TestTopLevelFilterValidated(t *testing.T) {
	cfg := testConfig(scoring.Bias)
	cfg.Exclude = []AttributeMatchConfig{{Span: map[string]ValueMatchConfig{"gen_ai.request.model": {Regexp: "("}}}}
	err := cfg.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `exclude[0].span["gen_ai.request.model"].regexp`)
}

func TestFilterAndTraceContextKeysDecode(t *testing.T) {
	conf := confmap.NewFromStringMap(map[string]any{
		"trace_context": map[string]any{"scope": "trace", "context_wait": "1s"},
		"include":       []any{map[string]any{"resource": map[string]any{"service.name": "checkout"}}},
		"exclude":       []any{map[string]any{"span": map[string]any{"gen_ai.request.model": map[string]any{"regexp": "^gpt-3"}}}},
	})
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, conf.Unmarshal(cfg))
	assert.Equal(t, contextScopeTrace, cfg.TraceContext.Scope)
	assert.Equal(t, time.Second, cfg.TraceContext.ContextWait)
	assert.Equal(t, 10_000, cfg.TraceContext.MaxTraces, "defaults kept")
	assert.Equal(t, ValueMatchConfig{Equals: "checkout"}, cfg.Include[0].Resource["service.name"])
	assert.Equal(t, ValueMatchConfig{Regexp: "^gpt-3"}, cfg.Exclude[0].Span["gen_ai.request.model"])

	typo := confmap.NewFromStringMap(map[string]any{"trace_context": map[string]any{"max_trace": 5}})
	err := typo.Unmarshal(createDefaultConfig().(*Config))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "max_trace")
}

// TestTraceContextTelemetry checks the join, wait and index metrics: a
// generation that waited for context arriving later, then a second trace
// that evicts the first (max_traces 1).
func TestTraceContextTelemetry(t *testing.T) {
	cfg := testConfig(scoring.Hallucination)
	cfg.MaxWait = time.Hour
	cfg.TraceContext.ContextWait = time.Hour
	cfg.TraceContext.MaxTraces = 1
	h := newHarness(t, cfg, fixedScorer(scoring.Hallucination, 0.1, scoring.LabelPass))
	h.consume(loadTraceContextBatch(t, "openinference_rag_generation.json"))
	h.consume(loadTraceContextBatch(t, "openinference_rag_context.json"))
	h.waitIdle()
	ignore := metricdatatest.IgnoreTimestamp()
	metadatatest.AssertEqualProcessorLlmEvalContextWaits(t, h.tel, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(attribute.String("outcome", "arrived")), Value: 1},
	}, ignore)
	metadatatest.AssertEqualProcessorLlmEvalContextJoins(t, h.tel, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(attribute.String("source", "trace")), Value: 1},
	}, ignore)
	metadatatest.AssertEqualProcessorLlmEvalTraceContextTraces(t, h.tel, []metricdata.DataPoint[int64]{{Value: 1}}, ignore)

	b := newBatch()
	tid := randomTraceID()
	b.retrieval(tid, nextSpanID(), "another trace's document")
	h.consume(b.td)
	metadatatest.AssertEqualProcessorLlmEvalTraceContextEvictions(t, h.tel, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(attribute.String("cause", "ttl")), Value: 0},
		{Attributes: attribute.NewSet(attribute.String("cause", "max_traces")), Value: 1},
		{Attributes: attribute.NewSet(attribute.String("cause", "max_bytes")), Value: 0},
	}, ignore)
}
