package resultwrite

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/scoring"
)

const testKey = "sk-test-key"

func redactTestKey(s string) string { return strings.ReplaceAll(s, testKey, "[REDACTED]") }

// outcomeCases cover every branch of what a result says.
var outcomeCases = []struct {
	name      string
	result    scoring.Result
	wantEvent map[string]any // event attributes, with response id "chatcmpl-1"
	wantFlat  map[string]any // llm_eval.bias.* attributes
}{
	{
		name:   "pass",
		result: scoring.Result{Label: scoring.LabelPass, Score: 0.1, Reason: "no bias"},
		wantEvent: map[string]any{evalconv.AttrName: "bias", evalconv.AttrScoreValue: 0.1, evalconv.AttrScoreLabel: "pass",
			evalconv.AttrExplanation: "no bias", evalconv.AttrResponseID: "chatcmpl-1"},
		wantFlat: map[string]any{"llm_eval.bias.score": 0.1, "llm_eval.bias.label": "pass", "llm_eval.bias.reason": "no bias"},
	},
	{
		name:   "who judged",
		result: scoring.Result{Label: scoring.LabelPass, Score: 0.1, Reason: "no bias", JudgeModel: "gpt-4o-mini", PromptVersion: "0123456789ab"},
		wantEvent: map[string]any{evalconv.AttrName: "bias", evalconv.AttrScoreValue: 0.1, evalconv.AttrScoreLabel: "pass",
			evalconv.AttrExplanation: "no bias", evalconv.AttrResponseID: "chatcmpl-1",
			"llm_eval.judge.model": "gpt-4o-mini", "llm_eval.prompt.version": "0123456789ab"},
		wantFlat: map[string]any{"llm_eval.bias.score": 0.1, "llm_eval.bias.label": "pass", "llm_eval.bias.reason": "no bias"},
	},
	{
		name: "error after a fallback judge answered part",
		result: scoring.Result{Label: scoring.LabelError, JudgeModel: "big,small", PromptVersion: "0123456789ab",
			Err: &scoring.Error{Type: scoring.ErrorBudgetExhausted, Err: errors.New("spent")}},
		wantEvent: map[string]any{evalconv.AttrName: "bias", evalconv.AttrErrorType: "budget_exhausted",
			evalconv.AttrExplanation: "budget_exhausted: spent", evalconv.AttrResponseID: "chatcmpl-1",
			"llm_eval.judge.model": "big,small", "llm_eval.prompt.version": "0123456789ab"},
		wantFlat: map[string]any{"llm_eval.bias.label": "error", "llm_eval.bias.reason": "budget_exhausted: spent"},
	},
	{
		name:   "fail without reason",
		result: scoring.Result{Label: scoring.LabelFail, Score: 0.9},
		wantEvent: map[string]any{evalconv.AttrName: "bias", evalconv.AttrScoreValue: 0.9, evalconv.AttrScoreLabel: "fail",
			evalconv.AttrResponseID: "chatcmpl-1"},
		wantFlat: map[string]any{"llm_eval.bias.score": 0.9, "llm_eval.bias.label": "fail"},
	},
	{
		name:   "not scorable: no score",
		result: scoring.Result{Label: scoring.LabelNotScorable, Score: 0.5, Reason: "no output content"},
		wantEvent: map[string]any{evalconv.AttrName: "bias", evalconv.AttrScoreLabel: "not_scorable",
			evalconv.AttrExplanation: "no output content", evalconv.AttrResponseID: "chatcmpl-1"},
		wantFlat: map[string]any{"llm_eval.bias.label": "not_scorable", "llm_eval.bias.reason": "no output content"},
	},
	{
		name:   "typed error, key redacted",
		result: scoring.Result{Label: scoring.LabelError, Err: &scoring.Error{Type: scoring.ErrorJudgeUnavailable, Err: errors.New("401 for key " + testKey)}},
		wantEvent: map[string]any{evalconv.AttrName: "bias", evalconv.AttrErrorType: string(scoring.ErrorJudgeUnavailable),
			evalconv.AttrExplanation: (&scoring.Error{Type: scoring.ErrorJudgeUnavailable, Err: errors.New("401 for key [REDACTED]")}).Error(),
			evalconv.AttrResponseID:  "chatcmpl-1"},
		wantFlat: map[string]any{"llm_eval.bias.label": "error",
			"llm_eval.bias.reason": (&scoring.Error{Type: scoring.ErrorJudgeUnavailable, Err: errors.New("401 for key [REDACTED]")}).Error()},
	},
	{
		name:   "untyped error",
		result: scoring.Result{Label: scoring.LabelError, Score: 1, Err: errors.New("boom")},
		wantEvent: map[string]any{evalconv.AttrName: "bias", evalconv.AttrErrorType: "_OTHER",
			evalconv.AttrExplanation: "boom", evalconv.AttrResponseID: "chatcmpl-1"},
		wantFlat: map[string]any{"llm_eval.bias.label": "error", "llm_eval.bias.reason": "boom"},
	},
	{
		name:   "unknown label is an error with its reason",
		result: scoring.Result{Label: "maybe", Reason: "judge said maybe"},
		wantEvent: map[string]any{evalconv.AttrName: "bias", evalconv.AttrErrorType: "_OTHER",
			evalconv.AttrExplanation: "judge said maybe", evalconv.AttrResponseID: "chatcmpl-1"},
		wantFlat: map[string]any{"llm_eval.bias.label": "error", "llm_eval.bias.reason": "judge said maybe"},
	},
	{
		name:   "no label at all",
		result: scoring.Result{},
		wantEvent: map[string]any{evalconv.AttrName: "bias", evalconv.AttrErrorType: "_OTHER",
			evalconv.AttrExplanation: "scorer returned no verdict", evalconv.AttrResponseID: "chatcmpl-1"},
		wantFlat: map[string]any{"llm_eval.bias.label": "error", "llm_eval.bias.reason": "scorer returned no verdict"},
	},
}

