package genai

// This file tells when an instrumentation library sent a generation
// without its message content (content capture off), and how to turn it
// on for that library.

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
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

// CaptureHint says how to turn content capture on for the library
// whose instrumentation scope is named scope.
func CaptureHint(scope string) string {
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
func Contentless(gen Generation) bool {
	if gen.Missing != MissingOutput || gen.Output != "" || gen.Input != "" || len(gen.SystemInstructions) > 0 {
		return false
	}
	for _, r := range gen.ToolResults {
		if strings.TrimSpace(r) != "" {
			return false
		}
	}
	return true
}

// CaptureLikelyOffReason is the not_scorable reason of a generation sent
// without any message text (Contentless) by the library whose scope is
// named scope: why it is missing, and how to turn capture on.
func CaptureLikelyOffReason(missing, scope string) string {
	return missing + ": content capture is likely off; to turn it on, " + CaptureHint(scope)
}

// NoEventsReason is the not_scorable reason of a span whose GenAI log
// events did not come.
func NoEventsReason(scope string) string {
	return "no content on the span, and no GenAI log events of the call arrived within log_events.cross_signal_wait: content capture is likely off; to turn it on, " + CaptureHint(scope)
}

// CaptureOffReason is the not_scorable reason of a span of a service
// known to send no GenAI log events.
func CaptureOffReason(scope string) string {
	return "content capture is off: this service's spans carry no content and its GenAI log events stopped coming (log_events.content_capture_off_after in a row); to turn it on, " + CaptureHint(scope)
}

// ServiceName is the resource's service.name.
func ServiceName(res pcommon.Resource) string {
	if v, ok := res.Attributes().Get("service.name"); ok {
		return v.AsString()
	}
	return ""
}

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
