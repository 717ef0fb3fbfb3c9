package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadata"
)

// The processor records its decision metrics always, and its diagnostic
// metrics only with the processor.llmeval.diagnosticMetrics feature gate
// (--feature-gates=processor.llmeval.diagnosticMetrics), as tail_sampling
// puts an optional metric behind a gate. metadata.yaml marks the
// diagnostic ones enabled: false; mdatagen v0.159.0 only leaves them out
// of documentation.md for it, so the switch is made here: without the
// gate, their instruments are no-ops and their callbacks never run.

// diagnosticMetrics are the metrics of metadata.yaml marked enabled: false.
var diagnosticMetrics = llmEvalMetrics(
	"cache_hits", "cache_misses", "content_malformed", "context_joins", "context_waits", "conversation_bytes", "events_waiting",
	"inputs_truncated", "instruction_split_cache_hits", "instruction_split_limited", "instruction_splits",
	"judge_calls_per_evaluation", "judge_circuit_transitions", "judge_latency", "judge_retries",
	"judge_tokens_per_evaluation", "late_results_dropped", "log_calls", "log_late_events", "reason_fallbacks",
	"signal_joins", "storage_bytes", "storage_records_skipped", "storage_recovered", "storage_writes",
	"storage_written_bytes", "trace_context_bytes", "trace_context_traces",
)

// llmEvalMetrics is the set of the processor's metrics of these names.
func llmEvalMetrics(names ...string) map[string]bool {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set["otelcol_processor_llm_eval_"+n] = true
	}
	return set
}

// telemetrySettings are set's, with the diagnostic metrics switched off
// unless the feature gate is on.
func telemetrySettings(set component.TelemetrySettings) component.TelemetrySettings {
	if !metadata.ProcessorLlmevalDiagnosticMetricsFeatureGate.IsEnabled() {
		set.MeterProvider = decisionsOnly{set.MeterProvider}
	}
	return set
}

// decisionsOnly is a MeterProvider whose meters make no-op instruments
// for the diagnostic metrics.
type decisionsOnly struct{ metric.MeterProvider }

func (p decisionsOnly) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	return decisionMeter{p.MeterProvider.Meter(name, opts...)}
}

// decisionMeter makes the instruments the builder asks for; a diagnostic
// one is a no-op.
type decisionMeter struct{ metric.Meter }

var off noop.Meter

func (m decisionMeter) Int64Counter(name string, opts ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	if diagnosticMetrics[name] {
		return off.Int64Counter(name, opts...)
	}
	return m.Meter.Int64Counter(name, opts...)
}

func (m decisionMeter) Int64Histogram(name string, opts ...metric.Int64HistogramOption) (metric.Int64Histogram, error) {
	if diagnosticMetrics[name] {
		return off.Int64Histogram(name, opts...)
	}
	return m.Meter.Int64Histogram(name, opts...)
}

func (m decisionMeter) Float64Histogram(name string, opts ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	if diagnosticMetrics[name] {
		return off.Float64Histogram(name, opts...)
	}
	return m.Meter.Float64Histogram(name, opts...)
}

func (m decisionMeter) Int64ObservableCounter(name string, opts ...metric.Int64ObservableCounterOption) (metric.Int64ObservableCounter, error) {
	if diagnosticMetrics[name] {
		return off.Int64ObservableCounter(name, opts...)
	}
	return m.Meter.Int64ObservableCounter(name, opts...)
}

func (m decisionMeter) Int64ObservableGauge(name string, opts ...metric.Int64ObservableGaugeOption) (metric.Int64ObservableGauge, error) {
	if diagnosticMetrics[name] {
		return off.Int64ObservableGauge(name, opts...)
	}
	return m.Meter.Int64ObservableGauge(name, opts...)
}

// RegisterCallback registers f for the instruments that record; a
// callback of diagnostic instruments alone never runs.
func (m decisionMeter) RegisterCallback(f metric.Callback, instruments ...metric.Observable) (metric.Registration, error) {
	recording := make([]metric.Observable, 0, len(instruments))
	for _, inst := range instruments {
		switch inst.(type) {
		case noop.Int64ObservableCounter, noop.Int64ObservableGauge:
		default:
			recording = append(recording, inst)
		}
	}
	if len(recording) == 0 {
		return off.RegisterCallback(func(context.Context, metric.Observer) error { return nil })
	}
	return m.Meter.RegisterCallback(f, recording...)
}
