package llmevalprocessor

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadatatest"
	"github.com/llm-eval/llm_eval/scoring"
)

// fakeScorer is a scoring.Scorer whose behaviour a test supplies.
type fakeScorer struct {
	name  string
	calls atomic.Int64
	fn    func(ctx context.Context, c scoring.Case) scoring.Result
}

func (f *fakeScorer) Name() string { return f.name }

func (f *fakeScorer) Score(ctx context.Context, c scoring.Case) scoring.Result {
	f.calls.Add(1)
	r := f.fn(ctx, c)
	r.Scorer = f.name
	return r
}

// fixedScorer answers at once with the given score and label.
func fixedScorer(name string, score float64, label scoring.Label) *fakeScorer {
	return &fakeScorer{name: name, fn: func(context.Context, scoring.Case) scoring.Result {
		return scoring.Result{Score: score, Label: label, Reason: name + " reason",
			Usage: scoring.Usage{LLMCalls: 2, PromptTokens: 100, CompletionTokens: 20, Latency: 300 * time.Millisecond}}
	}}
}

// failingScorer always fails with the given error type and message.
func failingScorer(name string, t scoring.ErrorType, msg string) *fakeScorer {
	return &fakeScorer{name: name, fn: func(context.Context, scoring.Case) scoring.Result {
		return scoring.Result{Label: scoring.LabelError, Err: &scoring.Error{Type: t, Err: errors.New(msg)},
			Usage: scoring.Usage{LLMCalls: 1}}
	}}
}

// hangingScorer blocks until its context ends, like a judge that never answers.
func hangingScorer(name string) *fakeScorer {
	return &fakeScorer{name: name, fn: func(ctx context.Context, _ scoring.Case) scoring.Result {
		<-ctx.Done()
		return scoring.Result{Label: scoring.LabelError, Err: &scoring.Error{Type: scoring.ErrorJudgeTimeout, Err: ctx.Err()}}
	}}
}

// gatedScorer waits for gate to close (ignoring its context when stubborn),
// then passes.
func gatedScorer(name string, gate <-chan struct{}, stubborn bool) *fakeScorer {
	return &fakeScorer{name: name, fn: func(ctx context.Context, _ scoring.Case) scoring.Result {
		if stubborn {
			<-gate
		} else {
			select {
			case <-gate:
			case <-ctx.Done():
				return scoring.Result{Label: scoring.LabelError, Err: &scoring.Error{Type: scoring.ErrorCanceled, Err: ctx.Err()}}
			}
		}
		return scoring.Result{Score: 0.1, Label: scoring.LabelPass, Reason: "late but fine"}
	}}
}

func testConfig(names ...string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Judge.ClientConfig.Endpoint = "http://127.0.0.1:1/v1"
	cfg.Judge.Model = "judge-model"
	cfg.MaxWait = 10 * time.Second
	cfg.Scorers = nil
	for _, n := range names {
		cfg.Scorers = append(cfg.Scorers, defaultScorerConfig(n))
	}
	return cfg
}

// harness runs one processor with fake scorers into a sink.
type harness struct {
	t    *testing.T
	p    *llmEvalProcessor
	proc processor.Traces
	sink *consumertest.TracesSink
	tel  *componenttest.Telemetry
}

func newHarness(t *testing.T, cfg *Config, scorers ...scoring.Scorer) *harness {
	return newHarnessTo(t, cfg, new(consumertest.TracesSink), scorers...)
}

func newHarnessTo(t *testing.T, cfg *Config, sink *consumertest.TracesSink, scorers ...scoring.Scorer) *harness {
	t.Helper()
	require.NoError(t, confmap.Validate(cfg))
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	build := func(context.Context, *Config, component.Host, component.TelemetrySettings, judgeHooks) (judgeSet, error) {
		return judgeSet{scorers: scorers}, nil
	}
	var next consumer.Traces = sink
	p, proc, err := newTracesProcessor(context.Background(), metadatatest.NewSettings(tel), cfg, next, build)
	require.NoError(t, err)
	require.NoError(t, proc.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { _ = proc.Shutdown(context.Background()) })
	return &harness{t: t, p: p, proc: proc, sink: sink, tel: tel}
}

// newTracesProcessor makes a traces instance through the factory path,
// build making its judge at Start.
func newTracesProcessor(ctx context.Context, set processor.Settings, cfg *Config, next consumer.Traces, build judgeBuilder) (*llmEvalProcessor, processor.Traces, error) {
	proc, err := newFactoryWith(build).CreateTraces(ctx, set, cfg, next)
	if err != nil {
		return nil, nil, err
	}
	return proc.(*llmEvalProcessor), proc, nil
}

// createLogsWith makes a logs instance through the factory path, build
// making its judge at Start.
func createLogsWith(build judgeBuilder) processor.CreateLogsFunc {
	return newFactoryWith(build).CreateLogs
}

func (h *harness) consume(td ptrace.Traces) {
	h.t.Helper()
	require.NoError(h.t, h.proc.ConsumeTraces(context.Background(), td))
}

func (h *harness) shutdown() {
	h.t.Helper()
	require.NoError(h.t, h.proc.Shutdown(context.Background()))
}

// waitSpans waits until the sink holds n spans.
func (h *harness) waitSpans(n int) {
	h.t.Helper()
	require.Eventually(h.t, func() bool { return h.sink.SpanCount() >= n }, 10*time.Second, 5*time.Millisecond,
		"want %d spans in the sink", n)
}

