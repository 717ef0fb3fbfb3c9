package resultwrite // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/resultwrite"

import (
	"encoding/binary"
	"math/rand/v2"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/scoring"
)

// outcome is what one scorer's result says, decided once for every place
// it is written: the gen_ai.evaluation.result span event and log record,
// and the flat llm_eval.<scorer>.* span attributes.
type outcome struct {
	scorer      string
	label       scoring.Label // pass, fail, not_scorable or error
	score       float64       // written only for pass and fail
	explanation string        // redacted; empty writes nothing
	errorType   string        // error.type; set only for error
	// judgeModel and promptVersion say who judged, "" when unknown.
	judgeModel    string
	promptVersion string
}

func newOutcome(r evalstore.Result, redact func(string) string) outcome {
	v := outcome{
		scorer:        r.Scorer,
		label:         r.Label(),
		score:         r.Result.Score,
		explanation:   r.Explanation(redact),
		judgeModel:    r.Result.JudgeModel,
		promptVersion: r.Result.PromptVersion,
	}
	if v.label == scoring.LabelError {
		v.errorType = r.ErrorType()
	}
	return v
}

// scored reports a pass or fail verdict, the only ones with a score.
func (v outcome) scored() bool {
	return v.label == scoring.LabelPass || v.label == scoring.LabelFail
}

// putEventAttributes writes the attributes of a gen_ai.evaluation.result
// event: the score only when scored, the label unless the evaluation
// failed, error.type only when it did.
func (v outcome) putEventAttributes(attrs pcommon.Map, responseID string) {
	attrs.PutStr(evalconv.AttrName, v.scorer)
	if v.scored() {
		attrs.PutDouble(evalconv.AttrScoreValue, v.score)
	}
	if v.label != scoring.LabelError {
		attrs.PutStr(evalconv.AttrScoreLabel, string(v.label))
	}
	if v.explanation != "" {
		attrs.PutStr(evalconv.AttrExplanation, v.explanation)
	}
	if responseID != "" {
		attrs.PutStr(evalconv.AttrResponseID, responseID)
	}
	if v.errorType != "" {
		attrs.PutStr(evalconv.AttrErrorType, v.errorType)
	}
	if v.judgeModel != "" {
		attrs.PutStr(evalconv.AttrJudgeModel, v.judgeModel)
	}
	if v.promptVersion != "" {
		attrs.PutStr(evalconv.AttrPromptVersion, v.promptVersion)
	}
}

// putFlatAttributes writes llm_eval.<scorer>.{score,label,reason}: the
// label always, error included.
func (v outcome) putFlatAttributes(attrs pcommon.Map) {
	if v.scored() {
		attrs.PutDouble(evalconv.FlatScore(v.scorer), v.score)
	}
	attrs.PutStr(evalconv.FlatLabel(v.scorer), string(v.label))
	if v.explanation != "" {
		attrs.PutStr(evalconv.FlatReason(v.scorer), v.explanation)
	}
}

// AnnotateSpan writes one gen_ai.evaluation.result event and the flat
// llm_eval.<scorer>.* attributes for one scorer's result r onto span.
func AnnotateSpan(span ptrace.Span, r evalstore.Result, responseID string, redact func(string) string) {
	o := newOutcome(r, redact)
	ev := span.Events().AppendEmpty()
	ev.SetName(evalconv.EventName)
	ev.SetTimestamp(pcommon.NewTimestampFromTime(r.At))
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
func NewLateSpan(template ptrace.Traces, of Evaluated, r evalstore.Result, redact func(string) string) ptrace.Traces {
	td := ptrace.NewTraces()
	template.CopyTo(td)
	span := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().AppendEmpty()
	span.SetTraceID(of.TraceID)
	span.SetSpanID(newSpanID())
	span.SetParentSpanID(of.SpanID)
	span.SetName(evalconv.LateSpanName)
	span.SetKind(ptrace.SpanKindInternal)
	ts := pcommon.NewTimestampFromTime(r.At)
	span.SetStartTimestamp(ts)
	span.SetEndTimestamp(ts)
	attrs := span.Attributes()
	attrs.PutStr(evalconv.AttrOperationName, evalconv.OperationEvaluation)
	attrs.PutStr(evalconv.AttrName, r.Scorer)
	if of.Model != "" {
		attrs.PutStr(evalconv.AttrRequestModel, of.Model)
	}
	if of.ResponseID != "" {
		attrs.PutStr(evalconv.AttrResponseID, of.ResponseID)
	}
	if of.AgentName != "" {
		attrs.PutStr(evalconv.AttrAgentName, of.AgentName)
	}
	AnnotateSpan(span, r, of.ResponseID, redact)
	return td
}

// Conversation is what the results of a conversation are written with:
// the conversation, and the span of its latest turn, whose trace and
// resource they go under.
type Conversation struct {
	ID       string // gen_ai.conversation.id
	Last     Evaluated
	Resource pcommon.Resource
	Scope    string // the scope name of the spans llm_eval makes
	Messages int    // messages in the conversation, those left out included
	Omitted  int    // messages the judge did not see
}

// NewConversationSpan builds the span that carries a conversation's
// results: a child of its latest turn's span, under that span's resource,
// with one gen_ai.evaluation.result event per result, each naming the
// conversation.
func NewConversationSpan(c Conversation, results []evalstore.Result, redact func(string) string) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	c.Resource.CopyTo(rs.Resource())
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(c.Scope)
	span := ss.Spans().AppendEmpty()
	span.SetTraceID(c.Last.TraceID)
	span.SetSpanID(newSpanID())
	span.SetParentSpanID(c.Last.SpanID)
	span.SetName(evalconv.LateSpanName)
	span.SetKind(ptrace.SpanKindInternal)
	var first, last pcommon.Timestamp
	for _, r := range results {
		ts := pcommon.NewTimestampFromTime(r.At)
		if first == 0 || ts < first {
			first = ts
		}
		last = max(last, ts)
	}
	span.SetStartTimestamp(first)
	span.SetEndTimestamp(last)
	attrs := span.Attributes()
	attrs.PutStr(evalconv.AttrOperationName, evalconv.OperationEvaluation)
	attrs.PutStr(evalconv.AttrConversationID, c.ID)
	attrs.PutInt(evalconv.AttrConversationMessages, int64(c.Messages))
	if c.Omitted > 0 {
		attrs.PutInt(evalconv.AttrConversationOmitted, int64(c.Omitted))
	}
	if c.Last.Model != "" {
		attrs.PutStr(evalconv.AttrRequestModel, c.Last.Model)
	}
	if c.Last.AgentName != "" {
		attrs.PutStr(evalconv.AttrAgentName, c.Last.AgentName)
	}
	for _, r := range results {
		AnnotateSpan(span, r, "", redact)
		span.Events().At(span.Events().Len()-1).Attributes().PutStr(evalconv.AttrConversationID, c.ID)
	}
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

// AppendResultRecord appends the gen_ai.evaluation.result log record of
// one scorer's result r on the call of: the call's trace and span id, the
// attributes of the span event (same outcome), gen_ai.request.model when
// known, stamped when r was produced. A failed evaluation is a warning,
// any verdict info.
func AppendResultRecord(dst plog.LogRecordSlice, of Evaluated, r evalstore.Result, redact func(string) string) plog.LogRecord {
	v := newOutcome(r, redact)
	rec := dst.AppendEmpty()
	rec.SetEventName(evalconv.EventName)
	ts := pcommon.NewTimestampFromTime(r.At)
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
