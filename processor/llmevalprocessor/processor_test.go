package llmevalprocessor

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/resultwrite"
	"github.com/llm-eval/llm_eval/scoring"
)

func TestPassThroughWithoutGenerations(t *testing.T) {
	bias := fixedScorer(scoring.Bias, 0.2, scoring.LabelPass)
	h := newHarness(t, testConfig(scoring.Bias), bias)

	b := newBatch()
	tid := randomTraceID()
	b.other(tid)
	b.other(tid)
	want := ptrace.NewTraces()
	b.td.CopyTo(want)
	h.consume(b.td)

	// Forwarded synchronously, unchanged.
	require.Len(t, h.sink.AllTraces(), 1)
	assert.Equal(t, want, h.sink.AllTraces()[0])
	assert.Zero(t, bias.calls.Load())
}

func TestSampledGenerationIsHeldScoredAndForwarded(t *testing.T) {
	gate := make(chan struct{})
	bias := fixedScorer(scoring.Bias, 0.25, scoring.LabelPass)
	hall := gatedScorer(scoring.Hallucination, gate, false)
	h := newHarness(t, testConfig(scoring.Bias, scoring.Hallucination), bias, hall)

	b := newBatch()
	tid := randomTraceID()
	other := b.other(tid)
	gen := b.generation(tid, "What is the refund window?", "Thirty days.")
	h.consume(b.td)

	// The rest of the batch goes on at once; the generation waits for its results.
	byID, _ := sinkSpans(h.sink)
	require.Contains(t, byID, other)
	require.NotContains(t, byID, gen)

	close(gate)
	h.waitSpans(2)
	byID, count := sinkSpans(h.sink)
	assert.Equal(t, 1, count[gen])
	assert.Equal(t, 1, count[other])
	out := byID[gen]
	assert.Equal(t, "support-bot", mustStr(t, out.resource.Attributes(), "service.name"))
	assert.Equal(t, "opentelemetry.instrumentation.openai_v2", out.scope.Name())

	events := evaluationEvents(out.span)
	require.Len(t, events, 2)
	be := events[scoring.Bias]
	assert.InDelta(t, 0.25, mustDouble(t, be, evalconv.AttrScoreValue), 1e-9)
	assert.Equal(t, "pass", mustStr(t, be, evalconv.AttrScoreLabel))
	assert.Equal(t, "bias reason", mustStr(t, be, evalconv.AttrExplanation))
	assert.Equal(t, "chatcmpl-"+gen.String(), mustStr(t, be, evalconv.AttrResponseID))
	_, hasErr := be.Get(evalconv.AttrErrorType)
	assert.False(t, hasErr)

	attrs := out.span.Attributes()
	assert.InDelta(t, 0.25, mustDouble(t, attrs, "llm_eval.bias.score"), 1e-9)
	assert.Equal(t, "pass", mustStr(t, attrs, "llm_eval.bias.label"))
	assert.Equal(t, "bias reason", mustStr(t, attrs, "llm_eval.bias.reason"))
	assert.Equal(t, "pass", mustStr(t, attrs, "llm_eval.hallucination.label"))
	// Original attributes are kept.
	assert.Equal(t, "chat", mustStr(t, attrs, "gen_ai.operation.name"))
}

func TestCaseBuiltFromSpan(t *testing.T) {
	cases := make(chan scoring.Case, 2)
	record := func(name string) *fakeScorer {
		return &fakeScorer{name: name, fn: func(_ context.Context, c scoring.Case) scoring.Result {
			cases <- c
			return scoring.Result{Label: scoring.LabelPass}
		}}
	}
	cfg := testConfig(scoring.Bias, scoring.PromptAlignment)
	cfg.Scorers[1].Instructions = []string{"Cite the context"}
	h := newHarness(t, cfg, record(scoring.Bias), record(scoring.PromptAlignment))
	b := newBatch()
	b.generation(randomTraceID(), "What is the refund window?", "Thirty days.")
	h.consume(b.td)

	got := map[string]scoring.Case{}
	for range 2 {
		c := <-cases
		got[c.Instructions[0]] = c
	}
	// Configured instructions win; otherwise the span's system instructions.
	require.Contains(t, got, "Cite the context")
	require.Contains(t, got, "Answer in English.")
	for _, c := range got {
		assert.Contains(t, c.Input, "What is the refund window?")
		assert.Equal(t, "Thirty days.", c.Output)
	}
}

