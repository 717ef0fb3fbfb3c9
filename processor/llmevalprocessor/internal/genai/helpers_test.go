package genai

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// newSpan builds a span whose attributes are given as raw values (string,
// int64, float64, bool, map[string]any, []any).
func newSpan(t testing.TB, name string, attrs map[string]any) ptrace.Span {
	t.Helper()
	span := ptrace.NewSpan()
	span.SetName(name)
	require.NoError(t, span.Attributes().FromRaw(attrs))
	return span
}

// addEvent adds a span event with raw attribute values.
func addEvent(t testing.TB, span ptrace.Span, name string, attrs map[string]any) {
	t.Helper()
	ev := span.Events().AppendEmpty()
	ev.SetName(name)
	require.NoError(t, ev.Attributes().FromRaw(attrs))
}

func read(span ptrace.Span) Generation {
	return Read(span)
}
