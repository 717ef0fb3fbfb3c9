package llmevaleventsconnector // import "github.com/llm-eval/llm_eval/connector/llmevaleventsconnector"

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/internal/evalconv"
)

// spanKeys are the attributes of the evaluated span a record carries: the
// model keys and the agent name.
var spanKeys = append(evalconv.ModelKeys[:], evalconv.AttrAgentName)

// resultsToLogs writes every gen_ai.evaluation.result span event of td as a
// log record, under a copy of its span's resource and scope; observed is
// the records' observed time.
func resultsToLogs(td ptrace.Traces, observed pcommon.Timestamp) plog.Logs {
	ld := plog.NewLogs()
	for _, rs := range td.ResourceSpans().All() {
		var rl plog.ResourceLogs
		haveResource := false
		for _, ss := range rs.ScopeSpans().All() {
			var records plog.LogRecordSlice
			haveScope := false
			for _, span := range ss.Spans().All() {
				for _, ev := range span.Events().All() {
					if ev.Name() != evalconv.EventName {
						continue
					}
					if !haveResource {
						rl = ld.ResourceLogs().AppendEmpty()
						rs.Resource().CopyTo(rl.Resource())
						rl.SetSchemaUrl(rs.SchemaUrl())
						haveResource = true
					}
					if !haveScope {
						sl := rl.ScopeLogs().AppendEmpty()
						ss.Scope().CopyTo(sl.Scope())
						sl.SetSchemaUrl(ss.SchemaUrl())
						records = sl.LogRecords()
						haveScope = true
					}
					writeRecord(records.AppendEmpty(), span, ev, observed)
				}
			}
		}
	}
	return ld
}

// writeRecord fills lr from one evaluation event of span.
func writeRecord(lr plog.LogRecord, span ptrace.Span, ev ptrace.SpanEvent, observed pcommon.Timestamp) {
	lr.SetEventName(evalconv.EventName)
	ev.Attributes().CopyTo(lr.Attributes())
	// The model and the agent name, so that metrics made from the records
	// carry the same labels as metrics made from the span events.
	for _, k := range spanKeys {
		if v, ok := span.Attributes().Get(k); ok {
			if _, set := lr.Attributes().Get(k); !set {
				v.CopyTo(lr.Attributes().PutEmpty(k))
			}
		}
	}
	lr.SetTraceID(span.TraceID())
	lr.SetSpanID(evaluatedSpanID(span))
	ts := ev.Timestamp()
	if ts == 0 {
		ts = span.EndTimestamp()
	}
	lr.SetTimestamp(ts)
	lr.SetObservedTimestamp(observed)
}

// evaluatedSpanID is the id of the span a result is about. A result that
// arrived after its span had left the llm_eval processor rides on a child
// span of the evaluated one; the record names the evaluated span, as a
// result that arrived in time would.
func evaluatedSpanID(span ptrace.Span) pcommon.SpanID {
	if span.Name() != evalconv.LateSpanName || span.ParentSpanID().IsEmpty() {
		return span.SpanID()
	}
	op, ok := span.Attributes().Get(evalconv.AttrOperationName)
	if !ok || op.Str() != evalconv.OperationEvaluation {
		return span.SpanID()
	}
	return span.ParentSpanID()
}