func TestNoSystemInstructionsWhenDisabled(t *testing.T) {
	cases := make(chan scoring.Case, 1)
	s := &fakeScorer{name: scoring.Bias, fn: func(_ context.Context, c scoring.Case) scoring.Result {
		cases <- c
		return scoring.Result{Label: scoring.LabelPass}
	}}
	cfg := testConfig(scoring.Bias)
	cfg.Scorers[0].UseSystemInstructions = false
	h := newHarness(t, cfg, s)
	b := newBatch()
	b.generation(randomTraceID(), "hi", "hello")
	h.consume(b.td)
	assert.Empty(t, (<-cases).Instructions)
}

func TestNotScorableWithoutCallingScorers(t *testing.T) {
	bias := fixedScorer(scoring.Bias, 0.2, scoring.LabelPass)
	h := newHarness(t, testConfig(scoring.Bias), bias)
	b := newBatch()
	id := b.emptyGeneration(randomTraceID())
	h.consume(b.td)

	// Annotated in place and forwarded with its batch, synchronously.
	byID, count := sinkSpans(h.sink)
	require.Equal(t, 1, count[id])
	ev := evaluationEvents(byID[id].span)[scoring.Bias]
	require.NotEqual(t, pcommon.Map{}, ev)
	assert.Equal(t, "not_scorable", mustStr(t, ev, evalconv.AttrScoreLabel))
	_, hasScore := ev.Get(evalconv.AttrScoreValue)
	assert.False(t, hasScore)
	assert.NotEmpty(t, mustStr(t, ev, evalconv.AttrExplanation))
	assert.Equal(t, "not_scorable", mustStr(t, byID[id].span.Attributes(), "llm_eval.bias.label"))
	assert.Zero(t, bias.calls.Load())
}

// TestEmptyOutputNeverReachesTheScorers: a generation whose answer is
// empty or blank, in any convention, is not scorable here and never
// scored; the scorers' own rule for an empty output (hallucination scores
// it 0) is for callers of the library, not for spans that carry no answer.
func TestEmptyOutputNeverReachesTheScorers(t *testing.T) {
	// span adds a span with string attributes given as key, value pairs.
	span := func(name string, kv ...string) func(b *batchBuilder) pcommon.SpanID {
		return func(b *batchBuilder) pcommon.SpanID {
			s := b.spans.AppendEmpty()
			s.SetTraceID(randomTraceID())
			s.SetSpanID(nextSpanID())
			s.SetName(name)
			for i := 0; i+1 < len(kv); i += 2 {
				s.Attributes().PutStr(kv[i], kv[i+1])
			}
			return s.SpanID()
		}
	}
	tests := map[string]struct {
		add    func(b *batchBuilder) pcommon.SpanID
		reason string
	}{
		"gen_ai empty text": {func(b *batchBuilder) pcommon.SpanID { return b.generation(randomTraceID(), "What is the status?", "") },
			"no output content"},
		"gen_ai blank text": {func(b *batchBuilder) pcommon.SpanID {
			return b.generation(randomTraceID(), "What is the status?", " \n\t ")
		}, "no output content"},
		"openinference empty message": {span("ChatCompletion", "openinference.span.kind", "LLM",
			"llm.input_messages.0.message.role", "user", "llm.input_messages.0.message.content", "What is the status?",
			"llm.output_messages.0.message.role", "assistant", "llm.output_messages.0.message.content", ""),
			"llm.output_messages.0.message.content is empty"},
		"vercel empty text": {span("ai.generateText.doGenerate", "ai.operationId", "ai.generateText.doGenerate",
			"ai.prompt.messages", `[{"role":"user","content":[{"type":"text","text":"What is the status?"}]}]`,
			"ai.response.text", "", "ai.response.finishReason", "stop"),
			"ai.response.text is empty"},
	}
	for name, tt := range tests {
		add := tt.add
		t.Run(name, func(t *testing.T) {
			hall := fixedScorer(scoring.Hallucination, 0, scoring.LabelPass)
			bias := fixedScorer(scoring.Bias, 0, scoring.LabelPass)
			h := newHarness(t, testConfig(scoring.Hallucination, scoring.Bias), hall, bias)
			b := newBatch()
			id := add(b)
			h.consume(b.td)

			byID, count := sinkSpans(h.sink)
			require.Equal(t, 1, count[id], "forwarded once, with its batch")
			for _, name := range []string{scoring.Hallucination, scoring.Bias} {
				ev := evaluationEvents(byID[id].span)[name]
				assert.Equal(t, "not_scorable", mustStr(t, ev, evalconv.AttrScoreLabel), name)
				assert.Equal(t, tt.reason, mustStr(t, ev, evalconv.AttrExplanation), name)
				_, hasScore := ev.Get(evalconv.AttrScoreValue)
				assert.False(t, hasScore, name)
			}
			assert.Zero(t, hall.calls.Load(), "hallucination scorer called")
			assert.Zero(t, bias.calls.Load(), "bias scorer called")
		})
	}
}

