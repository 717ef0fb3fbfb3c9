package genai

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Each library's hint names the setting that library reads.
func TestContentCaptureHint(t *testing.T) {
	tests := []struct {
		scope string
		want  string
	}{
		{scope: "@opentelemetry/instrumentation-openai", want: "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true"},
		{scope: "@elastic/opentelemetry-instrumentation-openai", want: "captureMessageContent: true"},
		{scope: "opentelemetry.instrumentation.openai_v2", want: "SPAN_AND_EVENT / EVENT_ONLY"},
		{scope: "@arizeai/openinference-instrumentation-openai", want: "OPENINFERENCE_HIDE_OUTPUTS"},
		{scope: "@traceloop/instrumentation-openai", want: "TRACELOOP_TRACE_CONTENT=true"},
		{scope: "ai", want: "recordOutputs: true"},
		{scope: "aiohttp-client", want: genericHint},
		{scope: "", want: genericHint},
	}
	for _, tt := range tests {
		t.Run(tt.scope, func(t *testing.T) {
			assert.Contains(t, CaptureHint(tt.scope), tt.want)
		})
	}
}

// A generation is taken as sent with content capture off only when it has
// no message text at all; an empty answer to a question is not.
func TestContentless(t *testing.T) {
	tests := []struct {
		name string
		gen  Generation
		want bool
	}{
		{name: "nothing", gen: Generation{Missing: MissingOutput}, want: true},
		{name: "tool call names only", gen: Generation{Missing: MissingOutput, Conversation: "assistant: lookup_order()", ToolResults: []string{""}}, want: true},
		{name: "empty answer to a question", gen: Generation{Missing: MissingOutput, Input: "Where is my order?"}},
		{name: "system prompt", gen: Generation{Missing: MissingOutput, SystemInstructions: []string{"Be brief."}}},
		{name: "tool result", gen: Generation{Missing: MissingOutput, ToolResults: []string{"shipped"}}},
		{name: "redacted", gen: Generation{Missing: MissingRedacted}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Contentless(tt.gen))
		})
	}
}
