package resultwrite // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/resultwrite"

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/logjoin"
	"github.com/llm-eval/llm_eval/scoring"
)

// NewResultLogs returns empty logs under a copy of the evaluated record's
// resource and scope (with their schema URLs), and the slice its result
// records go into.
func NewResultLogs(rl plog.ResourceLogs, sl plog.ScopeLogs) (plog.Logs, plog.LogRecordSlice) {
	return logjoin.NewLogsUnder(rl, sl)
}

// AppendResultRecord appends the gen_ai.evaluation.result log record of
// one scorer's result on the call of: the call's trace and span id, the
// attributes of the span event (same outcome), gen_ai.request.model when
// known, stamped at. A failed evaluation is a warning, any verdict info.
func AppendResultRecord(dst plog.LogRecordSlice, of Evaluated, scorer string, r scoring.Result, at time.Time, redact func(string) string) plog.LogRecord {
	v := newOutcome(scorer, r, redact)
	rec := dst.AppendEmpty()
	rec.SetEventName(evalconv.EventName)
	ts := pcommon.NewTimestampFromTime(at)
	rec.SetTimestamp(ts)
	rec.SetObservedTimestamp(ts)
	rec.SetTraceID(of.TraceID)
	rec.SetSpanID(of.SpanID)
	if v.label == scoring.LabelError {
		rec.SetSeverityNumber(plog.SeverityNumberWarn)
	} else {
		rec.SetSeverityNumber(plog.SeverityNumberInfo)
	}
	attrs := rec.Attributes()
	v.putEventAttributes(attrs, of.ResponseID)
	if of.Model != "" {
		attrs.PutStr(evalconv.AttrRequestModel, of.Model)
	}
	return rec
}
