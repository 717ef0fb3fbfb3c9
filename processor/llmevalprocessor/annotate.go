package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"encoding/binary"
	"math/rand/v2"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
)

// annotateSpan writes one gen_ai.evaluation.result event and the flat
// llm_eval.<name>.* attributes for the result onto span.
func annotateSpan(span ptrace.Span, r evalstore.Result, responseID string, redact func(string) string) {
	o := newOutcome(r.Scorer, r.Result, redact)
	ev := span.Events().AppendEmpty()
	ev.SetName(evalconv.EventName)
	ev.SetTimestamp(pcommon.NewTimestampFromTime(r.At))
	o.putEventAttributes(ev.Attributes(), responseID)
	o.putFlatAttributes(span.Attributes())
}

// lateTemplate keeps the resource and scope of a span that leaves before
// all its results are in, for the child spans that carry the late results.
func lateTemplate(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans) ptrace.Traces {
	td := ptrace.NewTraces()
	out := td.ResourceSpans().AppendEmpty()
	rs.Resource().CopyTo(out.Resource())
	out.SetSchemaUrl(rs.SchemaUrl())
	outScope := out.ScopeSpans().AppendEmpty()
	ss.Scope().CopyTo(outScope.Scope())
	outScope.SetSchemaUrl(ss.SchemaUrl())
	return td
}

// newLateSpan builds a child span of the evaluated span carrying a result
// that arrived after the span had been forwarded.
func newLateSpan(template ptrace.Traces, of evaluatedSpan, r evalstore.Result, redact func(string) string) ptrace.Traces {
	td := ptrace.NewTraces()
	template.CopyTo(td)
	span := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().AppendEmpty()
	span.SetTraceID(of.traceID)
	span.SetSpanID(newSpanID())
	span.SetParentSpanID(of.spanID)
	span.SetName(evalconv.LateSpanName)
	span.SetKind(ptrace.SpanKindInternal)
	ts := pcommon.NewTimestampFromTime(r.At)
	span.SetStartTimestamp(ts)
	span.SetEndTimestamp(ts)
	attrs := span.Attributes()
	attrs.PutStr(evalconv.AttrOperationName, evalconv.OperationEvaluation)
	attrs.PutStr(evalconv.AttrName, r.Scorer)
	if of.model != "" {
		attrs.PutStr(evalconv.AttrRequestModel, of.model)
	}
	if of.responseID != "" {
		attrs.PutStr(evalconv.AttrResponseID, of.responseID)
	}
	if of.agentName != "" {
		attrs.PutStr(evalconv.AttrAgentName, of.agentName)
	}
	annotateSpan(span, r, of.responseID, redact)
	return td
}

// newSpanID returns a random, non-zero span id.
func newSpanID() pcommon.SpanID {
	var id pcommon.SpanID
	for id.IsEmpty() {
		binary.BigEndian.PutUint64(id[:], rand.Uint64())
	}
	return id
}

// evaluatedSpan identifies the span a late result belongs to.
type evaluatedSpan struct {
	traceID    pcommon.TraceID
	spanID     pcommon.SpanID
	model      string
	responseID string
	agentName  string // gen_ai.agent.name, repeated on late result spans
}
