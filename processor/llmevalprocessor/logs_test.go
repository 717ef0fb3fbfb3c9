package llmevalprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadatatest"
	"github.com/llm-eval/llm_eval/scoring"
)

// resultsBySpan collects the result records in the sink: span id -> the
// label, or error.type for a failed evaluation, of each.
func resultsBySpan(batches []plog.Logs) map[string][]string {
	return resultRecordsBySpan(batches, func(attrs pcommon.Map) string {
		if et, ok := attrs.Get(evalconv.AttrErrorType); ok {
			return "error:" + et.Str()
		}
		if l, ok := attrs.Get(evalconv.AttrScoreLabel); ok {
			return l.Str()
		}
		return ""
	})
}

// resultScorersBySpan collects the scorer names of the result records in
// the sink, by span id.
func resultScorersBySpan(batches []plog.Logs) map[string][]string {
	return resultRecordsBySpan(batches, func(attrs pcommon.Map) string {
		if name, ok := attrs.Get(evalconv.AttrName); ok {
			return name.Str()
		}
		return ""
	})
}

// resultRecordsBySpan maps span id -> what value says of each result record.
func resultRecordsBySpan(batches []plog.Logs, value func(attrs pcommon.Map) string) map[string][]string {
	out := map[string][]string{}
	for _, ld := range batches {
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, rec := range sl.LogRecords().All() {
					if rec.EventName() == evalconv.EventName {
						id := rec.SpanID().String()
						out[id] = append(out[id], value(rec.Attributes()))
					}
				}
			}
		}
	}
	return out
}

// TestLogsMarkers checks the results of calls that are not evaluated, or
// not to the end: queue full, shut down while evaluating, a judge fault.
func TestLogsMarkers(t *testing.T) {
	tests := []struct {
		name      string
		queueSize int
		scorer    func(gate chan struct{}) scoring.Scorer
		want      []string // the sorted results of the two calls of message_events_one_batch
	}{
		{
			name: "queue full: the second call is marked", queueSize: 1,
			scorer: func(gate chan struct{}) scoring.Scorer { return gatedScorer(scoring.Bias, gate, false) },
			want:   []string{"error:" + string(scoring.ErrorQueueFull), "error:" + string(scoring.ErrorShutdown)},
		},
		{
			name: "shutdown while evaluating", queueSize: 10,
			scorer: func(gate chan struct{}) scoring.Scorer { return gatedScorer(scoring.Bias, gate, false) },
			want:   []string{"error:" + string(scoring.ErrorShutdown), "error:" + string(scoring.ErrorShutdown)},
		},
		{
			name: "judge fault typed", queueSize: 10,
			scorer: func(chan struct{}) scoring.Scorer {
				return failingScorer(scoring.Bias, scoring.ErrorJudgeUnavailable, "connection refused")
			},
			want: []string{"error:" + string(scoring.ErrorJudgeUnavailable), "error:" + string(scoring.ErrorJudgeUnavailable)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(scoring.Bias)
			cfg.QueueSize = tt.queueSize
			gate := make(chan struct{})
			defer close(gate)
			h := newLogsHarness(t, cfg, tt.scorer(gate))
			h.consume(readLogsFile(t, "message_events_one_batch.json"))
			if tt.name == "judge fault typed" {
				h.waitIdle()
			}
			require.NoError(t, h.p.Shutdown(context.Background()))

			inputs, results := h.split()
			require.Len(t, inputs, 1)
			got := resultsBySpan(results)
			require.Len(t, got, 2, "one result record per call")
			var all []string
			for _, v := range got {
				require.Len(t, v, 1)
				all = append(all, v[0])
			}
			assert.ElementsMatch(t, tt.want, all)
		})
	}
}

// TestLogsShutdownFlushesJoins checks that a call still waiting for its
// gen_ai.choice is read at shutdown: its results are emitted.
func TestLogsShutdownFlushesJoins(t *testing.T) {
	h := newLogsHarness(t, testConfig(scoring.Bias), fixedScorer(scoring.Bias, 0.1, scoring.LabelPass))
	h.consume(readLogsFile(t, "message_events_split_1.json"))
	require.Equal(t, 1, h.p.joiner.Stats().Calls, "the call waits for its choice")
	require.NoError(t, h.p.Shutdown(context.Background()))
	_, results := h.split()
	got := resultsBySpan(results)
	require.Len(t, got, 1)
	for _, v := range got {
		assert.Len(t, v, 1, "one result per scorer")
	}
}

