//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
	"github.com/llm-eval/llm_eval/test/internal/collectortest"
)

// ragScorers are the scorers a RAG service runs beside hallucination.
var ragScorers = []string{"answer_relevancy", "context_relevance", "toxicity"}

// TestRAGScorersEndToEnd runs answer_relevancy, context_relevance and
// toxicity in the built collector on the OpenInference RAG trace, sent in
// two requests (the LLM span first, its retriever second): every scorer
// scores the LLM span, context_relevance's judge call carries the
// retriever's document, and the metrics connector counts all three by
// service and model.
func TestRAGScorersEndToEnd(t *testing.T) {
	const doc = "Refunds for card payments are issued within 5 business days after the returned item reaches our warehouse."
	bin := collectortest.Binary(t)
	judge := scoringtest.New(t)
	dir := t.TempDir()
	p := ports{otlp: collectortest.FreePort(t), prom: collectortest.FreePort(t), health: collectortest.FreePort(t), telemetry: collectortest.FreePort(t)}
	cfgPath := writeConfig(t, dir, judge.URL, p)
	raw, err := os.ReadFile(cfgPath)
	require.NoError(t, err)
	const builtIn = "      - name: bias\n      - name: hallucination\n      - name: prompt_alignment\n"
	require.Contains(t, string(raw), builtIn, "the shared e2e config changed: update this test")
	rag := "      - name: hallucination\n" +
		"      - name: answer_relevancy\n        uncertainty_weight: 0.3\n" +
		"      - name: context_relevance\n        context_penalties: {missing_context_per_item: 0.15}\n" +
		"      - name: toxicity\n        reason_mode: summary\n"
	require.NoError(t, os.WriteFile(cfgPath, []byte(strings.Replace(string(raw), builtIn, rag, 1)), 0o600))
	startCollector(t, bin, cfgPath, dir)

	ctx, cancel := context.WithTimeout(context.Background(), 3*waitLimit)
	defer cancel()
	waitHealthy(ctx, t, p)

	fixtures := filepath.Join("..", "..", "testdata", "otlp", "tracecontext")
	genIDs := postOTLPJSON(t, p.otlp, filepath.Join(fixtures, "openinference_rag_generation.json"))
	ctxIDs := postOTLPJSON(t, p.otlp, filepath.Join(fixtures, "openinference_rag_context.json"))
	all := append(append([]string(nil), genIDs...), ctxIDs...)
	spans := waitForSpans(t, filepath.Join(dir, "traces.jsonl"), all)
	for _, id := range all {
		assert.Len(t, spans[id], 1, "span %s leaves exactly once", id)
	}

	scored := map[string]string{}
	for _, id := range genIDs {
		for _, name := range append([]string{"hallucination"}, ragScorers...) {
			if v, ok := spans[id][0].Attributes().Get(evalconv.FlatLabel(name)); ok {
				scored[name] = v.Str()
			}
		}
	}
	for _, name := range append([]string{"hallucination"}, ragScorers...) {
		assert.Contains(t, []string{"pass", "fail"}, scored[name], "%s scores the LLM span", name)
	}

	steps := map[string]bool{}
	docJudged := false
	for _, c := range judge.Calls() {
		steps[c.Step] = true
		docJudged = docJudged || (c.Step == "context_relevance_evaluations" && strings.Contains(c.Text(), doc))
	}
	for _, step := range []string{"answer_relevancy_statements", "answer_relevancy_results", "context_relevance_evaluations", "toxicity_verdicts"} {
		assert.True(t, steps[step], "no judge call for step %s", step)
	}
	assert.True(t, docJudged, "context_relevance judged the retriever's document")

	promURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", p.prom)
	var metrics string
	require.Eventually(t, func() bool {
		_, body, err := httpGet(ctx, promURL)
		metrics = body
		ok := err == nil
		for _, name := range ragScorers {
			ok = ok && hasLine(body, "gen_ai_evaluation_score_count{", `gen_ai_evaluation_name="`+name+`"`)
		}
		return ok
	}, waitLimit, 250*time.Millisecond, "RAG evaluation metrics did not reach the prometheus exporter")
	for _, name := range ragScorers {
		assert.True(t, hasLine(metrics, "gen_ai_evaluation_results_total{", `gen_ai_evaluation_name="`+name+`"`,
			`gen_ai_request_model="gpt-4o-mini"`, `job="refund-rag"`, `gen_ai_evaluation_score_label="`+scored[name]+`"`),
			"no results line for %s with service, model and label in:\n%s", name, metrics)
	}
}