func TestScorerErrorsAreAnnotatedWithoutTheKey(t *testing.T) {
	cfg := testConfig(scoring.Bias)
	cfg.Judge.APIKey = "sk-very-secret"
	h := newHarness(t, cfg, failingScorer(scoring.Bias, scoring.ErrorJudgeAuth, "401 for key sk-very-secret"))
	b := newBatch()
	id := b.generation(randomTraceID(), "q", "a")
	h.consume(b.td)
	h.waitSpans(1)

	byID, _ := sinkSpans(h.sink)
	span := byID[id].span
	ev := evaluationEvents(span)[scoring.Bias]
	assert.Equal(t, "judge_auth", mustStr(t, ev, evalconv.AttrErrorType))
	_, hasLabel := ev.Get(evalconv.AttrScoreLabel)
	assert.False(t, hasLabel, "no score label on errors")
	_, hasScore := ev.Get(evalconv.AttrScoreValue)
	assert.False(t, hasScore)
	expl := mustStr(t, ev, evalconv.AttrExplanation)
	assert.Contains(t, expl, "401")
	assert.NotContains(t, expl, "sk-very-secret")
	assert.Equal(t, "error", mustStr(t, span.Attributes(), "llm_eval.bias.label"))
	assert.NotContains(t, mustStr(t, span.Attributes(), "llm_eval.bias.reason"), "sk-very-secret")
}

func TestScorerPanicBecomesError(t *testing.T) {
	boom := &fakeScorer{name: scoring.Bias, fn: func(context.Context, scoring.Case) scoring.Result { panic("boom") }}
	h := newHarness(t, testConfig(scoring.Bias), boom)
	b := newBatch()
	id := b.generation(randomTraceID(), "q", "a")
	h.consume(b.td)
	h.waitSpans(1)
	byID, _ := sinkSpans(h.sink)
	assert.Equal(t, "error", mustStr(t, byID[id].span.Attributes(), "llm_eval.bias.label"))
}

