// Package capture tells when an instrumentation library sent a generation
// without its message content (content capture off), how to turn it on for
// that library, and warns of it once per service and library.
package capture // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/capture"

import (
	"strings"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
)

// hint is how to turn message content capture on for the
// instrumentation library whose scope name is name, or starts with it when
// it ends in one of "/-.".
type hint struct {
	name string
	how  string
}

// hints, most specific prefix first. The values are the ones each
// library documents; test/clients checks the JavaScript ones.
var hints = []hint{
	{"@opentelemetry/instrumentation-openai", "set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true in the application's environment"},
	{"@elastic/opentelemetry-instrumentation-openai", "set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true in the application's environment (or the instrumentation option captureMessageContent: true)"},
	{"opentelemetry.instrumentation.openai_v2", pythonHint},
	{"opentelemetry.instrumentation.google_genai", pythonHint},
	{"opentelemetry.instrumentation.vertexai", pythonHint},
	{"@arizeai/openinference-", "content is on by default: unset OPENINFERENCE_HIDE_INPUTS and OPENINFERENCE_HIDE_OUTPUTS (or the traceConfig options hideInputs / hideOutputs)"},
	{"openinference.instrumentation", "content is on by default: unset OPENINFERENCE_HIDE_INPUTS and OPENINFERENCE_HIDE_OUTPUTS"},
	{"@traceloop/", "set TRACELOOP_TRACE_CONTENT=true (or traceContent: true in the instrumentation's config)"},
	{"opentelemetry.instrumentation.", "set TRACELOOP_TRACE_CONTENT=true (OpenLLMetry) or OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true (OpenTelemetry GenAI instrumentations)"},
	{"@mastra/", "keep the exporter's input and output on the model step spans (Mastra records them unless a span processor removes them)"},
	{"gen_ai", "Vercel AI SDK: set recordInputs and recordOutputs to true in the call's telemetry settings"},
	{"ai", "Vercel AI SDK: set experimental_telemetry: { isEnabled: true, recordInputs: true, recordOutputs: true }"},
}

const pythonHint = "set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true (events of semantic conventions ≤ 1.36), or SPAN_AND_EVENT / EVENT_ONLY with OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental (1.37+)"

// genericHint is for libraries not in hints.
const genericHint = "turn on the instrumentation's message content capture (OpenTelemetry GenAI instrumentations: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)"

// Hint says how to turn content capture on for the library
// whose instrumentation scope is named scope.
func Hint(scope string) string {
	for _, h := range hints {
		if scope == h.name || strings.ContainsAny(h.name[len(h.name)-1:], "/-.") && strings.HasPrefix(scope, h.name) {
			return h.how
		}
	}
	return genericHint
}

// Contentless reports whether a generation read as without output has no
// message text at all, as an instrumentation with content capture off
// sends it: no question, no system prompt, no tool result (an empty
// answer still has its question). Tool call names and ids may remain.
func Contentless(gen genai.Generation) bool {
	if gen.Missing != genai.MissingOutput || gen.Output != "" || gen.Input != "" || len(gen.SystemInstructions) > 0 {
		return false
	}
	for _, r := range gen.ToolResults {
		if strings.TrimSpace(r) != "" {
			return false
		}
	}
	return true
}

// NoEventsReason is the not_scorable reason of a span whose GenAI log
// events did not come.
func NoEventsReason(scope string) string {
	return "no content on the span, and no GenAI log events of the call arrived within log_events.cross_signal_wait: content capture is likely off; to turn it on, " + Hint(scope)
}

// OffReason is the not_scorable reason of a span of a service
// known to send no GenAI log events.
func OffReason(scope string) string {
	return "content capture is off: this service's spans carry no content and its GenAI log events stopped coming (log_events.content_capture_off_after in a row); to turn it on, " + Hint(scope)
}

// ServiceName is the resource's service.name.
func ServiceName(res pcommon.Resource) string {
	if v, ok := res.Attributes().Get("service.name"); ok {
		return v.AsString()
	}
	return ""
}

// What came without content, in the warning (Warnings.Warn).
const (
	WarnSpans         = "generation spans arrive without message content"
	WarnSpansNoEvents = "generation spans arrive without message content and no GenAI log events of their calls follow"
	WarnEvents        = "GenAI log events arrive without message content"
)

// SpanBytes estimates the memory a held span takes: its strings and a
// fixed cost per value.
func SpanBytes(span ptrace.Span) int {
	n := 256 + len(span.Name()) + attrBytes(span.Attributes())
	for _, e := range span.Events().All() {
		n += 64 + len(e.Name()) + attrBytes(e.Attributes())
	}
	return n
}

func attrBytes(m pcommon.Map) int {
	n := 0
	for k, v := range m.All() {
		n += 16 + len(k) + len(v.AsString())
	}
	return n
}

// maxWarned bounds the (service, library) pairs remembered as
// warned; beyond it nothing more is logged.
const maxWarned = 1024

// Warnings logs, once per service and library, that generation
// spans or log events arrive without content, with how to turn it on.
type Warnings struct {
	Logger *zap.Logger
	mu     sync.Mutex
	warned map[[2]string]bool
}

// Warn logs the warning for the service and library unless it was logged.
// what says what came without content (WarnSpans, WarnSpansNoEvents,
// WarnEvents).
func (w *Warnings) Warn(service, library, what string) {
	w.mu.Lock()
	key := [2]string{service, library}
	if w.warned[key] || len(w.warned) >= maxWarned {
		w.mu.Unlock()
		return
	}
	if w.warned == nil {
		w.warned = make(map[[2]string]bool)
	}
	w.warned[key] = true
	w.mu.Unlock()
	w.Logger.Warn("llm_eval: "+what+", so they are not_scorable: content capture is off; to turn it on, "+Hint(library)+" (logged once per service and library)",
		zap.String("service", service), zap.String("library", library))
}
