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
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
	"github.com/llm-eval/llm_eval/test/internal/collectortest"
)

// TestAgentScorersEndToEnd configures the agent-run scorers (task_completion,
// tool_use and a tool_errors checks scorer) next to the usual three, sends
// the semconv agent trace and checks what the built collector makes of it:
// the configuration is accepted, the processor assembles the invoke_agent
// span's run from the trace (its execute_tool span, then its chat span),
// the fake judge scores task_completion and tool_use on it, and the
// metrics carry gen_ai_agent_name, the label the agent alerts group by.
func TestAgentScorersEndToEnd(t *testing.T) {
	bin := collectortest.Binary(t)
	judge := scoringtest.New(t)
	dir := t.TempDir()
	p := ports{otlp: collectortest.FreePort(t), prom: collectortest.FreePort(t), health: collectortest.FreePort(t), telemetry: collectortest.FreePort(t)}
	cfgPath := writeConfig(t, dir, judge.URL, p)
	raw, err := os.ReadFile(cfgPath)
	require.NoError(t, err)
	const scorers = "      - name: prompt_alignment\n"
	require.Contains(t, string(raw), scorers)
	withAgents := strings.Replace(string(raw), scorers, scorers+
		"      - name: task_completion\n"+
		"      - name: tool_use\n"+
		"      - name: tool_errors\n"+
		"        rules: [{type: tool_errors}]\n", 1)
	require.NoError(t, os.WriteFile(cfgPath, []byte(withAgents), 0o600))
	startCollector(t, bin, cfgPath, dir)

	ctx, cancel := context.WithTimeout(context.Background(), 3*waitLimit)
	defer cancel()
	waitHealthy(ctx, t, p)

	fixtures := filepath.Join("..", "..", "testdata", "otlp", "tracecontext")
	ids := postOTLPJSON(t, p.otlp, filepath.Join(fixtures, "semconv_agent_context.json"))
	ids = append(ids, postOTLPJSON(t, p.otlp, filepath.Join(fixtures, "semconv_agent_generation.json"))...)

	spans := waitForSpans(t, filepath.Join(dir, "traces.jsonl"), ids)

	const agentSpan = "b2000000000000b1" // invoke_agent support
	require.Len(t, spans[agentSpan], 1)
	results := map[string]ptrace.SpanEvent{}
	for _, ev := range spans[agentSpan][0].Events().All() {
		if ev.Name() == evalconv.EventName {
			name, _ := ev.Attributes().Get(evalconv.AttrName)
			results[name.Str()] = ev
		}
	}
	labels := map[string]string{}
	for _, name := range []string{"task_completion", "tool_use", "tool_errors"} {
		ev, ok := results[name]
		if !assert.True(t, ok, "no %s result on the agent span", name) {
			continue
		}
		label, _ := ev.Attributes().Get(evalconv.AttrScoreLabel)
		labels[name] = label.Str()
		reason, _ := ev.Attributes().Get(evalconv.AttrExplanation)
		assert.Contains(t, []string{"pass", "fail"}, label.Str(), "%s: %s", name, reason.Str())
	}
	assert.Equal(t, "pass", labels["tool_errors"], "the run's one tool execution did not fail")
	steps := map[string]int{}
	for _, c := range judge.Calls() {
		steps[c.Step]++
		if c.Step == "task_completion_verdicts" || c.Step == "tool_use_verdicts" {
			run := strings.Join(c.Block("TRAJECTORY"), "\n")
			assert.Contains(t, run, `"tool":"lookup_order"`, c.Step)
			assert.Contains(t, run, "received_at_warehouse", "%s: the tool's result, from its execute_tool span", c.Step)
		}
	}
	for _, step := range []string{"task_completion_task", "task_completion_verdicts", "tool_use_verdicts"} {
		assert.Equal(t, 1, steps[step], "one %s call for the agent run", step)
	}

	// The agent alerts group by gen_ai_agent_name: it must reach Prometheus.
	promURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", p.prom)
	var metrics string
	require.Eventually(t, func() bool {
		_, body, err := httpGet(ctx, promURL)
		metrics = body
		return err == nil && hasLine(body, "gen_ai_evaluation_results_total{", `gen_ai_evaluation_name="tool_errors"`)
	}, waitLimit, 250*time.Millisecond, "agent results did not reach the prometheus exporter")
	for _, name := range []string{"task_completion", "tool_use", "tool_errors"} {
		assert.True(t, hasLine(metrics, "gen_ai_evaluation_results_total{", `gen_ai_agent_name="support"`,
			`gen_ai_evaluation_name="`+name+`"`, `gen_ai_evaluation_score_label="`+labels[name]+`"`, `job="support-agent"`),
			"no %s line with the agent name in:\n%s", name, metrics)
	}

	// The trace-context alert also reads the agent steps a full trace
	// dropped, exported at zero before any loss.
	_, own, err := httpGet(ctx, fmt.Sprintf("http://127.0.0.1:%d/metrics", p.telemetry))
	require.NoError(t, err)
	assert.True(t, hasLine(own, "otelcol_processor_llm_eval_trace_context_limited{", `limit="step_dropped"`),
		"processor telemetry lacks trace_context_limited{limit=\"step_dropped\"}")
}
