package llmevalmetricsconnector // import "github.com/llm-eval/llm_eval/connector/llmevalmetricsconnector"

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/internal/evalconv"
)

// evaluation is one gen_ai.evaluation.result, read from a span event or a
// log record; the aggregator counts both the same way.
type evaluation struct {
	attrs    pcommon.Map // the event's or record's attributes
	model    string
	hasModel bool
	agent    string // gen_ai.agent.name of the evaluated span or record
	hasAgent bool
	traceID  pcommon.TraceID
	spanID   pcommon.SpanID
	time     pcommon.Timestamp
}

// consumeTraces adds every evaluation event of td and returns how many
// results went to the overflow series.
func (a *aggregator) consumeTraces(td ptrace.Traces, now pcommon.Timestamp) (overflowed int) {
	for _, rs := range td.ResourceSpans().All() {
		res := &resultResource{src: rs.Resource().Attributes()}
		for _, ss := range rs.ScopeSpans().All() {
			for _, span := range ss.Spans().All() {
				model, hasModel := modelOf(span.Attributes())
				agent, hasAgent := agentOf(span.Attributes())
				for _, ev := range span.Events().All() {
					if ev.Name() != evalconv.EventName {
						continue
					}
					ts := ev.Timestamp()
					if ts == 0 {
						ts = span.EndTimestamp()
					}
					if a.add(res, evaluation{
						attrs: ev.Attributes(), model: model, hasModel: hasModel, agent: agent, hasAgent: hasAgent,
						traceID: span.TraceID(), spanID: span.SpanID(), time: ts,
					}, now) {
						overflowed++
					}
				}
			}
		}
	}
	return overflowed
}

// consumeLogs adds every evaluation log record of ld and returns how many
// results went to the overflow series. The model and the agent name come
// from the record's attributes, else from the resource's.
func (a *aggregator) consumeLogs(ld plog.Logs, now pcommon.Timestamp) (overflowed int) {
	for _, rl := range ld.ResourceLogs().All() {
		res := &resultResource{src: rl.Resource().Attributes()}
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				if !isEvaluationRecord(lr) || onSpan(lr) {
					continue
				}
				model, hasModel := modelOf(lr.Attributes())
				if !hasModel {
					model, hasModel = modelOf(rl.Resource().Attributes())
				}
				agent, hasAgent := agentOf(lr.Attributes())
				if !hasAgent {
					agent, hasAgent = agentOf(rl.Resource().Attributes())
				}
				ts := lr.Timestamp()
				if ts == 0 {
					ts = lr.ObservedTimestamp()
				}
				if a.add(res, evaluation{
					attrs: lr.Attributes(), model: model, hasModel: hasModel, agent: agent, hasAgent: hasAgent,
					traceID: lr.TraceID(), spanID: lr.SpanID(), time: ts,
				}, now) {
					overflowed++
				}
			}
		}
	}
	return overflowed
}

// isEvaluationRecord reports whether lr is a gen_ai.evaluation.result event,
// by its event name field or the older event.name attribute.
func isEvaluationRecord(lr plog.LogRecord) bool {
	if lr.EventName() == evalconv.EventName {
		return true
	}
	name, ok := stringAttr(lr.Attributes(), evalconv.AttrLegacyEventName)
	return ok && name == evalconv.EventName
}

// onSpan reports a record whose result llm_eval also wrote on its span:
// it is counted from the span's event.
func onSpan(lr plog.LogRecord) bool {
	v, ok := lr.Attributes().Get(evalconv.AttrOnSpan)
	return ok && v.Type() == pcommon.ValueTypeBool && v.Bool()
}

func modelOf(attrs pcommon.Map) (string, bool) {
	for _, k := range evalconv.ModelKeys {
		if v, ok := stringAttr(attrs, k); ok && v != "" {
			return v, true
		}
	}
	return "", false
}

// agentOf returns the gen_ai.agent.name in attrs, if it is a non-empty
// string: agent names are few and fixed, ids and other values are not
// labels.
func agentOf(attrs pcommon.Map) (string, bool) {
	v, ok := attrs.Get(evalconv.AttrAgentName)
	if !ok || v.Type() != pcommon.ValueTypeStr || v.Str() == "" {
		return "", false
	}
	return v.Str(), true
}

func stringAttr(attrs pcommon.Map, key string) (string, bool) {
	v, ok := attrs.Get(key)
	if !ok {
		return "", false
	}
	return v.AsString(), true // a string value as it is; others rendered
}