// waitIdle waits until no span has unfinished evaluations.
func (h *harness) waitIdle() {
	h.t.Helper()
	require.Eventually(h.t, func() bool { return unfinishedCount(h.p.store) == 0 }, 10*time.Second, 5*time.Millisecond)
}

// drain waits until every evaluation has finished, then shuts down, which
// waits for the late results being delivered.
func (h *harness) drain() {
	h.t.Helper()
	h.waitIdle()
	h.shutdown()
}

// unfinishedCount is the number of admitted spans with unfinished evaluations.
func unfinishedCount(s *evalStore) int {
	return s.Stats().Unfinished
}

// outSpan is a span found in the sink with what it came with.
type outSpan struct {
	span     ptrace.Span
	resource pcommon.Resource
	scope    pcommon.InstrumentationScope
}

// sinkSpans indexes the sink's spans by span id, counting duplicates.
func sinkSpans(sink *consumertest.TracesSink) (map[pcommon.SpanID]outSpan, map[pcommon.SpanID]int) {
	byID := map[pcommon.SpanID]outSpan{}
	count := map[pcommon.SpanID]int{}
	for _, td := range sink.AllTraces() {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					byID[s.SpanID()] = outSpan{span: s, resource: rs.Resource(), scope: ss.Scope()}
					count[s.SpanID()]++
				}
			}
		}
	}
	return byID, count
}

func randomTraceID() pcommon.TraceID {
	var id pcommon.TraceID
	binary.BigEndian.PutUint64(id[:8], rand.Uint64())
	binary.BigEndian.PutUint64(id[8:], rand.Uint64()|1)
	return id
}

var spanCounter atomic.Uint64

func nextSpanID() pcommon.SpanID {
	var id pcommon.SpanID
	binary.BigEndian.PutUint64(id[:], spanCounter.Add(1))
	return id
}

// batchBuilder makes a batch with one resource and scope.
type batchBuilder struct {
	td    ptrace.Traces
	spans ptrace.SpanSlice
}

func newBatch() *batchBuilder {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "support-bot")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("opentelemetry.instrumentation.openai_v2")
	return &batchBuilder{td: td, spans: ss.Spans()}
}

// other adds a non-LLM span.
func (b *batchBuilder) other(traceID pcommon.TraceID) pcommon.SpanID {
	s := b.spans.AppendEmpty()
	s.SetTraceID(traceID)
	s.SetSpanID(nextSpanID())
	s.SetName("GET /orders")
	s.Attributes().PutStr("http.request.method", "GET")
	return s.SpanID()
}

// generation adds a gen_ai chat span with content.
func (b *batchBuilder) generation(traceID pcommon.TraceID, input, output string) pcommon.SpanID {
	s := b.spans.AppendEmpty()
	s.SetTraceID(traceID)
	s.SetSpanID(nextSpanID())
	s.SetName("chat gpt-4o-mini")
	s.SetKind(ptrace.SpanKindClient)
	a := s.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("gen_ai.request.model", "gpt-4o-mini")
	a.PutStr("gen_ai.response.id", "chatcmpl-"+s.SpanID().String())
	in, _ := json.Marshal([]map[string]any{{"role": "user", "parts": []map[string]any{{"type": "text", "content": input}}}})
	out, _ := json.Marshal([]map[string]any{{"role": "assistant", "finish_reason": "stop", "parts": []map[string]any{{"type": "text", "content": output}}}})
	a.PutStr("gen_ai.input.messages", string(in))
	a.PutStr("gen_ai.output.messages", string(out))
	a.PutStr("gen_ai.system_instructions", `[{"type":"text","content":"Answer in English."}]`)
	return s.SpanID()
}

// emptyGeneration adds a chat span without any content (capture off).
func (b *batchBuilder) emptyGeneration(traceID pcommon.TraceID) pcommon.SpanID {
	s := b.spans.AppendEmpty()
	s.SetTraceID(traceID)
	s.SetSpanID(nextSpanID())
	s.SetName("chat gpt-4o-mini")
	s.Attributes().PutStr("gen_ai.operation.name", "chat")
	s.Attributes().PutStr("gen_ai.request.model", "gpt-4o-mini")
	return s.SpanID()
}

// evaluationEvents returns the span's gen_ai.evaluation.result events by scorer.
// evaluateOne sends one generation through h and returns the evaluation
// events its span leaves with, by scorer.
func evaluateOne(h *harness, input, output string) map[string]pcommon.Map {
	h.t.Helper()
	return evaluateSpan(h, func(b *batchBuilder) pcommon.SpanID { return b.generation(randomTraceID(), input, output) })
}

// evaluateSpan sends the one span add puts in a batch through h and
// returns the evaluation events it leaves with, by scorer.
func evaluateSpan(h *harness, add func(*batchBuilder) pcommon.SpanID) map[string]pcommon.Map {
	h.t.Helper()
	b := newBatch()
	id := add(b)
	want := h.sink.SpanCount() + 1
	h.consume(b.td)
	h.waitSpans(want)
	byID, _ := sinkSpans(h.sink)
	return evaluationEvents(byID[id].span)
}

func evaluationEvents(s ptrace.Span) map[string]pcommon.Map {
	out := map[string]pcommon.Map{}
	for _, ev := range s.Events().All() {
		if ev.Name() != evalconv.EventName {
			continue
		}
		name, _ := ev.Attributes().Get(evalconv.AttrName)
		out[name.Str()] = ev.Attributes()
	}
	return out
}

type nopSink = consumertest.TracesSink

func testSettings() processor.Settings {
	return metadatatest.NewSettings(componenttest.NewTelemetry())
}
