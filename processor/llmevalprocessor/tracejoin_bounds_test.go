package llmevalprocessor

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadatatest"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/hallucination"
	"github.com/llm-eval/llm_eval/scoring/openai"
	"github.com/llm-eval/llm_eval/scoring/scorers"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
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

// TestIndexCutDocumentMarksHallucinationTruncated checks the path of a
// document the trace context index cut to 32 KiB: it reaches the
// hallucination judge ending with llm_eval's marker, judged in chunks of
// max_input_chars, and the result is flagged truncated (issue 36 item 1).
func TestIndexCutDocumentMarksHallucinationTruncated(t *testing.T) {
	srv := scoringtest.New(t)
	judge, err := openai.NewJudge(openai.Config{BaseURL: srv.URL, Model: "scripted", HTTPClient: http.DefaultClient})
	require.NoError(t, err)
	s, err := scorers.New(scoring.Hallucination, judge, scoring.Options{ReasonMode: scoring.ReasonSummary, MaxInputChars: defaultMaxInputChars})
	require.NoError(t, err)
	rec := &resultRecorder{results: map[string][]scoring.Result{}}
	cfg := testConfig(scoring.Hallucination)
	cfg.TraceContext.ContextWait = 100 * time.Millisecond
	h := newHarness(t, cfg, recordingScorer{Scorer: s, r: rec})

	tid := randomTraceID()
	b := newBatch()
	root := nextSpanID()
	b.retrieval(tid, root, strings.Repeat("Refunds take five days. ", 1500)) // ~36 KB, over 32 KiB
	b.generation(tid, "How long do refunds take?", "Refunds take five days.")
	b.spans.At(b.spans.Len() - 1).SetParentSpanID(root) // the retrieval span's sibling
	want := b.td.SpanCount()
	h.consume(b.td)
	h.waitSpans(want)
	h.drain()

	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.Len(t, rec.results[scoring.Hallucination], 1)
	res := rec.results[scoring.Hallucination][0]
	require.True(t, res.Scored(), "%s %v", res.Label, res.Err)
	assert.True(t, res.Truncated, "a document cut upstream marks the result truncated")
	var sawMarker bool
	chunks := 0
	for _, c := range srv.Calls() {
		if c.Step == hallucination.SchemaVerdicts {
			chunks++
			sawMarker = sawMarker || strings.Contains(c.Text(), strings.TrimSpace(scoring.TruncationMarker))
		}
	}
	assert.True(t, sawMarker, "the judge sees the index's marker")
	assert.GreaterOrEqual(t, chunks, 1)
}
