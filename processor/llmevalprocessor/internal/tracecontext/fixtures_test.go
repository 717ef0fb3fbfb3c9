package tracecontext

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
)

// fixtureConfig is the index the processor builds by default.
var fixtureConfig = Config{MaxTraces: 10_000, MaxBytes: 64 << 20, TTL: 2 * time.Minute, MaxDocumentBytes: 32 << 10, MaxTraceBytes: 4 << 20}

func loadTraceContextBatch(t *testing.T, name string) ptrace.Traces {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "testdata", "otlp", "tracecontext", name))
	require.NoError(t, err)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
	require.NoError(t, err)
	return td
}

// indexBatch feeds a batch to the index the way the processor is meant to:
// add the GenAI spans, then link the batch. It returns the generation and
// agent spans seen and whether the batch brought new context.
func indexBatch(ix *Index, td ptrace.Traces) (gens, agents []ptrace.Span, gained bool) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, span := range ss.Spans().All() {
				s := Span{
					TraceID: span.TraceID(), SpanID: span.SpanID(), ParentID: span.ParentSpanID(),
					Start: span.StartTimestamp(), End: span.EndTimestamp(),
				}
				switch genai.Classify(rs.Resource(), span) {
				case genai.KindContext:
					src := genai.ReadContext(span)
					s.Role, s.Texts = src.Role, src.Texts
					gained = ix.Add(s) || gained
				case genai.KindGeneration:
					ix.Add(s)
					gens = append(gens, span)
				case genai.KindAggregate:
					if genai.IsAgent(span) {
						ix.Add(s)
						agents = append(agents, span)
					}
				}
			}
		}
	}
	ix.LinkAll(td)
	return gens, agents, gained
}

// TestTraceContextFixtures checks the trace context fixtures: in both orders the
// generation's case gets its siblings' documents, and the agent span reads
// as the user's request and final answer with all the trace's context.
func TestTraceContextFixtures(t *testing.T) {
	const (
		doc1 = "Refunds for card payments are issued within 5 business days after the returned item reaches our warehouse."
		doc2 = "Orders paid by bank transfer are refunded within 10 business days."
		// The tool result is a JSON object; it is read as compact JSON.
		tool = `{"order_id":"1042","payment":"card","received_at_warehouse":"2026-11-20","status":"returned"}`
	)
	shapes := []struct {
		name, context, generation string
		question, answer          string
		want                      []string
	}{
		{
			name: "openinference", context: "openinference_rag_context.json", generation: "openinference_rag_generation.json",
			question: "How long do refunds take for orders paid by card?",
			answer:   "Card refunds are issued within 5 business days after the returned item reaches the warehouse.",
			want:     []string{doc1, doc2},
		},
		{
			name: "semconv agent", context: "semconv_agent_context.json", generation: "semconv_agent_generation.json",
			question: "I returned order 1042. When will I get my money back?",
			answer:   "Your order 1042 was paid by card and reached our warehouse on 20 November, so the refund is issued within 5 business days of that date.",
			want:     []string{doc1, doc2, tool},
		},
	}
	for _, shape := range shapes {
		for _, contextFirst := range []bool{true, false} {
			name := shape.name + "/context_after"
			if contextFirst {
				name = shape.name + "/context_before"
			}
			t.Run(name, func(t *testing.T) {
				ix, err := New(fixtureConfig)
				require.NoError(t, err)
				order := []string{shape.generation, shape.context}
				if contextFirst {
					order = []string{shape.context, shape.generation}
				}
				var gens, agents []ptrace.Span
				for i, file := range order {
					g, a, gained := indexBatch(ix, loadTraceContextBatch(t, file))
					gens, agents = append(gens, g...), append(agents, a...)
					assert.Equal(t, file == shape.context, gained, "batch %d (%s) gains context", i, file)
				}
				require.Len(t, gens, 1)
				require.Len(t, agents, 1)

				gen := gens[0]
				read := genai.Read(gen)
				assert.Empty(t, read.Context(), "the generation span itself carries no context")
				assert.Equal(t, shape.question, read.Input)
				got := ix.ContextFor(gen.TraceID(), gen.SpanID(), gen.ParentSpanID(), gen.EndTimestamp(), ScopeSiblings)
				assert.Equal(t, shape.want, got)

				agent := agents[0]
				ar := genai.ReadAgent(agent)
				assert.Equal(t, shape.question, ar.Input)
				assert.Equal(t, shape.answer, ar.Output)
				assert.Empty(t, ar.Missing)
				assert.Equal(t, shape.want, ix.ContextFor(agent.TraceID(), agent.SpanID(), agent.ParentSpanID(), agent.EndTimestamp(), ScopeSubtree))
			})
		}
	}
}