func TestLateResultBecomesChildSpan(t *testing.T) {
	gate := make(chan struct{})
	cfg := testConfig(scoring.Bias, scoring.Hallucination)
	cfg.MaxWait = 30 * time.Millisecond
	h := newHarness(t, cfg, fixedScorer(scoring.Bias, 0.4, scoring.LabelPass), gatedScorer(scoring.Hallucination, gate, false))
	b := newBatch()
	tid := randomTraceID()
	id := b.generation(tid, "q", "a")
	h.consume(b.td)

	// max_wait lets the span go with the result it has, and a marker for
	// the one it has not.
	h.waitSpans(1)
	byID, _ := sinkSpans(h.sink)
	events := evaluationEvents(byID[id].span)
	require.Len(t, events, 2)
	assert.Equal(t, "pass", mustStr(t, events[scoring.Bias], evalconv.AttrScoreLabel))
	assert.Equal(t, string(scoring.ErrorMaxWaitExceeded), mustStr(t, events[scoring.Hallucination], evalconv.AttrErrorType))
	assert.Equal(t, "error", mustStr(t, byID[id].span.Attributes(), evalconv.FlatLabel(scoring.Hallucination)))

	close(gate)
	h.waitSpans(2)
	byID, count := sinkSpans(h.sink)
	assert.Equal(t, 1, count[id])
	var late outSpan
	for sid, s := range byID {
		if sid != id {
			late = s
		}
	}
	assert.Equal(t, tid, late.span.TraceID())
	assert.Equal(t, id, late.span.ParentSpanID())
	assert.NotEqual(t, id, late.span.SpanID())
	assert.Equal(t, evalconv.LateSpanName, late.span.Name())
	assert.Equal(t, ptrace.SpanKindInternal, late.span.Kind())
	assert.Equal(t, "support-bot", mustStr(t, late.resource.Attributes(), "service.name"))
	assert.Equal(t, "opentelemetry.instrumentation.openai_v2", late.scope.Name())
	la := late.span.Attributes()
	assert.Equal(t, "evaluation", mustStr(t, la, evalconv.AttrOperationName))
	assert.Equal(t, scoring.Hallucination, mustStr(t, la, evalconv.AttrName))
	assert.Equal(t, "gpt-4o-mini", mustStr(t, la, evalconv.AttrRequestModel))
	assert.Equal(t, "chatcmpl-"+id.String(), mustStr(t, la, evalconv.AttrResponseID))
	assert.Equal(t, "pass", mustStr(t, la, "llm_eval.hallucination.label"))
	ev := evaluationEvents(late.span)[scoring.Hallucination]
	assert.Equal(t, "pass", mustStr(t, ev, evalconv.AttrScoreLabel))
}

func TestQueueFullPassesUnscored(t *testing.T) {
	cfg := testConfig(scoring.Bias)
	cfg.QueueSize = 2
	h := newHarness(t, cfg, hangingScorer(scoring.Bias))
	b := newBatch()
	var ids []pcommon.SpanID
	for range 5 {
		ids = append(ids, b.generation(randomTraceID(), "q", "a"))
	}
	h.consume(b.td)

	// Three did not fit: they went on in the original batch, unscored,
	// with the queue_full marker.
	byID, _ := sinkSpans(h.sink)
	assert.Len(t, byID, 3)
	for _, s := range byID {
		ev := evaluationEvents(s.span)[scoring.Bias]
		require.NotEqual(t, pcommon.Map{}, ev)
		assert.Equal(t, string(scoring.ErrorQueueFull), mustStr(t, ev, evalconv.AttrErrorType))
		assert.Equal(t, "error", mustStr(t, s.span.Attributes(), evalconv.FlatLabel(scoring.Bias)))
	}
	h.shutdown()
	_, count := sinkSpans(h.sink)
	for _, id := range ids {
		assert.Equal(t, 1, count[id], "span %s", id)
	}
	assert.Len(t, count, 5)
}

