package llmevalprocessor

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
)

// namedSources are the services each warning line names, with the
// libraries named in its how_to_turn_on.
func namedSources(t *testing.T, entries []observer.LoggedEntry) (services map[string]int, hints map[string]string) {
	t.Helper()
	services, hints = map[string]int{}, map[string]string{}
	for _, e := range entries {
		m := e.ContextMap()
		if s, ok := m["service"].(string); ok {
			services[s]++
			continue
		}
		sources, ok := m["sources"].([]any)
		require.True(t, ok, "a line names its services: %v", m)
		for _, src := range sources {
			services[src.(map[string]any)["service"].(string)]++
		}
		for lib, how := range m["how_to_turn_on"].(map[string]any) {
			hints[lib] = how.(string)
		}
	}
	return services, hints
}

// TestCaptureWarningsNameEveryServiceUnderLogSampling: with the
// Collector's default log sampling (the first 10 lines of one message per
// 10s, then one in 100), 200 services found without content are each
// named once, in two lines: the first at once, the others together when
// the window ends (here at stop). One line per service would have named
// 11 of them.
func TestCaptureWarningsNameEveryServiceUnderLogSampling(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	sampled := zapcore.NewSamplerWithOptions(core, 10*time.Second, 10, 100)
	w := &captureWarnings{logger: zap.New(sampled), window: time.Hour}
	const lib = "@opentelemetry/instrumentation-openai"
	for i := range 200 {
		library := lib
		if i%2 == 1 {
			library = "openinference.instrumentation.openai"
		}
		w.warn(fmt.Sprintf("svc-%03d", i), library, warnSpans)
	}
	w.warn("svc-000", lib, warnSpans) // named already
	require.Equal(t, 1, logs.Len(), "the first at once, the rest wait for the window")
	w.stop()
	w.warn("svc-new", lib, warnSpans) // after stop: nothing

	require.Equal(t, 2, logs.Len())
	services, hints := namedSources(t, logs.All())
	assert.Len(t, services, 200)
	for i := range 200 {
		assert.Equal(t, 1, services[fmt.Sprintf("svc-%03d", i)], "svc-%03d named once", i)
	}
	assert.Equal(t, map[string]string{
		lib:                                    genai.CaptureHint(lib),
		"openinference.instrumentation.openai": genai.CaptureHint("openinference.instrumentation.openai"),
	}, hints)
	assert.Contains(t, logs.All()[0].Message, genai.CaptureHint(lib))
}

// TestCaptureWarningsWindows: sources found while a window is open are
// named when it ends, and open the next window; after a window with none,
// the next source is named at once again.
func TestCaptureWarningsWindows(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	w := &captureWarnings{logger: zap.New(core), window: 20 * time.Millisecond}
	t.Cleanup(w.stop)
	w.warn("a", "lib", warnSpans)
	w.warn("b", "lib", warnEvents)
	w.warn("c", "lib", warnSpansNoEvents)
	require.Eventually(t, func() bool { return logs.Len() == 2 }, 10*time.Second, time.Millisecond, "b and c in one line at the window's end")
	require.Eventually(t, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.timer == nil
	}, 10*time.Second, time.Millisecond, "a window without sources closes")
	w.warn("d", "lib", warnSpans)
	require.Equal(t, 3, logs.Len(), "named at once")
	services, _ := namedSources(t, logs.All())
	assert.Equal(t, map[string]int{"a": 1, "b": 1, "c": 1, "d": 1}, services)
	sources := logs.All()[1].ContextMap()["sources"].([]any)
	assert.Equal(t, warnEvents, sources[0].(map[string]any)["what"])
}
