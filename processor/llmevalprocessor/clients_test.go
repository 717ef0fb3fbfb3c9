package llmevalprocessor

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

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

// TestMastraAgentScoredOnce sends the spans @mastra/otel-exporter sent for
// an agent with one tool through the processor at default settings: the
// answer is evaluated once per scorer, with the user's question, the
// system prompt's instructions and the tool's result from the trace.
func TestMastraAgentScoredOnce(t *testing.T) {
	const toolResult = "Order 1042 shipped on 2025-12-18 with DHL, tracking number JD0142, expected delivery 2025-12-22."
	names := []string{scoring.Bias, scoring.Hallucination, scoring.PromptAlignment}
	var rec caseRecorder
	h := newHarness(t, testConfig(names...), rec.scorers(names...)...)
	batches := clientBatches(t, "mastra-agent", "traces")
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
	for id, n := range count {
		assert.Equal(t, 1, n, "span %s leaves once", id)
	}
	for _, n := range names {
		cases := rec.get(n)
		require.Len(t, cases, 1, "%s: one evaluation, of the answering step", n)
		c := cases[0]
		assert.Equal(t, "Where is my order 1042?", c.Input)
		assert.Contains(t, c.Output, "Your order 1042 shipped on 2025-12-18")
		if n == scoring.Hallucination {
			assert.Equal(t, []string{toolResult}, c.Context, "the tool's result, joined from its execute_tool span")
		}
		if n == scoring.PromptAlignment {
			require.Len(t, c.Instructions, 1)
			assert.Contains(t, c.Instructions[0], "Answer in English.")
		}
	}
}
