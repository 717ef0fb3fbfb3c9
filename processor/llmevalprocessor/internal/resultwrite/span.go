package resultwrite // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/resultwrite"

import (
	"encoding/binary"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/scoring"
)

// AnnotateSpan writes one gen_ai.evaluation.result event and the flat
// llm_eval.<name>.* attributes for one scorer's result r, produced at,
// onto span.
func AnnotateSpan(span ptrace.Span, scorer string, r scoring.Result, at time.Time, responseID string, redact func(string) string) {
	o := newOutcome(scorer, r, redact)
	ev := span.Events().AppendEmpty()
	ev.SetName(evalconv.EventName)
	ev.SetTimestamp(pcommon.NewTimestampFromTime(at))
	o.putEventAttributes(ev.Attributes(), responseID)
	o.putFlatAttributes(span.Attributes())
}

// LateTemplate keeps the resource and scope of a span that leaves before
// all its results are in, for the child spans that carry the late results.
func LateTemplate(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans) ptrace.Traces {
	td := ptrace.NewTraces()
	out := td.ResourceSpans().AppendEmpty()
	rs.Resource().CopyTo(out.Resource())
	out.SetSchemaUrl(rs.SchemaUrl())
	outScope := out.ScopeSpans().AppendEmpty()
	ss.Scope().CopyTo(outScope.Scope())
	outScope.SetSchemaUrl(ss.SchemaUrl())
	return td
}

// NewLateSpan builds a child span of the evaluated span carrying a result
// that arrived after the span had been forwarded.
func NewLateSpan(template ptrace.Traces, of Evaluated, scorer string, r scoring.Result, at time.Time, redact func(string) string) ptrace.Traces {
	td := ptrace.NewTraces()
	template.CopyTo(td)
	span := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().AppendEmpty()
	span.SetTraceID(of.TraceID)
	span.SetSpanID(newSpanID())
	span.SetParentSpanID(of.SpanID)
	span.SetName(evalconv.LateSpanName)
	span.SetKind(ptrace.SpanKindInternal)
	ts := pcommon.NewTimestampFromTime(at)
	span.SetStartTimestamp(ts)
	span.SetEndTimestamp(ts)
	attrs := span.Attributes()
	attrs.PutStr(evalconv.AttrOperationName, evalconv.OperationEvaluation)
	attrs.PutStr(evalconv.AttrName, scorer)
	if of.Model != "" {
		attrs.PutStr(evalconv.AttrRequestModel, of.Model)
	}
	if of.ResponseID != "" {
		attrs.PutStr(evalconv.AttrResponseID, of.ResponseID)
	}
	if of.AgentName != "" {
		attrs.PutStr(evalconv.AttrAgentName, of.AgentName)
	}
	AnnotateSpan(span, scorer, r, at, of.ResponseID, redact)
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

// Evaluated identifies the span a late result belongs to.
type Evaluated struct {
	TraceID    pcommon.TraceID
	SpanID     pcommon.SpanID
	Model      string
	ResponseID string
	AgentName  string // gen_ai.agent.name, repeated on late result spans
}
