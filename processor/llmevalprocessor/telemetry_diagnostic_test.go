package llmevalprocessor

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/featuregate"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadata"
	"github.com/llm-eval/llm_eval/scoring"
)

// The package's tests assert the diagnostic metrics as well as the
// decision metrics, so they run with the gate on;
// TestDiagnosticMetricsNeedTheGate turns it off.
func init() {
	if err := featuregate.GlobalRegistry().Set(metadata.ProcessorLlmevalDiagnosticMetricsFeatureGate.ID(), true); err != nil {
		panic(err)
	}
}

// setDiagnostics sets the gate for one test.
func setDiagnostics(t *testing.T, on bool) {
	t.Helper()
	id := metadata.ProcessorLlmevalDiagnosticMetricsFeatureGate.ID()
	require.NoError(t, featuregate.GlobalRegistry().Set(id, on))
	t.Cleanup(func() { require.NoError(t, featuregate.GlobalRegistry().Set(id, true)) })
}

// metricNames are the names of the metrics the collector's telemetry holds.
func metricNames(t *testing.T, h *harness) []string {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, h.tel.Reader.Collect(t.Context(), &rm))
	var names []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			names = append(names, m.Name)
		}
	}
	return names
}

// Without the gate, the processor records its decision metrics and none
// of its diagnostic ones; with it, both.
func TestDiagnosticMetricsNeedTheGate(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "gate on"}[on], func(t *testing.T) {
			setDiagnostics(t, on)
			cfg := testConfig(scoring.Hallucination)
			cfg.MaxWait = time.Hour
			cfg.TraceContext.ContextWait = time.Hour
			h := newHarness(t, cfg, fixedScorer(scoring.Hallucination, 0.1, scoring.LabelPass))
			h.consume(loadTraceContextBatch(t, "openinference_rag_generation.json"))
			h.consume(loadTraceContextBatch(t, "openinference_rag_context.json"))
			h.waitIdle()

			names := metricNames(t, h)
			for _, decision := range []string{"otelcol_processor_llm_eval_evaluations", "otelcol_processor_llm_eval_spans_sampled", "otelcol_processor_llm_eval_held_spans"} {
				assert.Contains(t, names, decision)
			}
			var diagnostic []string
			for _, n := range names {
				if diagnosticMetrics[n] {
					diagnostic = append(diagnostic, n)
				}
			}
			if !on {
				assert.Empty(t, diagnostic, "no diagnostic metric without the gate")
				return
			}
			for _, n := range []string{"otelcol_processor_llm_eval_context_waits", "otelcol_processor_llm_eval_context_joins", "otelcol_processor_llm_eval_trace_context_traces"} {
				assert.Contains(t, diagnostic, n)
			}
		})
	}
}

// The diagnostic metrics are the ones metadata.yaml marks enabled: false,
// and every one of them is a metric the processor declares.
func TestDiagnosticMetricsAreTheDisabledOnes(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join(".", "metadata.yaml"))
	require.NoError(t, err)
	metrics, ok := cm.Get("telemetry::metrics").(map[string]any)
	require.True(t, ok)
	var disabled, enabled []string
	for name, m := range metrics {
		full := "otelcol_" + name
		if on, _ := m.(map[string]any)["enabled"].(bool); on {
			enabled = append(enabled, full)
		} else {
			disabled = append(disabled, full)
		}
	}
	var listed []string
	for n := range diagnosticMetrics {
		listed = append(listed, n)
	}
	slices.Sort(disabled)
	slices.Sort(listed)
	assert.Equal(t, disabled, listed)
	assert.NotEmpty(t, enabled)
	for _, n := range enabled {
		assert.True(t, strings.HasPrefix(n, "otelcol_processor_"), n)
	}
}
