package genai

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestTaskOutputContext: an OpenLLMetry task span's output is context,
// except an embedding vector; LlamaIndex nodes give their texts.
func TestTaskOutputContext(t *testing.T) {
	vector := "[0,0.25,0,0.5,0,0,0.125,0,0,0,0.75,0,0,0,0,0.1]"
	tests := []struct {
		name, output string
		attr         any // a structured value instead of output, when set
		want         []string
	}{
		{name: "embedding vector", output: vector},
		{name: "embedding vector, structured", attr: []any{0.0, 0.25, 0.0, 0.5, 0.0, 0.0, 0.125, 0.0, 0.0, 0.0, 0.75, 0.0, 0.0, 0.0, 0.0, 0.1}},
		{name: "short list of numbers stays context", output: "[42,7]", want: []string{"[42,7]"}},
		{name: "LlamaIndex nodes with scores", output: `[{"node":{"id_":"a","text":"Frame: 10 years."},"score":0.8},{"node":{"text":"Returns: 30 days."},"score":0.2}]`,
			want: []string{"Frame: 10 years.", "Returns: 30 days."}},
		{name: "mixed list is text", output: `[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,"x"]`, want: []string{"x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			span := ptrace.NewSpan()
			span.Attributes().PutStr("traceloop.span.kind", "task")
			if tt.attr != nil {
				assert.NoError(t, span.Attributes().PutEmptySlice("traceloop.entity.output").FromRaw(tt.attr.([]any)))
			} else {
				span.Attributes().PutStr("traceloop.entity.output", tt.output)
			}
			assert.Equal(t, tt.want, ReadContext(span).Texts)
		})
	}
}
