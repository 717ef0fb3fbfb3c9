//go:build clients

package clients

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

const resultEvent = "gen_ai.evaluation.result"

// telemetry indexes spans by span id and keeps every log record.
type telemetry struct {
	spans     map[string]ptrace.Span   // first span seen with each id
	spansByID map[string][]ptrace.Span // every span with each id
	logs      []plog.LogRecord
}

func index(traces []ptrace.Traces, logs []plog.Logs) *telemetry {
	t := &telemetry{spans: map[string]ptrace.Span{}, spansByID: map[string][]ptrace.Span{}}
	for _, td := range traces {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					id := sp.SpanID().String()
					if _, ok := t.spans[id]; !ok {
						t.spans[id] = sp
					}
					t.spansByID[id] = append(t.spansByID[id], sp)
				}
			}
		}
	}
	for _, ld := range logs {
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					t.logs = append(t.logs, lr)
				}
			}
		}
	}
	return t
}

// rawText is a value as JSON, so that a search finds text at any depth.
func rawText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return b.String()
}

func spanText(sp ptrace.Span) string {
	var b strings.Builder
	b.WriteString(rawText(sp.Attributes().AsRaw()))
	for _, ev := range sp.Events().All() {
		b.WriteString(rawText(ev.Attributes().AsRaw()))
	}
	return b.String()
}

func recordText(lr plog.LogRecord) string {
	return rawText(lr.Body().AsRaw()) + rawText(lr.Attributes().AsRaw())
}

// carries says whether the call a result is about holds text in what the
// app sent: in the span's attributes or events, or in a log record of the
// same trace and span.
func (t *telemetry) carries(k resultKey, text string) bool {
	if sp, ok := t.spans[k.spanID]; ok && strings.Contains(spanText(sp), text) {
		return true
	}
	for _, lr := range t.logs {
		if lr.TraceID().String() == k.traceID && lr.SpanID().String() == k.spanID && strings.Contains(recordText(lr), text) {
			return true
		}
	}
	return false
}

// contentInLogsOnly says whether text is in log records and on no span.
func (t *telemetry) contentInLogsOnly(text string) bool {
	for _, sp := range t.spans {
		if strings.Contains(spanText(sp), text) {
			return false
		}
	}
	for _, lr := range t.logs {
		if strings.Contains(recordText(lr), text) {
			return true
		}
	}
	return false
}

// describe names the span a key points at.
func (t *telemetry) describe(k resultKey) string {
	if sp, ok := t.spans[k.spanID]; ok {
		return fmt.Sprintf("span %q (%s)", sp.Name(), k.spanID)
	}
	return fmt.Sprintf("call %s/%s (no such span)", k.traceID, k.spanID)
}

// resultKey is one evaluation: a scorer on one call (trace and span id).
type resultKey struct {
	scorer, traceID, spanID string
}

// result is one gen_ai.evaluation.result, wherever the collector wrote it.
type result struct {
	key                                   resultKey
	scorer, label, errorType, explanation string
	// source is "span" (an event on the evaluated span), "late" (a
	// gen_ai.evaluation child span) or "log" (a result log record).
	source string
}

func str(m pcommon.Map, key string) string {
	if v, ok := m.Get(key); ok {
		return v.AsString()
	}
	return ""
}

func newResult(attrs pcommon.Map, traceID, spanID, source string) result {
	r := result{
		scorer:      str(attrs, "gen_ai.evaluation.name"),
		label:       str(attrs, "gen_ai.evaluation.score.label"),
		errorType:   str(attrs, "error.type"),
		explanation: str(attrs, "gen_ai.evaluation.explanation"),
		source:      source,
	}
	r.key = resultKey{r.scorer, traceID, spanID}
	return r
}

func isResultRecord(lr plog.LogRecord) bool {
	return lr.EventName() == resultEvent || str(lr.Attributes(), "event.name") == resultEvent
}

// collectResults gathers every result from the collector's output: span
// events, late child spans, and result log records.
func collectResults(traces []ptrace.Traces, logs []plog.Logs) []result {
	var out []result
	for _, td := range traces {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					late := str(sp.Attributes(), "gen_ai.operation.name") == "evaluation"
					spanID, source := sp.SpanID().String(), "span"
					if late {
						spanID, source = sp.ParentSpanID().String(), "late"
					}
					for _, ev := range sp.Events().All() {
						if ev.Name() == resultEvent {
							out = append(out, newResult(ev.Attributes(), sp.TraceID().String(), spanID, source))
						}
					}
				}
			}
		}
	}
	for _, ld := range logs {
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					if isResultRecord(lr) {
						out = append(out, newResult(lr.Attributes(), lr.TraceID().String(), lr.SpanID().String(), "log"))
					}
				}
			}
		}
	}
	return out
}

func countResultRecords(logs []plog.Logs) int {
	n := 0
	for _, ld := range logs {
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					if isResultRecord(lr) {
						n++
					}
				}
			}
		}
	}
	return n
}

// describe lists results one a line, sorted, for the test log.
func describe(rs []result, t *telemetry) string {
	lines := make([]string, 0, len(rs))
	for _, r := range rs {
		label := r.label
		if r.errorType != "" {
			label = "error " + r.errorType
		}
		expl := r.explanation
		if len(expl) > 90 {
			expl = expl[:90] + "..."
		}
		lines = append(lines, fmt.Sprintf("  %-16s %-13s %-4s %s: %s", r.scorer, label, r.source, t.describe(r.key), expl))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
