package llmevalprocessor

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/scoring"
)

// clientBatches reads what a real instrumentation library sent, captured
// by test/clients into testdata/otlp/clients/<app>/<signal>.jsonl: one
// OTLP/JSON export request per line, in arrival order. A missing file
// means the library sends nothing on that signal.
func clientBatches(t *testing.T, app, signal string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "otlp", "clients", app, signal+".jsonl"))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	require.NoError(t, sc.Err())
	return out
}

func clientTraces(t *testing.T, line string) ptrace.Traces {
	t.Helper()
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces([]byte(line))
	require.NoError(t, err)
	return td
}

func clientLogs(t *testing.T, line string) plog.Logs {
	t.Helper()
	ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs([]byte(line))
	require.NoError(t, err)
	return ld
}

// caseRecorder is a set of fake scorers that record the cases they get.
type caseRecorder struct {
	mu    sync.Mutex
	cases map[string][]scoring.Case
}

func (r *caseRecorder) scorers(names ...string) []scoring.Scorer {
	r.cases = map[string][]scoring.Case{}
	var out []scoring.Scorer
	for _, n := range names {
		out = append(out, &fakeScorer{name: n, fn: func(_ context.Context, c scoring.Case) scoring.Result {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.cases[n] = append(r.cases[n], c)
			return scoring.Result{Label: scoring.LabelPass, Score: 0}
		}})
	}
	return out
}

func (r *caseRecorder) get(name string) []scoring.Case {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]scoring.Case(nil), r.cases[name]...)
}

// TestContentInLogEventsScoredOnce sends what the official OpenTelemetry
// JS and the Elastic OpenAI instrumentations sent for a tool loop of two
// calls (spans without content, content as per-message log events) through
// one llm_eval in a traces and a logs pipeline, in both orders of the two
// signals: the answering call is evaluated once, its results on its span
// and as records; the call that only asks for the tool gets nothing.
func TestContentInLogEventsScoredOnce(t *testing.T) {
	const toolResult = "Order 1042 shipped on 2025-12-18 with DHL, tracking number JD0142, expected delivery 2025-12-22."
	names := []string{scoring.Bias, scoring.Hallucination, scoring.PromptAlignment}
	for _, app := range []string{"otel-openai", "elastic-openai"} {
		for _, tracesFirst := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/traces first %v", app, tracesFirst), func(t *testing.T) {
				var rec caseRecorder
				cfg := testConfig(names...)
				cfg.MaxWait = time.Minute
				cfg.LogEvents.CrossSignalWait = time.Hour
				h := (&bothHarness{}).start(t, cfg, rec.scorers(names...)...)
				traces, logs := clientBatches(t, app, "traces"), clientBatches(t, app, "logs")
				require.NotEmpty(t, traces)
				require.NotEmpty(t, logs)
				sendTraces := func() {
					for _, line := range traces {
						h.consumeSpan(clientTraces(t, line))
					}
				}
				sendLogs := func() {
					for _, line := range logs {
						h.consumeEvents(clientLogs(t, line))
					}
				}
				if tracesFirst {
					sendTraces()
					sendLogs()
				} else {
					sendLogs()
					sendTraces()
				}
				require.Eventually(t, func() bool { return h.spans.SpanCount() == 2 }, 10*time.Second, 5*time.Millisecond)
				require.Eventually(t, func() bool { return len(rec.get(scoring.Bias)) == 1 }, 10*time.Second, 5*time.Millisecond)
				h.shutdown()

				for _, n := range names {
					cases := rec.get(n)
					require.Len(t, cases, 1, "%s: one evaluation", n)
					c := cases[0]
					assert.Equal(t, "Where is my order 1042?", c.Input)
					assert.Equal(t, "Your order 1042 shipped on 2025-12-18 with DHL and should arrive on 2025-12-22 [get_order_status].", c.Output)
					if n == scoring.Hallucination {
						assert.Equal(t, []string{toolResult}, c.Context)
					}
					if n == scoring.PromptAlignment {
						require.Len(t, c.Instructions, 1)
						assert.Contains(t, c.Instructions[0], "Never promise a refund.")
					}
				}
				var scored, bare int
				for _, td := range h.spans.AllTraces() {
					for _, rs := range td.ResourceSpans().All() {
						for _, ss := range rs.ScopeSpans().All() {
							for _, sp := range ss.Spans().All() {
								got := len(evaluationEvents(sp))
								switch got {
								case 0:
									bare++
								case len(names):
									scored++
								}
								out := h.outcome(call{trace: sp.TraceID(), span: sp.SpanID()})
								assert.Len(t, out.records, got, "records of span %s: as many as its results", sp.SpanID())
								assert.Equal(t, got, out.onSpan)
							}
						}
					}
				}
				assert.Equal(t, 1, scored, "the answering call's span carries every result")
				assert.Equal(t, 1, bare, "the tool-calling call's span carries none")
			})
		}
	}
}