func TestOutcomeAttributes(t *testing.T) {
	for _, tt := range outcomeCases {
		t.Run(tt.name, func(t *testing.T) {
			v := newOutcome(evalstore.Result{Scorer: "bias", Result: tt.result}, redactTestKey)
			event := pcommon.NewMap()
			v.putEventAttributes(event, "chatcmpl-1")
			assert.Equal(t, tt.wantEvent, event.AsRaw())
			flat := pcommon.NewMap()
			v.putFlatAttributes(flat)
			assert.Equal(t, tt.wantFlat, flat.AsRaw())
		})
	}
}

// TestOutcomeMatchesSpanAnnotation keeps the log records and the span
// annotation saying the same thing for every kind of result.
func TestOutcomeMatchesSpanAnnotation(t *testing.T) {
	for _, tt := range outcomeCases {
		t.Run(tt.name, func(t *testing.T) {
			span := ptrace.NewSpan()
			AnnotateSpan(span, evalstore.Result{Scorer: "bias", Result: tt.result, At: time.Unix(1, 0)}, "chatcmpl-1", redactTestKey)
			require.Equal(t, 1, span.Events().Len())

			records := plog.NewLogRecordSlice()
			rec := AppendResultRecord(records, Evaluated{ResponseID: "chatcmpl-1"}, evalstore.Result{Scorer: "bias", Result: tt.result, At: time.Unix(1, 0)}, redactTestKey)
			assert.Equal(t, span.Events().At(0).Attributes().AsRaw(), rec.Attributes().AsRaw())

			flat := pcommon.NewMap()
			newOutcome(evalstore.Result{Scorer: "bias", Result: tt.result}, redactTestKey).putFlatAttributes(flat)
			assert.Equal(t, span.Attributes().AsRaw(), flat.AsRaw())
		})
	}
}

func TestResultRecords(t *testing.T) {
	of := Evaluated{
		TraceID: pcommon.TraceID{0x5b, 0x8e, 1}, SpanID: pcommon.SpanID{0xee, 2},
		Model: "gpt-4o-mini", ResponseID: "chatcmpl-LOGS1",
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	records := plog.NewLogRecordSlice()
	AppendResultRecord(records, of, evalstore.Result{Scorer: "bias", At: at, Result: scoring.Result{Label: scoring.LabelPass, Score: 0.2, Reason: "neutral"}}, redactTestKey)
	AppendResultRecord(records, of, evalstore.Result{Scorer: "hallucination", At: at, Result: scoring.Result{Label: scoring.LabelError,
		Err: &scoring.Error{Type: scoring.ErrorJudgeTimeout, Err: errors.New("deadline")}}}, redactTestKey)
	AppendResultRecord(records, Evaluated{TraceID: of.TraceID, SpanID: of.SpanID},
		evalstore.Result{Scorer: "toxicity", At: at, Result: scoring.Result{Label: scoring.LabelNotScorable, Reason: "no output content"}}, redactTestKey)
	require.Equal(t, 3, records.Len())

	want := []struct {
		severity plog.SeverityNumber
		attrs    map[string]any
	}{
		{plog.SeverityNumberInfo, map[string]any{evalconv.AttrName: "bias", evalconv.AttrScoreValue: 0.2, evalconv.AttrScoreLabel: "pass",
			evalconv.AttrExplanation: "neutral", evalconv.AttrResponseID: "chatcmpl-LOGS1", evalconv.AttrRequestModel: "gpt-4o-mini"}},
		{plog.SeverityNumberWarn, map[string]any{evalconv.AttrName: "hallucination", evalconv.AttrErrorType: string(scoring.ErrorJudgeTimeout),
			evalconv.AttrExplanation: (&scoring.Error{Type: scoring.ErrorJudgeTimeout, Err: errors.New("deadline")}).Error(),
			evalconv.AttrResponseID:  "chatcmpl-LOGS1", evalconv.AttrRequestModel: "gpt-4o-mini"}},
		{plog.SeverityNumberInfo, map[string]any{evalconv.AttrName: "toxicity", evalconv.AttrScoreLabel: "not_scorable",
			evalconv.AttrExplanation: "no output content"}},
	}
	for i, w := range want {
		rec := records.At(i)
		assert.Equal(t, evalconv.EventName, rec.EventName())
		assert.Equal(t, of.TraceID, rec.TraceID())
		assert.Equal(t, of.SpanID, rec.SpanID())
		assert.Equal(t, pcommon.NewTimestampFromTime(at), rec.Timestamp())
		assert.Equal(t, pcommon.NewTimestampFromTime(at), rec.ObservedTimestamp())
		assert.Equal(t, w.severity, rec.SeverityNumber())
		assert.Equal(t, pcommon.ValueTypeEmpty, rec.Body().Type())
		assert.Equal(t, w.attrs, rec.Attributes().AsRaw())
	}
}
