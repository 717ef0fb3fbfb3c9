package genai

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The RAG conversation of test/clients/scenario.json.
const (
	ragQuestion = "How long is the warranty on the frame of the Orbit e-bike?"
	ragDocument = "Warranty policy: the frame of the Orbit e-bike has a 10-year warranty; its battery and motor have a 2-year warranty."
	ragAnswer   = "The frame of the Orbit e-bike has a 10-year warranty [Warranty policy]."
)

// TestRAGClientCaptures reads what the LangGraph and LlamaIndex apps of
// test/clients sent: which span is the scored generation, what it holds,
// and which spans give the retrieved documents as context.
func TestRAGClientCaptures(t *testing.T) {
	tests := []struct {
		app        string
		generation string // name of the generation spans
		calls      int    // how many there are; the last one answers
		context    string // name of the span holding the retrieved documents
		role       ContextRole
		aggregate  string // the run's root span
		toolResult bool   // the answering call holds the documents as a tool result
	}{
		{app: "langgraph-agent", generation: "ChatOpenAI", calls: 2, context: "VectorStoreRetriever", role: RoleRetrieval, aggregate: "LangGraph", toolResult: true},
		{app: "traceloop-llamaindex", generation: "chat gpt-4o-mini", calls: 1, context: "vector_index_retriever.retrieve", role: RoleTool, aggregate: "context_chat_engine.chat"},
	}
	for _, tt := range tests {
		t.Run(tt.app, func(t *testing.T) {
			spans := readClientSpans(t, tt.app)
			gens := spans[tt.generation]
			require.Len(t, gens, tt.calls)
			var answered []Generation
			for _, s := range gens {
				require.Equal(t, KindGeneration, Classify(s.resource, s.span))
				if g := Read(s.span); g.Missing == "" {
					answered = append(answered, g)
				} else {
					assert.Equal(t, MissingToolCalls, g.Missing, "a call that only asks for the tool")
				}
			}
			require.Len(t, answered, 1, "one call answers")
			g := answered[0]
			assert.Equal(t, ragQuestion, g.Input)
			assert.Equal(t, ragAnswer, g.Output)
			require.NotEmpty(t, g.SystemInstructions)
			assert.Contains(t, g.SystemInstructions[0], "Never promise a refund.")
			if tt.toolResult {
				require.Len(t, g.ToolResults, 1)
				assert.Contains(t, g.ToolResults[0], ragDocument)
			}

			require.Len(t, spans[tt.context], 1)
			c := spans[tt.context][0]
			require.Equal(t, KindContext, Classify(c.resource, c.span))
			src := ReadContext(c.span)
			assert.Equal(t, tt.role, src.Role)
			assert.True(t, containsText(src.Texts, ragDocument), "retrieved documents %q", src.Texts)

			require.Len(t, spans[tt.aggregate], 1)
			root := spans[tt.aggregate][0]
			assert.Equal(t, KindAggregate, Classify(root.resource, root.span))
			assert.True(t, root.span.ParentSpanID().IsEmpty(), "the run's root")
		})
	}
}

func containsText(texts []string, s string) bool {
	for _, t := range texts {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}