// TestTracesOnlyClientsScoredOnce sends what real instrumentation
// libraries sent (test/clients) through the processor in a traces pipeline
// at default settings, unless a case says otherwise: each answer is
// evaluated once per scorer, with the question, answer and context the
// judge must see; tool-calling steps get nothing.
func TestTracesOnlyClientsScoredOnce(t *testing.T) {
	const (
		toolResult = "Order 1042 shipped on 2025-12-18 with DHL, tracking number JD0142, expected delivery 2025-12-22."
		warranty   = "Warranty policy: the frame of the Orbit e-bike has a 10-year warranty; its battery and motor have a 2-year warranty."
		returns    = "Returns policy: unused bikes can be returned within 30 days of delivery."
		order      = "Where is my order 1042?"
		orderReply = "Your order 1042 shipped on 2025-12-18 with DHL and should arrive on 2025-12-22 [get_order_status]."
		ragAsk     = "How long is the warranty on the frame of the Orbit e-bike?"
		ragReply   = "The frame of the Orbit e-bike has a 10-year warranty [Warranty policy]."
	)
	tests := []struct {
		app           string
		sources       []string // hallucination's context_sources; nil: the default
		input, output string
		context       func(t *testing.T, ctx []string)
	}{
		{app: "openinference-openai", input: order, output: orderReply,
			context: func(t *testing.T, ctx []string) { assert.Equal(t, []string{toolResult}, ctx) }},
		{app: "traceloop-openai", input: order, output: orderReply,
			context: func(t *testing.T, ctx []string) { assert.Equal(t, []string{toolResult}, ctx) }},
		{app: "aisdk-agent", input: order, output: orderReply,
			context: func(t *testing.T, ctx []string) { assert.Equal(t, []string{toolResult}, ctx) }},
		{app: "mastra-agent", input: order, output: orderReply,
			context: func(t *testing.T, ctx []string) {
				assert.Equal(t, []string{toolResult}, ctx, "the tool's result, joined from its execute_tool span")
			}},
		{app: "openinference-langchain", input: ragAsk, output: ragReply,
			context: func(t *testing.T, ctx []string) {
				assert.Equal(t, []string{warranty, returns}, ctx, "the retriever's documents, three levels below the LLM span's sibling")
			}},
		{app: "traceloop-langchain", input: ragAsk, output: ragReply,
			context: func(t *testing.T, ctx []string) {
				assert.Empty(t, ctx, "every span in a trace of its own: no retriever to join")
			}},
		{app: "traceloop-anthropic", input: order, output: orderReply,
			context: func(t *testing.T, ctx []string) { assert.Equal(t, []string{toolResult}, ctx, "the tool_result block") }},
		{app: "openinference-anthropic", input: order, output: orderReply,
			context: func(t *testing.T, ctx []string) { assert.Equal(t, []string{toolResult}, ctx, "the tool_result block") }},
		{app: "langfuse-openai", input: order, output: orderReply,
			context: func(t *testing.T, ctx []string) { assert.Equal(t, []string{toolResult}, ctx) }},
		{app: "genkit-openai", input: order, output: orderReply,
			context: func(t *testing.T, ctx []string) { assert.Equal(t, []string{toolResult}, ctx, "the toolResponse part") }},
		{app: "langgraph-agent", input: ragAsk, output: ragReply,
			context: func(t *testing.T, ctx []string) {
				assert.Equal(t, []string{warranty + "\n\n" + returns}, ctx, "the tool's result, which holds the retriever's documents")
			}},
		{app: "traceloop-llamaindex", input: ragAsk, output: ragReply,
			context: func(t *testing.T, ctx []string) {
				assert.Equal(t, []string{warranty, returns}, ctx, "the retrieved nodes' texts, not the query's embedding")
			}},
		{app: "traceloop-langchain", sources: []string{contextSourceTrace, contextSourceToolMessages, contextSourceSystem},
			input: ragAsk, output: ragReply,
			context: func(t *testing.T, ctx []string) {
				require.Len(t, ctx, 1, "the system prompt, which holds the documents")
				assert.Contains(t, ctx[0], warranty)
			}},
	}
	names := []string{scoring.Bias, scoring.Hallucination, scoring.PromptAlignment}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.app, tt.sources), func(t *testing.T) {
			var rec caseRecorder
			cfg := testConfig(names...)
			cfg.TraceContext.ContextWait = 100 * time.Millisecond
			if tt.sources != nil {
				cfg.Scorers[1].ContextSources = tt.sources
			}
			h := newHarness(t, cfg, rec.scorers(names...)...)
			batches := clientBatches(t, tt.app, "traces")
			require.NotEmpty(t, batches)
			spans := 0
			for _, line := range batches {
				td := clientTraces(t, line)
				spans += td.SpanCount()
				h.consume(td)
			}
			h.waitSpans(spans)
			h.drain()
			_, count := sinkSpans(h.sink)
			assert.Len(t, count, spans)
			for id, n := range count {
				assert.Equal(t, 1, n, "span %s leaves once", id)
			}
			for _, n := range names {
				cases := rec.get(n)
				require.Len(t, cases, 1, "%s: one evaluation", n)
				c := cases[0]
				assert.Equal(t, tt.input, c.Input, n)
				assert.Equal(t, tt.output, c.Output, n)
				if n == scoring.Hallucination {
					tt.context(t, c.Context)
				}
				if n == scoring.PromptAlignment {
					require.NotEmpty(t, c.Instructions)
					assert.Contains(t, c.Instructions[0], "Answer in English.")
				}
			}
		})
	}
}
