package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/llm-eval/llm_eval/internal/evalconv"
)

func TestContentlessBatch(t *testing.T) {
	tests := []struct {
		name                 string
		services, less, with int
		wantPerService       map[string]int
	}{
		{"spread over services", 5, 167, 1, map[string]int{
			"capture-off-1": 34, "capture-off-2": 34, "capture-off-3": 33, "capture-off-4": 33, "capture-off-5": 33, contentService: 1}},
		{"fewer spans than services", 5, 2, 0, map[string]int{"capture-off-1": 1, "capture-off-2": 1}},
		{"content only", 3, 0, 2, map[string]int{contentService: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSender("http://unused", 100, shapeChat)
			td, lessIDs, contentIDs := s.contentlessBatch(tt.services, tt.less, tt.with)
			assert.Len(t, lessIDs, tt.less)
			assert.Len(t, contentIDs, tt.with)
			got := map[string]int{}
			seen := map[[8]byte]bool{}
			for _, rs := range td.ResourceSpans().All() {
				svc, _ := rs.Resource().Attributes().Get("service.name")
				for _, ss := range rs.ScopeSpans().All() {
					assert.Equal(t, contentlessLibrary, ss.Scope().Name())
					for _, span := range ss.Spans().All() {
						got[svc.Str()]++
						assert.False(t, seen[span.SpanID()], "span ids are unique")
						seen[span.SpanID()] = true
						_, hasInput := span.Attributes().Get("gen_ai.input.messages")
						_, hasOutput := span.Attributes().Get("gen_ai.output.messages")
						assert.Equal(t, svc.Str() == contentService, hasInput && hasOutput, "only the content service's spans carry content")
					}
				}
			}
			assert.Equal(t, tt.wantPerService, got)
		})
	}
}

// evaluatedSpan appends a span with one evaluation event per result: a
// score, or an error type when errType is set.
func evaluatedSpan(spans ptrace.SpanSlice, id, parent pcommon.SpanID, late bool, errTypes ...string) {
	span := spans.AppendEmpty()
	span.SetSpanID(id)
	span.SetParentSpanID(parent)
	if late {
		span.Attributes().PutStr("gen_ai.operation.name", evalconv.OperationEvaluation)
	}
	for _, e := range errTypes {
		ev := span.Events().AppendEmpty()
		ev.SetName(evalconv.EventName)
		if e == "" {
			ev.Attributes().PutDouble(evalconv.AttrScoreValue, 1)
			continue
		}
		ev.Attributes().PutStr(evalconv.AttrErrorType, e)
	}
}

func TestSinkScoredSpans(t *testing.T) {
	scored, partly, lateScored := pcommon.SpanID{1}, pcommon.SpanID{2}, pcommon.SpanID{3}
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	evaluatedSpan(spans, scored, pcommon.SpanID{}, false, "", "", "")
	evaluatedSpan(spans, partly, pcommon.SpanID{}, false, "", "queue_full", "queue_full")
	evaluatedSpan(spans, lateScored, pcommon.SpanID{}, false)
	// The results of lateScored arrive on a late evaluation span, its child.
	evaluatedSpan(spans, pcommon.SpanID{9}, lateScored, true, "", "", "")
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	require.NoError(t, err)

	s := &sink{seen: map[[8]byte]int{}, scored: map[[8]byte]int{}, unscored: map[[8]byte][]string{}}
	rec := httptest.NewRecorder()
	s.handle(rec, httptest.NewRequest(http.MethodPost, "/v1/traces", bytes.NewReader(body)))
	require.Equal(t, http.StatusOK, rec.Code)

	ids := map[[8]byte]struct{}{scored: {}, partly: {}, lateScored: {}}
	n, errs := s.scoredSpans(ids, loadScorers)
	assert.Equal(t, 2, n, "the span with three scores and the one scored on a late span")
	assert.Equal(t, map[string]int{"queue_full": 2}, errs)
	assert.Equal(t, 3, s.counts().Unique, "the late span is not an original span")
}

func TestWindowMiB(t *testing.T) {
	const mib = 1 << 20
	series := []int64{10 * mib, 20 * mib}
	for i := 0; i < 12; i++ {
		series = append(series, 40*mib)
	}
	tests := []struct {
		name   string
		series []int64
		first  bool
		want   float64
	}{
		{"empty", nil, true, 0},
		{"shorter than a minute", []int64{10 * mib, 30 * mib}, false, 20},
		{"first minute", series, true, (10 + 20 + 10*40) / 12.0},
		{"last minute", series, false, 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.InDelta(t, tt.want, windowMiB(tt.series, tt.first), 1e-9)
		})
	}
}
