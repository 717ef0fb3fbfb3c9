package genai

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// clientSpan is one span of a captured client sample with its resource.
type clientSpan struct {
	resource pcommon.Resource
	span     ptrace.Span
}

// readClientSpans reads the spans a real instrumentation library sent, as
// captured by test/clients into testdata/otlp/clients/<app>/traces.jsonl
// (one OTLP/JSON export request per line), by span name in arrival order.
func readClientSpans(t *testing.T, app string) map[string][]clientSpan {
	t.Helper()
	return readClientSample(t, filepath.Join(app, "traces.jsonl"))
}

// readClientSample is readClientSpans of the sample at path under
// testdata/otlp/clients.
func readClientSample(t *testing.T, path string) map[string][]clientSpan {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "..", "..", "testdata", "otlp", "clients", path))
	require.NoError(t, err)
	defer f.Close()
	out := map[string][]clientSpan{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(sc.Bytes())
		require.NoError(t, err)
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					out[s.Name()] = append(out[s.Name()], clientSpan{rs.Resource(), s})
				}
			}
		}
	}
	require.NoError(t, sc.Err())
	return out
}