func TestShutdownForwardsHeldSpans(t *testing.T) {
	h := newHarness(t, testConfig(scoring.Bias, scoring.Hallucination),
		fixedScorer(scoring.Bias, 0.1, scoring.LabelPass), hangingScorer(scoring.Hallucination))
	b := newBatch()
	var ids []pcommon.SpanID
	for range 3 {
		ids = append(ids, b.generation(randomTraceID(), "q", "a"))
	}
	h.consume(b.td)
	// Wait until the quick scorer's results are in.
	require.Eventually(t, func() bool {
		st := h.p.store.Stats()
		return st.Held == 3 && st.Results == 3
	}, 10*time.Second, 5*time.Millisecond)
	assert.Zero(t, h.sink.SpanCount())

	h.shutdown()
	byID, count := sinkSpans(h.sink)
	require.Len(t, count, 3)
	for _, id := range ids {
		assert.Equal(t, 1, count[id])
		events := evaluationEvents(byID[id].span)
		assert.Len(t, events, 2, "held span leaves with the results it has and a marker for the others")
		assert.Equal(t, "pass", mustStr(t, events[scoring.Bias], evalconv.AttrScoreLabel))
		assert.Equal(t, string(scoring.ErrorShutdown), mustStr(t, events[scoring.Hallucination], evalconv.AttrErrorType))
	}
	// Shutdown twice is fine, and spans after shutdown pass through.
	h.shutdown()
	b2 := newBatch()
	late := b2.generation(randomTraceID(), "q", "a")
	h.consume(b2.td)
	_, count = sinkSpans(h.sink)
	assert.Equal(t, 1, count[late])
}

func TestShutdownWithShortDeadline(t *testing.T) {
	gate := make(chan struct{})
	stubborn := gatedScorer(scoring.Bias, gate, true)
	h := newHarness(t, testConfig(scoring.Bias), stubborn)
	b := newBatch()
	id := b.generation(randomTraceID(), "q", "a")
	h.consume(b.td)
	require.Eventually(t, func() bool { return stubborn.calls.Load() == 1 }, 5*time.Second, time.Millisecond)
	require.Equal(t, 1, h.p.store.HeldCount())
	require.Zero(t, h.sink.SpanCount())

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := h.proc.Shutdown(ctx)
	require.Error(t, err, "a scorer ignoring cancellation outlives the deadline")
	_, count := sinkSpans(h.sink)
	assert.Equal(t, 1, count[id], "the held span is forwarded before waiting")

	close(gate) // let the stubborn scorer finish so no goroutine leaks
	h.p.store.Wait()
	_, count = sinkSpans(h.sink)
	assert.Len(t, count, 1, "a result after shutdown is dropped, not emitted")
}

func TestShutdownWithoutStart(t *testing.T) {
	p, proc, err := newTracesProcessor(context.Background(), testSettings(), testConfig(scoring.Bias), new(nopSink), nil)
	require.NoError(t, err)
	require.NotNil(t, p)
	require.NoError(t, proc.Shutdown(context.Background()))
	require.NoError(t, proc.Shutdown(context.Background()))
}

func TestSamplingZeroHoldsNothing(t *testing.T) {
	cfg := testConfig(scoring.Bias)
	cfg.Sampling.Percentage = 0
	bias := fixedScorer(scoring.Bias, 0.2, scoring.LabelPass)
	h := newHarness(t, cfg, bias)
	b := newBatch()
	id := b.generation(randomTraceID(), "q", "a")
	h.consume(b.td)
	byID, _ := sinkSpans(h.sink)
	require.Contains(t, byID, id)
	assert.Empty(t, evaluationEvents(byID[id].span))
	assert.Zero(t, bias.calls.Load())
}

func TestNeverScoresJudgeOrAggregateSpans(t *testing.T) {
	bias := fixedScorer(scoring.Bias, 0.2, scoring.LabelPass)
	h := newHarness(t, testConfig(scoring.Bias), bias)
	b := newBatch()
	tid := randomTraceID()
	agent := b.generation(tid, "q", "a")
	judge := b.generation(tid, "q", "a")
	b.td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().PutStr("gen_ai.operation.name", "invoke_agent")
	b.td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(1).Attributes().PutStr("gen_ai.operation.name", "evaluation")
	h.consume(b.td)
	byID, _ := sinkSpans(h.sink)
	require.Len(t, byID, 2)
	assert.Empty(t, evaluationEvents(byID[agent].span))
	assert.Empty(t, evaluationEvents(byID[judge].span))
	assert.Zero(t, bias.calls.Load())
}