// TestLogsSampling checks that the logs side takes the traces side's
// decision for a trace id.
func TestLogsSampling(t *testing.T) {
	cfg := testConfig(scoring.Bias)
	cfg.Sampling.Percentage = 0.0001
	h := newLogsHarness(t, cfg, fixedScorer(scoring.Bias, 0.1, scoring.LabelPass))
	ld := readLogsFile(t, "message_events_one_batch.json")
	var traceIDs []string
	for _, rl := range ld.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, rec := range sl.LogRecords().All() {
				require.False(t, h.p.core.sampler.sampled(rec.TraceID()), "fixture trace ids fall outside a tiny sample")
				traceIDs = append(traceIDs, rec.TraceID().String())
			}
		}
	}
	require.NotEmpty(t, traceIDs)
	h.consume(ld)
	require.NoError(t, h.p.Shutdown(context.Background()))
	_, results := h.split()
	assert.Empty(t, results, "records of unsampled traces are not evaluated")
	assert.Equal(t, 0, h.p.joiner.Stats().Calls)
}

// TestLogsTelemetry checks the counts of a logs batch: records in and
// out (input plus result records, otel.signal=logs), calls by how they
// were joined, a per-message event of a call already read.
func TestLogsTelemetry(t *testing.T) {
	h := newLogsHarness(t, testConfig(scoring.Bias), fixedScorer(scoring.Bias, 0.1, scoring.LabelPass))
	batch := readLogsFile(t, "message_events_one_batch.json")
	in := batch.LogRecordCount()
	h.consume(batch)
	h.waitIdle()
	// A second gen_ai.choice of a call already answered: passed, not read again.
	again := readLogsFile(t, "message_events_one_batch.json")
	var choice plog.LogRecord
	for _, rec := range again.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().All() {
		if rec.EventName() == "gen_ai.choice" {
			choice = rec
		}
	}
	late := plog.NewLogs()
	rl := late.ResourceLogs().AppendEmpty()
	choice.CopyTo(rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty())
	h.consume(late)
	require.NoError(t, h.p.Shutdown(context.Background()))

	id := metadatatest.NewSettings(h.tel).ID.String()
	metadatatest.AssertEqualProcessorIncomingItems(t, h.tel, []metricdata.DataPoint[int64]{{
		Value: int64(in + 1), Attributes: attribute.NewSet(attribute.String("processor", id), attribute.String("otel.signal", "logs")),
	}}, ignoreTime)
	metadatatest.AssertEqualProcessorOutgoingItems(t, h.tel, []metricdata.DataPoint[int64]{{
		Value: int64(in + 1 + 2), Attributes: attribute.NewSet(attribute.String("processor", id), attribute.String("otel.signal", "logs")),
	}}, ignoreTime)
	metadatatest.AssertEqualProcessorLlmEvalLogCalls(t, h.tel, []metricdata.DataPoint[int64]{{
		Value: 2, Attributes: attribute.NewSet(attribute.String("join_reason", "answered")),
	}}, ignoreTime)
	metadatatest.AssertEqualProcessorLlmEvalLogLateEvents(t, h.tel, []metricdata.DataPoint[int64]{{Value: 1}}, ignoreTime)
}

// TestLogsFilterBeforeJoining checks that records under a resource that
// include/exclude rule out are not held for joining, while the others are.
// message_events_split_1.json holds a call's input messages, without its
// gen_ai.choice, from service trip-planner.
func TestLogsFilterBeforeJoining(t *testing.T) {
	service := func(name string) []AttributeMatchConfig {
		return []AttributeMatchConfig{{Resource: map[string]ValueMatchConfig{"service.name": {Equals: name}}}}
	}
	tests := []struct {
		name      string
		config    func(*Config)
		wantCalls int
	}{
		{"no filter", func(*Config) {}, 1},
		{"service included", func(c *Config) { c.Include = service("trip-planner") }, 1},
		{"other service included", func(c *Config) { c.Include = service("checkout") }, 0},
		{"service excluded", func(c *Config) { c.Exclude = service("trip-planner") }, 0},
		{"excluded by a record attribute: decided when the call is read", func(c *Config) {
			c.Exclude = []AttributeMatchConfig{{Span: map[string]ValueMatchConfig{"gen_ai.system": {Regexp: "."}}}}
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(scoring.Bias)
			tt.config(cfg)
			h := newLogsHarness(t, cfg, fixedScorer(scoring.Bias, 0.1, scoring.LabelPass))
			h.consume(readLogsFile(t, "message_events_split_1.json"))
			assert.Equal(t, tt.wantCalls, h.p.joiner.Stats().Calls)
		})
	}
}

