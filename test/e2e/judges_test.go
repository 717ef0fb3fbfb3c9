//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
	"github.com/llm-eval/llm_eval/test/internal/collectortest"
)

// TestScorerJudgeAndFallbackEndToEnd runs the built collector with three
// fake judges on loopback: the shared judge, which answers every call with
// 503; its fallback; and toxicity's own judge. After the shared judge's
// first failure opens its circuit, bias is judged by the fallback, while
// toxicity is judged by its own judge throughout. The results name the
// judge model that answered, on the span events, the result log records
// and the metrics, and each judge got only its own API key.
func TestScorerJudgeAndFallbackEndToEnd(t *testing.T) {
	bin := collectortest.Binary(t)
	shared, fallback, own := scoringtest.New(t), scoringtest.New(t), scoringtest.New(t)
	shared.Handle(func(scoringtest.Call) scoringtest.Reply { return scoringtest.Status(http.StatusServiceUnavailable, "") })
	dir := t.TempDir()
	p := ports{otlp: collectortest.FreePort(t), prom: collectortest.FreePort(t), health: collectortest.FreePort(t), telemetry: collectortest.FreePort(t)}
	cfgPath := writeConfig(t, dir, shared.URL, p)
	raw, err := os.ReadFile(cfgPath)
	require.NoError(t, err)
	cfg := string(raw)
	const judgeTail = "      model: e2e-judge\n      timeout: 10s\n"
	const builtIn = "      - name: bias\n      - name: hallucination\n      - name: prompt_alignment\n"
	require.Contains(t, cfg, judgeTail, "the shared e2e config changed: update this test")
	require.Contains(t, cfg, builtIn, "the shared e2e config changed: update this test")
	cfg = strings.Replace(cfg, judgeTail, judgeTail+
		"      retry: {max_attempts: 1}\n"+
		"      circuit_breaker: {failure_threshold: 1, open_duration: 10m}\n"+
		"      fallback:\n"+
		"        endpoint: "+fallback.URL+"\n"+
		"        model: fallback-judge\n"+
		"        api_key: fallback-key\n", 1)
	cfg = strings.Replace(cfg, builtIn,
		"      - name: bias\n"+
			"      - name: toxicity\n"+
			"        judge:\n"+
			"          endpoint: "+own.URL+"\n"+
			"          model: small-judge\n"+
			"          api_key: toxicity-key\n", 1)
	require.NoError(t, os.WriteFile(cfgPath, []byte(cfg), 0o600))
	logPath := startCollector(t, bin, cfgPath, dir)

	ctx, cancel := context.WithTimeout(context.Background(), 3*waitLimit)
	defer cancel()
	waitHealthy(ctx, t, p)

	tracesPath := filepath.Join(dir, "traces.jsonl")
	first, _ := sendSpans(t, p.otlp)
	waitForSpans(t, tracesPath, []string{first.SpanID().String()})
	second, _ := sendSpans(t, p.otlp)
	spans := waitForSpans(t, tracesPath, []string{second.SpanID().String()})

	judged := func(span ptrace.Span) map[string]map[string]string {
		out := map[string]map[string]string{}
		for _, ev := range span.Events().All() {
			if ev.Name() != evalconv.EventName {
				continue
			}
			attrs := map[string]string{}
			for k, v := range ev.Attributes().All() {
				attrs[k] = v.AsString()
			}
			out[attrs[evalconv.AttrName]] = attrs
		}
		return out
	}
	one := judged(readSpans(t, tracesPath)[first.SpanID().String()][0])
	assert.Equal(t, "judge_unavailable", one["bias"][evalconv.AttrErrorType], "the shared judge's failure opens its circuit")
	assert.Equal(t, "small-judge", one["toxicity"][evalconv.AttrJudgeModel])
	two := judged(spans[second.SpanID().String()][0])
	assert.Contains(t, []string{"pass", "fail"}, two["bias"][evalconv.AttrScoreLabel], "the fallback judged bias: %v", two["bias"])
	assert.Equal(t, "fallback-judge", two["bias"][evalconv.AttrJudgeModel])
	assert.Equal(t, "small-judge", two["toxicity"][evalconv.AttrJudgeModel])
	assert.Regexp(t, `^[0-9a-f]{12}$`, two["bias"][evalconv.AttrPromptVersion])

	// Each judge got its own key, and the shared judge no call after its circuit opened.
	require.Len(t, shared.Calls(), 1)
	assert.Equal(t, "Bearer "+judgeAPIKey, shared.Calls()[0].Header.Get("Authorization"))
	require.NotEmpty(t, fallback.Calls())
	for _, c := range fallback.Calls() {
		assert.False(t, strings.HasPrefix(c.Step, "toxicity"), "the shared fallback judged %s", c.Step)
		assert.Equal(t, "Bearer fallback-key", c.Header.Get("Authorization"))
		assert.Equal(t, "fallback-judge", c.Request.Model)
	}
	require.NotEmpty(t, own.Calls())
	for _, c := range own.Calls() {
		assert.Equal(t, "Bearer toxicity-key", c.Header.Get("Authorization"))
		assert.False(t, strings.HasPrefix(c.Step, "bias"), "toxicity's judge judged %s", c.Step)
	}

	// The result log records carry the judge model too.
	require.Eventually(t, func() bool {
		for _, line := range completeLines(t, filepath.Join(dir, "results.jsonl")) {
			if strings.Contains(string(line), `"fallback-judge"`) && strings.Contains(string(line), `"small-judge"`) {
				return true
			}
		}
		return false
	}, waitLimit, 250*time.Millisecond, "result log records without the judge models")

	// Metrics: results by judge model; fallbacks and circuit state by judge.
	var metrics, own2 string
	require.Eventually(t, func() bool {
		_, metrics, err = httpGet(ctx, fmt.Sprintf("http://127.0.0.1:%d/metrics", p.prom))
		return err == nil && hasLine(metrics, "gen_ai_evaluation_results_total{", `gen_ai_evaluation_name="bias"`, `llm_eval_judge_model="fallback-judge"`) &&
			hasLine(metrics, "gen_ai_evaluation_results_total{", `gen_ai_evaluation_name="toxicity"`, `llm_eval_judge_model="small-judge"`)
	}, waitLimit, 250*time.Millisecond, "results by judge model did not reach the prometheus exporter")
	_, own2, err = httpGet(ctx, fmt.Sprintf("http://127.0.0.1:%d/metrics", p.telemetry))
	require.NoError(t, err)
	assert.True(t, hasLine(own2, "otelcol_processor_llm_eval_judge_fallbacks", `judge="judge"`), "no fallback count in:\n%s", grepLines(own2, "llm_eval_judge"))
	assert.True(t, hasLine(own2, "otelcol_processor_llm_eval_judge_circuit_state", `judge="judge"`, "} 2"), "shared circuit not open in:\n%s", grepLines(own2, "circuit"))
	assert.True(t, hasLine(own2, "otelcol_processor_llm_eval_judge_circuit_state", `judge="scorers[toxicity].judge"`, "} 0"), "toxicity's circuit not closed")

	logBytes, err := os.ReadFile(logPath)
	require.NoError(t, err)
	for _, key := range []string{judgeAPIKey, "fallback-key", "toxicity-key"} {
		assert.NotContains(t, string(logBytes), key, "a judge API key appeared in the collector log")
	}
	assert.Contains(t, string(logBytes), "judge circuit opened")
}
