package llmevalprocessor

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadatatest"
	"github.com/llm-eval/llm_eval/scoring"
)

// retrieval adds a semconv retrieval span with one document under parent.
func (b *batchBuilder) retrieval(traceID pcommon.TraceID, parent pcommon.SpanID, doc string) pcommon.SpanID {
	s := b.spans.AppendEmpty()
	s.SetTraceID(traceID)
	s.SetSpanID(nextSpanID())
	s.SetParentSpanID(parent)
	s.SetName("retrieval kb")
	s.Attributes().PutStr("gen_ai.operation.name", "retrieval")
	docs, _ := json.Marshal([]map[string]any{{"id": "d", "content": doc}})
	s.Attributes().PutStr("gen_ai.retrieval.documents", string(docs))
	return s.SpanID()
}

// TestTraceContextBadInputAndBounds feeds thousands of retrieval spans with
// large documents, a parent-id cycle, a generation whose parent never
// arrives and a retrieval span after the generation left: the index stays
// within max_bytes, nothing panics and every span leaves exactly once.
func TestTraceContextBadInputAndBounds(t *testing.T) {
	cfg := testConfig(scoring.Hallucination)
	cfg.TraceContext.MaxBytes = 1 << 20
	cfg.TraceContext.MaxTraces = 4
	cfg.TraceContext.ContextWait = 0
	var seen []int
	h := newHarness(t, cfg, &fakeScorer{name: scoring.Hallucination, fn: func(_ context.Context, c scoring.Case) scoring.Result {
		seen = append(seen, len(c.Context))
		return scoring.Result{Label: scoring.LabelPass}
	}})

	tid := randomTraceID()
	b := newBatch()
	root := nextSpanID()
	big := strings.Repeat("refund policy text ", 1800) // ~34 KB, cut to 32 KiB by the index
	for i := range 2000 {
		b.retrieval(tid, root, fmt.Sprintf("%d %s", i, big))
	}
	// Two spans that are each other's parent.
	x, y := nextSpanID(), nextSpanID()
	cx := b.spans.AppendEmpty()
	cx.SetTraceID(tid)
	cx.SetSpanID(x)
	cx.SetParentSpanID(y)
	cy := b.spans.AppendEmpty()
	cy.SetTraceID(tid)
	cy.SetSpanID(y)
	cy.SetParentSpanID(x)
	b.retrieval(tid, x, "inside the cycle")
	// The generation's parent never arrives.
	gen := b.generation(tid, "How long do refunds take?", "Five days.")
	b.spans.At(b.spans.Len() - 1).SetParentSpanID(nextSpanID())
	want := b.td.SpanCount()
	h.consume(b.td)
	h.waitSpans(want)
	h.waitIdle()

	st := h.p.join.Index.Stats()
	assert.LessOrEqual(t, st.Bytes, cfg.TraceContext.MaxBytes, "the index stays within max_bytes")
	assert.Positive(t, st.DroppedDocuments+st.EvictedMaxBytes, "the bound was hit and counted")
	// Every kept document was over 32 KiB and the trace's 1 MiB filled
	// after a few dozen: both show in the limited counter.
	assert.Positive(t, st.TruncatedDocuments, "documents cut to 32 KiB")
	assert.Greater(t, st.DroppedDocuments, uint64(1000), "documents past the trace's bound")
	limit := func(l string) attribute.Set { return attribute.NewSet(attribute.String("limit", l)) }
	metadatatest.AssertEqualProcessorLlmEvalTraceContextLimited(t, h.tel, []metricdata.DataPoint[int64]{
		{Attributes: limit("document_truncated"), Value: int64(st.TruncatedDocuments)},
		{Attributes: limit("document_dropped"), Value: int64(st.DroppedDocuments)},
		{Attributes: limit("link_dropped"), Value: int64(st.DroppedLinks)},
	}, metricdatatest.IgnoreTimestamp())

	// A retrieval span after the generation left passes through.
	late := newBatch()
	lateID := late.retrieval(tid, root, "arrived after the generation")
	h.consume(late.td)
	h.drain()

	byID, count := sinkSpans(h.sink)
	assert.Len(t, byID, want+1)
	for id, n := range count {
		assert.Equal(t, 1, n, "span %s", id)
	}
	assert.Equal(t, 1, count[gen])
	assert.Equal(t, 1, count[lateID])
	require.Len(t, seen, 1)
}