// TestEverySpanLeavesExactlyOnce races completion against max_wait over
// many spans: every span comes out once, and each of its results is either
// on it or on exactly one late child span.
func TestEverySpanLeavesExactlyOnce(t *testing.T) {
	jitter := func(name string) *fakeScorer {
		return &fakeScorer{name: name, fn: func(ctx context.Context, _ scoring.Case) scoring.Result {
			select {
			case <-time.After(time.Duration(time.Now().UnixNano()%3) * time.Millisecond):
			case <-ctx.Done():
			}
			return scoring.Result{Label: scoring.LabelPass, Score: 0.1}
		}}
	}
	cfg := testConfig(scoring.Bias, scoring.Hallucination, scoring.PromptAlignment)
	cfg.MaxWait = 2 * time.Millisecond
	cfg.Judge.MaxConcurrency = 4
	h := newHarness(t, cfg, jitter(scoring.Bias), jitter(scoring.Hallucination), jitter(scoring.PromptAlignment))

	var ids []pcommon.SpanID
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				b := newBatch()
				tid := randomTraceID()
				b.other(tid)
				id := b.generation(tid, "q", "a")
				mu.Lock()
				ids = append(ids, id)
				mu.Unlock()
				require.NoError(t, h.proc.ConsumeTraces(context.Background(), b.td))
			}
		}()
	}
	wg.Wait()
	h.drain()

	byID, count := sinkSpans(h.sink)
	results := map[pcommon.SpanID]int{}
	for id, s := range byID {
		require.Equal(t, 1, count[id], "span %s forwarded %d times", id, count[id])
		verdicts := 0
		for _, ev := range evaluationEvents(s.span) {
			if _, marker := ev.Get(evalconv.AttrErrorType); !marker { // the scorers always pass
				verdicts++
			}
		}
		if s.span.Name() == evalconv.LateSpanName {
			results[s.span.ParentSpanID()] += verdicts
		} else {
			results[id] += verdicts
		}
	}
	for _, id := range ids {
		require.Equal(t, 1, count[id])
		assert.Equal(t, 3, results[id], "results of span %s", id)
	}
	assert.Zero(t, h.p.store.HeldCount())
}

func TestLateSpanNotRescored(t *testing.T) {
	// A late child span fed back into the processor is a judge span: passed through.
	bias := fixedScorer(scoring.Bias, 0.2, scoring.LabelPass)
	h := newHarness(t, testConfig(scoring.Bias), bias)
	td := resultwrite.NewLateSpan(resultwrite.LateTemplate(newBatch().td.ResourceSpans().At(0), newBatch().td.ResourceSpans().At(0).ScopeSpans().At(0)),
		resultwrite.Evaluated{TraceID: randomTraceID(), SpanID: nextSpanID()},
		evalResult{Scorer: scoring.Bias, Result: scoring.Result{Label: scoring.LabelPass}, At: time.Now()}, strings.Clone)
	h.consume(td)
	assert.Equal(t, 1, h.sink.SpanCount())
	assert.Zero(t, bias.calls.Load())
}

func mustStr(t *testing.T, m pcommon.Map, key string) string {
	t.Helper()
	v, ok := m.Get(key)
	require.True(t, ok, "missing %s", key)
	return v.Str()
}

func mustDouble(t *testing.T, m pcommon.Map, key string) float64 {
	t.Helper()
	v, ok := m.Get(key)
	require.True(t, ok, "missing %s", key)
	require.Equal(t, pcommon.ValueTypeDouble, v.Type())
	return v.Double()
}

func TestFastPathDoesNotAllocate(t *testing.T) {
	cfg := testConfig(scoring.Bias)
	cfg.Sampling.Percentage = 0
	h := newHarness(t, cfg, fixedScorer(scoring.Bias, 0.1, scoring.LabelPass))
	b := newBatch()
	tid := randomTraceID()
	for range 99 {
		b.other(tid)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, forward, _, _ := h.p.processTraces(context.Background(), b.td); !forward {
			t.Fatal("the batch was not forwarded")
		}
	})
	assert.Zero(t, allocs, "a batch without sampled generation spans is passed on as is")
	assert.Equal(t, 99, b.td.SpanCount())
}
