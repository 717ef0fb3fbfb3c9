package genai

import (
	"encoding/json"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// ConventionGenAILogs is Generation.Convention for content read from GenAI
// log events (OTel Events: log records with an event name).
const ConventionGenAILogs = "gen_ai_log_events"

// attrEventName carried the event name before LogRecord gained an
// EventName field; older SDKs still set it.
const attrEventName = "event.name"

// LogEvent is what a log record is to the evaluator.
type LogEvent int

// Kinds of log record. The names are the span event names of events.go:
// the same events, sent as log records.
const (
	LogOther   LogEvent = iota // not GenAI content: passes through
	LogMessage                 // gen_ai.{system,user,assistant,tool}.message (semconv ≤ 1.36): one input turn
	LogChoice                  // gen_ai.choice (semconv ≤ 1.36): one output choice, emitted after the input turns
	LogDetails                 // gen_ai.client.inference.operation.details (semconv ≥ 1.37): a whole call
)

// String names the kind for logs and metrics.
func (k LogEvent) String() string {
	switch k {
	case LogMessage:
		return "message"
	case LogChoice:
		return "choice"
	case LogDetails:
		return "details"
	}
	return "other"
}

// LogEventName is the record's event name: the EventName field, else the
// event.name attribute of older SDKs.
func LogEventName(rec plog.LogRecord) string {
	if name := rec.EventName(); name != "" {
		return name
	}
	if v, ok := rec.Attributes().Get(attrEventName); ok && v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}

// LogEventKind maps an event name to its kind.
func LogEventKind(name string) LogEvent {
	switch name {
	case eventOperationDetails:
		return LogDetails
	case eventChoice:
		return LogChoice
	}
	if _, ok := messageEventRole(name); ok {
		return LogMessage
	}
	return LogOther
}

// ClassifyLog says what a log record is. It runs on every record of every
// batch: it decides on the event name first and looks further only at GenAI
// events. Events of the judge's own calls (JudgeAttribute on the record or
// its resource) are LogOther, so the evaluator does not evaluate itself.
func ClassifyLog(resource pcommon.Resource, rec plog.LogRecord) LogEvent {
	kind := LogEventKind(LogEventName(rec))
	if kind == LogOther {
		return LogOther
	}
	if _, judge := rec.Attributes().Get(JudgeAttribute); judge {
		return LogOther
	}
	if _, judge := resource.Attributes().Get(JudgeAttribute); judge {
		return LogOther
	}
	return kind
}

// ReadLogs extracts the generation from the GenAI log events of one call:
// a gen_ai.client.inference.operation.details record, or the per-message
// events and gen_ai.choice records of one trace and span id in the order
// they were emitted. When both styles are present the details record wins,
// as it does for span events.
//
// Per-message content is read from the record's body, a map or a string
// holding JSON or plain text; a record with an empty body is read from its
// attributes (the span-event shape some SDKs also use for logs). The details
// record carries gen_ai.input.messages, gen_ai.output.messages and
// gen_ai.system_instructions as attributes, as the conventions say, or else
// in a body map or JSON text. Records of other kinds are ignored. Events
// emitted with content capture off carry no content: the generation then
// has Missing set. ReadLogs never panics, whatever the records hold.
func ReadLogs(records plog.LogRecordSlice) (g Generation) {
	defer func() {
		if r := recover(); r != nil {
			// A bug here must not take the collector down: report the call unscorable.
			g = Generation{Missing: MissingUnreadable}
		}
	}()
	details := extraction{convention: ConventionGenAILogs}
	perMessage := extraction{convention: ConventionGenAILogs}
	var context []string
	var meta []pcommon.Map // where the model and response id may be
	for i := 0; i < records.Len(); i++ {
		rec := records.At(i)
		name := LogEventName(rec)
		switch LogEventKind(name) {
		case LogDetails:
			x, where := readDetailsRecord(rec)
			details.merge(x)
			for _, m := range where {
				context = appendUnique(context, spanContext(m, nil)...)
			}
			meta = append(meta, where...)
		case LogChoice:
			m := bodyMessage(rec, name, "assistant")
			if m.index < 0 {
				m.index = len(perMessage.output)
			}
			perMessage.output = appendMessages(perMessage.output, []message{m})
			perMessage.hasOutput = true
			meta = append(meta, rec.Attributes())
		case LogMessage:
			role, _ := messageEventRole(name)
			m := bodyMessage(rec, name, role)
			perMessage.input = appendMessages(perMessage.input, []message{m})
			perMessage.hasInput = true
			meta = append(meta, rec.Attributes())
		}
	}
	details.merge(perMessage)
	var in, out *extraction
	if details.hasInput {
		in = &details
	}
	if details.hasOutput {
		out = &details
	}
	g.fill(in, out, details.system)
	g.Documents = appendUnique(g.Documents, context...)
	for _, m := range meta {
		if g.Model == "" {
			g.Model = firstAttr(m, "gen_ai.request.model", "gen_ai.response.model")
		}
		if g.ResponseID == "" {
			g.ResponseID = firstAttr(m, "gen_ai.response.id")
		}
	}
	g.clip()
	return g
}

// readDetailsRecord reads an operation-details record from its attributes,
// or from its body when the attributes hold no content. where lists the
// maps the content came from, for the model, response id and context.
func readDetailsRecord(rec plog.LogRecord) (x extraction, where []pcommon.Map) {
	attrs := rec.Attributes()
	x = readSemconv(attrs, ConventionGenAILogs)
	if x.hasInput || x.hasOutput || len(x.system) > 0 {
		return x, []pcommon.Map{attrs}
	}
	// The answer is usually last in the body, so text cut by a size limit
	// is kept as far as it goes.
	body, ok := bodyMap(rec.Body(), true)
	if !ok {
		return x, []pcommon.Map{attrs}
	}
	x = readSemconv(body, ConventionGenAILogs)
	return x, []pcommon.Map{attrs, body}
}

// bodyMessage reads one message event or choice from the record's body:
// a map with the body fields of the conventions (role, content,
// tool_calls, id; for a choice index, finish_reason and message), JSON
// text of such a map, or the content itself as text or a parts list.
// An empty body falls back to the attributes. A body, or content in it,
// that is a number or a boolean is a not-text part named after the event
// name.
func bodyMessage(rec plog.LogRecord, name, role string) (m message) {
	defer nameNotText(&m, name+" content")
	body := rec.Body()
	switch body.Type() {
	case pcommon.ValueTypeEmpty:
		return eventMessage(rec.Attributes(), role)
	case pcommon.ValueTypeMap:
		return eventMessage(body.Map(), role)
	case pcommon.ValueTypeBytes:
		// Binary content is never judged.
		return message{role: normRole(role), index: -1}
	case pcommon.ValueTypeInt, pcommon.ValueTypeDouble, pcommon.ValueTypeBool:
		return message{role: normRole(role), index: -1,
			parts: []part{{kind: partNotText, text: issueType(attrType(body)), attr: name + " body"}}}
	}
	if fields, ok := bodyMap(body, role == "assistant"); ok {
		return eventMessage(fields, role)
	}
	content := decodedValue(body, role == "assistant")
	m, _ = parseMessage(map[string]any{"content": content}, role)
	return m
}

// bodyMap returns the body as a map: a Map body as it is, a string body
// holding a JSON object decoded into a new map. ok is false for any other
// body.
func bodyMap(body pcommon.Value, keepCut bool) (m pcommon.Map, ok bool) {
	switch body.Type() {
	case pcommon.ValueTypeMap:
		return body.Map(), true
	case pcommon.ValueTypeStr:
		d := decodeTextOpt(body.Str(), keepCut)
		obj, isObj := d.(map[string]any)
		if !isObj {
			return pcommon.Map{}, false
		}
		m := pcommon.NewMap()
		if err := m.FromRaw(pdataRaw(obj).(map[string]any)); err != nil {
			return pcommon.Map{}, false
		}
		return m, true
	}
	return pcommon.Map{}, false
}

// pdataRaw turns decoded JSON into values pcommon accepts: json.Number
// becomes int64 when it is a whole number and float64 otherwise.
func pdataRaw(v any) any {
	switch t := v.(type) {
	case json.Number:
		if n, err := strconv.ParseInt(t.String(), 10, 64); err == nil {
			return n
		}
		f, err := strconv.ParseFloat(t.String(), 64)
		if err != nil {
			return t.String()
		}
		return f
	case map[string]any:
		for k, e := range t {
			t[k] = pdataRaw(e)
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = pdataRaw(e)
		}
		return t
	}
	return v
}
