package llmevalprocessor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/scoring"
)

// langChainRAG builds the spans of a LangChain JS RAG chain traced by
// OpenInference, one batch per span as a SimpleSpanProcessor exports them:
// the retriever sits under RunnableSequence > RunnableMap > RunnableSequence,
// and the LLM span is a child of the root, so retriever and LLM share no
// parent. Batches are returned by name.
func langChainRAG(doc string) map[string]ptrace.Traces {
	trace := randomTraceID()
	ids := map[string]pcommon.SpanID{}
	for _, n := range []string{"root", "map", "inner", "retriever", "prompt", "llm", "parser"} {
		ids[n] = nextSpanID()
	}
	out := map[string]ptrace.Traces{}
	add := func(name, parent, kind string, fill func(pcommon.Map)) {
		b := newBatch()
		s := b.spans.AppendEmpty()
		s.SetTraceID(trace)
		s.SetSpanID(ids[name])
		if parent != "" {
			s.SetParentSpanID(ids[parent])
		}
		s.SetName(name)
		s.Attributes().PutStr("openinference.span.kind", kind)
		if fill != nil {
			fill(s.Attributes())
		}
		out[name] = b.td
	}
	add("root", "", "CHAIN", nil)
	add("map", "root", "CHAIN", nil)
	add("inner", "map", "CHAIN", nil)
	add("retriever", "inner", "RETRIEVER", func(a pcommon.Map) {
		a.PutStr("retrieval.documents.0.document.content", doc)
	})
	add("prompt", "root", "CHAIN", nil)
	add("llm", "root", "LLM", func(a pcommon.Map) {
		a.PutStr("llm.input_messages.0.message.role", "system")
		a.PutStr("llm.input_messages.0.message.content", "Answer from the context.")
		a.PutStr("llm.input_messages.1.message.role", "user")
		a.PutStr("llm.input_messages.1.message.content", "How fast are refunds?")
		a.PutStr("llm.output_messages.0.message.role", "assistant")
		a.PutStr("llm.output_messages.0.message.content", "Within 5 business days.")
	})
	add("parser", "root", "CHAIN", nil)
	return out
}

// TestNestedRetrieverJoinedInAnyOrder checks the default scope
// (siblings) on the LangChain shape: the retriever's document reaches the
// LLM span's hallucination case whatever order the single-span batches
// arrive in, and the generation waits for the links that connect it to the
// document rather than for the whole context_wait.
func TestNestedRetrieverJoinedInAnyOrder(t *testing.T) {
	const doc = "Refunds are issued within 5 business days."
	orders := [][]string{
		{"retriever", "inner", "map", "prompt", "llm", "parser", "root"}, // as exported: children first
		{"llm", "retriever", "inner", "map", "prompt", "parser", "root"}, // the generation first
		{"retriever", "llm", "root", "parser", "prompt", "map", "inner"}, // the links last
		{"inner", "prompt", "retriever", "llm", "map", "parser", "root"}, // a chain before the retriever, as captured
	}
	for _, order := range orders {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			cases := make(chan scoring.Case, 1)
			cfg := testConfig(scoring.Hallucination)
			cfg.MaxWait = time.Hour
			cfg.TraceContext.ContextWait = time.Hour // only the links can end the wait
			require.Equal(t, contextScopeSiblings, cfg.TraceContext.Scope, "the default scope")
			h := newHarness(t, cfg, &fakeScorer{name: scoring.Hallucination, fn: func(_ context.Context, c scoring.Case) scoring.Result {
				cases <- c
				return scoring.Result{Score: 0, Label: scoring.LabelPass}
			}})
			batches := langChainRAG(doc)
			for _, name := range order {
				h.consume(batches[name])
			}
			select {
			case c := <-cases:
				assert.Equal(t, []string{doc}, c.Context)
			case <-time.After(10 * time.Second):
				t.Fatal("the generation was not dispatched once its trace linked it to the document")
			}
			h.waitSpans(len(order))
			_, count := sinkSpans(h.sink)
			assert.Len(t, count, len(order))
			for id, n := range count {
				assert.Equal(t, 1, n, "span %s leaves once", id)
			}
		})
	}
}
