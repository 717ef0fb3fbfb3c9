package llmevalprocessor

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/contextrelevance"
	"github.com/llm-eval/llm_eval/scoring/openai"
	"github.com/llm-eval/llm_eval/scoring/scorers"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// resultRecorder wraps real scorers and keeps the results they return.
type resultRecorder struct {
	mu      sync.Mutex
	results map[string][]scoring.Result
}

type recordingScorer struct {
	scoring.Scorer
	r *resultRecorder
}

func (s recordingScorer) Score(ctx context.Context, c scoring.Case) scoring.Result {
	res := s.Scorer.Score(ctx, c)
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	s.r.results[s.Name()] = append(s.r.results[s.Name()], res)
	return res
}

// scriptedScorers builds the real scorers of names with opts, judged by a
// scripted judge server (returned for its calls), each recording its
// results.
func scriptedScorers(t *testing.T, opts scoring.Options, names ...string) (*scoringtest.Server, *resultRecorder, []scoring.Scorer) {
	t.Helper()
	srv := scoringtest.New(t)
	judge, err := openai.NewJudge(openai.Config{BaseURL: srv.URL, Model: "scripted", HTTPClient: http.DefaultClient})
	require.NoError(t, err)
	rec := &resultRecorder{results: map[string][]scoring.Result{}}
	var built []scoring.Scorer
	for _, n := range names {
		s, err := scorers.New(n, judge, opts)
		require.NoError(t, err)
		built = append(built, recordingScorer{Scorer: s, r: rec})
	}
	return srv, rec, built
}

// ragGoldenResult is what a golden keeps of one result: its verdict and
// the analyze step, which names the context items context_relevance
// judged.
type ragGoldenResult struct {
	Label   scoring.Label `json:"label"`
	Score   *float64      `json:"score,omitempty"`
	Reason  string        `json:"reason"`
	Analyze any           `json:"analyze,omitempty"`
}

// TestRAGScorersOnClientCaptures runs the RAG scorers (hallucination,
// answer_relevancy, context_relevance, toxicity), real ones with the
// scripted judge, over what the RAG apps of test/clients sent (LangChain
// under OpenInference and Traceloop, LlamaIndex, a LangGraph agent with a
// retrieval tool).
// The OpenInference capture's LLM span gets its retriever's documents from
// the trace and context_relevance judges exactly those; the Traceloop
// capture puts every span in a trace of its own, so with the default
// sources context_relevance has no context (not_scorable), and with the
// system source it judges the system prompt holding the documents. The
// results are pinned in testdata/golden/rag_clients (-update rewrites).
func TestRAGScorersOnClientCaptures(t *testing.T) {
	const (
		warranty = "Warranty policy: the frame of the Orbit e-bike has a 10-year warranty; its battery and motor have a 2-year warranty."
		returns  = "Returns policy: unused bikes can be returned within 30 days of delivery."
	)
	names := []string{scoring.Hallucination, scoring.AnswerRelevancy, scoring.ContextRelevance, scoring.Toxicity}
	tests := []struct {
		golden  string
		app     string
		sources []string
		check   func(t *testing.T, got map[string]scoring.Result)
	}{
		{golden: "openinference_langchain", app: "openinference-langchain", check: func(t *testing.T, got map[string]scoring.Result) {
			cr := got[scoring.ContextRelevance]
			require.True(t, cr.Scored(), "context_relevance scored: %s %s", cr.Label, cr.Reason)
			evs := cr.Steps.Analyze.(contextrelevance.Evaluations).Evaluations
			require.Len(t, evs, 2)
			assert.Equal(t, warranty, evs[0].ContextPiece, "the retriever's documents, joined from the trace")
			assert.Equal(t, returns, evs[1].ContextPiece)
		}},
		{golden: "traceloop_llamaindex", app: "traceloop-llamaindex", check: func(t *testing.T, got map[string]scoring.Result) {
			cr := got[scoring.ContextRelevance]
			require.True(t, cr.Scored(), "context_relevance scored: %s %s", cr.Label, cr.Reason)
			evs := cr.Steps.Analyze.(contextrelevance.Evaluations).Evaluations
			require.Len(t, evs, 2, "the retrieved nodes, not the query's embedding")
			assert.Equal(t, warranty, evs[0].ContextPiece)
			assert.Equal(t, returns, evs[1].ContextPiece)
		}},
		{golden: "langgraph_agent", app: "langgraph-agent", check: func(t *testing.T, got map[string]scoring.Result) {
			cr := got[scoring.ContextRelevance]
			require.True(t, cr.Scored(), "context_relevance scored: %s %s", cr.Label, cr.Reason)
			evs := cr.Steps.Analyze.(contextrelevance.Evaluations).Evaluations
			require.Len(t, evs, 1, "the retrieval tool's result, which holds both documents")
			assert.Equal(t, warranty+"\n\n"+returns, evs[0].ContextPiece)
		}},
		{golden: "traceloop_langchain", app: "traceloop-langchain", check: func(t *testing.T, got map[string]scoring.Result) {
			assert.Equal(t, scoring.LabelNotScorable, got[scoring.ContextRelevance].Label, "no retriever in the LLM span's trace")
		}},
		{golden: "traceloop_langchain_system", app: "traceloop-langchain", sources: []string{contextSourceTrace, contextSourceToolMessages, contextSourceSystem},
			check: func(t *testing.T, got map[string]scoring.Result) {
				cr := got[scoring.ContextRelevance]
				require.True(t, cr.Scored(), "context_relevance scored: %s %s", cr.Label, cr.Reason)
				assert.Contains(t, cr.Steps.Analyze.(contextrelevance.Evaluations).Evaluations[0].ContextPiece, warranty)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			_, rec, built := scriptedScorers(t, scoring.Options{ReasonMode: scoring.ReasonSummary}, names...)
			cfg := testConfig(names...)
			cfg.TraceContext.ContextWait = 100 * time.Millisecond
			for i := range cfg.Scorers {
				if tt.sources != nil {
					cfg.Scorers[i].ContextSources = tt.sources
				}
			}
			h := newHarness(t, cfg, built...)
			spans := 0
			for _, line := range clientBatches(t, tt.app, "traces") {
				td := clientTraces(t, line)
				spans += td.SpanCount()
				h.consume(td)
			}
			h.waitSpans(spans)
			h.drain()

			got := map[string]scoring.Result{}
			golden := map[string]ragGoldenResult{}
			rec.mu.Lock()
			for _, n := range names {
				require.Len(t, rec.results[n], 1, "%s: one evaluation", n)
				r := rec.results[n][0]
				require.NoError(t, r.Err, n)
				got[n] = r
				g := ragGoldenResult{Label: r.Label, Reason: r.Reason, Analyze: r.Steps.Analyze}
				if r.Scored() {
					g.Score = &r.Score
				}
				golden[n] = g
			}
			rec.mu.Unlock()
			tt.check(t, got)

			actual, err := json.MarshalIndent(golden, "", "  ")
			require.NoError(t, err)
			path := filepath.Join("testdata", "golden", "rag_clients", tt.golden+".json")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, append(actual, '\n'), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run with -update to create %s", path)
			assert.JSONEq(t, string(want), string(actual), fmt.Sprintf("results differ from %s (run with -update and review the diff)", path))
		})
	}
}