// TestLogsFilters checks that include, exclude, scorers[].include/exclude
// and scorers[].when apply to calls read from log records as to spans: the
// resource is the records', the "span" attributes are the records' own.
// The two calls of the fixture come from service weather-agent and their
// records carry gen_ai.system; only the first has context (a tool result).
func TestLogsFilters(t *testing.T) {
	system := map[string]ValueMatchConfig{"gen_ai.system": {Regexp: "."}}
	service := func(name string) map[string]ValueMatchConfig {
		return map[string]ValueMatchConfig{"service.name": {Equals: name}}
	}
	const withContext, without = "1e44d14bd3c74269", "8bed2dbecbd446ef"
	both := func(scorers ...string) map[string][]string {
		return map[string][]string{withContext: scorers, without: scorers}
	}
	tests := []struct {
		name   string
		config func(*Config)
		want   map[string][]string // call span id -> scorers with a result record
		file   string              // the input; empty means message_events_one_batch.json
	}{
		{"no filters", func(*Config) {}, both(scoring.Bias, scoring.PromptAlignment), ""},
		{"included service", func(c *Config) {
			c.Include = []AttributeMatchConfig{{Resource: service("weather-agent")}}
		}, both(scoring.Bias, scoring.PromptAlignment), ""},
		{"other service included only", func(c *Config) {
			c.Include = []AttributeMatchConfig{{Resource: service("checkout")}}
		}, map[string][]string{}, ""},
		{"excluded by a record attribute", func(c *Config) {
			c.Exclude = []AttributeMatchConfig{{Span: system}}
		}, map[string][]string{}, ""},
		{"one scorer excluded", func(c *Config) {
			c.Scorers[0].Exclude = []AttributeMatchConfig{{Resource: service("weather-agent"), Span: system}}
		}, both(scoring.PromptAlignment), ""},
		{"one scorer includes another service", func(c *Config) {
			c.Scorers[1].Include = []AttributeMatchConfig{{Resource: service("checkout")}}
		}, both(scoring.Bias), ""},
		{"one scorer only with context", func(c *Config) {
			c.Scorers[1].When.ContextPresent = true
		}, map[string][]string{withContext: {scoring.Bias, scoring.PromptAlignment}, without: {scoring.Bias}}, ""},
		{"one scorer targets agents only", func(c *Config) {
			c.Scorers[0].Targets = []string{targetAgent}
		}, both(scoring.PromptAlignment), ""},
		{"not_scorable only from scorers that apply", func(c *Config) {
			c.Scorers[0].Exclude = []AttributeMatchConfig{{Span: system}}
		}, map[string][]string{
			"0102030405060708": {scoring.PromptAlignment},               // per-message events carry gen_ai.system
			"1112131415161718": {scoring.Bias, scoring.PromptAlignment}, // operation details do not
		}, "capture_off.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(scoring.Bias, scoring.PromptAlignment)
			tt.config(cfg)
			h := newLogsHarness(t, cfg,
				fixedScorer(scoring.Bias, 0.1, scoring.LabelPass),
				fixedScorer(scoring.PromptAlignment, 0.9, scoring.LabelPass))
			file := tt.file
			if file == "" {
				file = "message_events_one_batch.json"
			}
			in := readLogsFile(t, file)
			records := in.LogRecordCount()
			h.consume(in)
			h.waitIdle()
			require.NoError(t, h.p.Shutdown(context.Background()))

			inputs, results := h.split()
			require.Len(t, inputs, 1)
			assert.Equal(t, records, inputs[0].LogRecordCount(), "every input record passes")
			got := resultScorersBySpan(results)
			require.Len(t, got, len(tt.want))
			assert.Equal(t, int64(len(tt.want)), sumOf(t, h.tel, "otelcol_processor_llm_eval_log_calls"),
				"log_calls counts the calls that pass include/exclude")
			for span, scorers := range tt.want {
				assert.ElementsMatch(t, scorers, got[span], "call %s", span)
			}
		})
	}
}
