//go:build e2e && prometheus

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	builtin "github.com/llm-eval/llm_eval/scoring/scorers"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
	"github.com/llm-eval/llm_eval/test/internal/collectortest"
)

// The test copy of examples/alerts.yaml differs only in these: every
// rule's `for:` and the evaluation interval. Windows and thresholds stay.
const (
	promFor          = "4s"
	promInterval     = "1s"
	promRateInterval = "1m" // what the dashboard's $__rate_interval becomes
	promWait         = 90 * time.Second
)

// Prometheus scrapes three times less often than the connector flushes, as
// a common 1m scrape does with the default 15s flush (more rarely still
// would only widen the gap), and the connector holds a new series at zero
// for the default new_series_hold's share of that scrape (90s of 1m).
const (
	promFlush  = time.Second
	promScrape = 3 * promFlush
	promHold   = promScrape * 3 / 2
)

// The alerts the bursts must fire, and the shape of the traffic: the rules
// need at least 10 verdicts and more than 20% failures over 30 minutes.
var (
	burstAlerts   = []string{"LLMEvalBiasFailRateHigh", "LLMEvalHallucinationFailRateHigh"}
	goodBefore    = 10
	burst         = 10
	goodAfter     = 45 // 10 / (10+10+45) = 15% failures: below the rules' 20%
	promService   = "shop-assistant"
	promNewModel  = "gpt-5-preview" // no traffic before its burst
	promBadAnswer = "Women are hopeless with parcels, and order %d was lost at sea on 2031-02-03."
)

// TestAlertsInRealPrometheus runs the Prometheus server against the built
// collector, scraping it every 3 flushes: good traffic on a model, then
// one burst of biased and hallucinating answers from it and, at the same
// time, from a model that had no traffic before (a new series set), makes
// the bias and hallucination alerts of examples/alerts.yaml pending and
// then firing for both models, read from Prometheus' /api/v1/alerts; good
// traffic afterwards resolves them. Then every query of the Grafana
// dashboard runs against that Prometheus and must return data.
func TestAlertsInRealPrometheus(t *testing.T) {
	promBin := prometheusBinary(t)
	bin := collectortest.Binary(t)
	judge := scoringtest.New(t)
	dir := t.TempDir()
	p := ports{otlp: collectortest.FreePort(t), prom: collectortest.FreePort(t), health: collectortest.FreePort(t), telemetry: collectortest.FreePort(t)}
	writeAlertConfig(t, dir, judge.URL, p)
	startCollector(t, bin, filepath.Join(dir, "config.yaml"), dir)

	ctx, cancel := context.WithTimeout(context.Background(), 3*promWait)
	defer cancel()
	waitHealthy(ctx, t, p)
	api := startPrometheus(ctx, t, promBin, dir, p)

	// Good traffic, and one agent run for the dashboard's agent panels.
	sendGenerations(t, p.otlp, model, 0, goodBefore, false)
	fixtures := filepath.Join("..", "..", "testdata", "otlp", "tracecontext")
	postOTLPJSON(t, p.otlp, filepath.Join(fixtures, "semconv_agent_context.json"))
	postOTLPJSON(t, p.otlp, filepath.Join(fixtures, "semconv_agent_generation.json"))
	api.waitValue(ctx, t, fmt.Sprintf(`sum(gen_ai_evaluation_results_total{job=%q,gen_ai_evaluation_name="hallucination",gen_ai_evaluation_score_label="pass"})`, promService), float64(goodBefore))
	api.waitValue(ctx, t, `sum(gen_ai_evaluation_results_total{gen_ai_evaluation_name="task_completion"})`, 1)
	// One conversation for the dashboard's conversation row: scored by
	// every conversation scorer idle_timeout after its last turn. Its
	// service is another: the scorers that need context find its turns
	// not_scorable, without a judge model, which would add series beside
	// the ones the alerts below read.
	require.NoError(t, postTraces(p.otlp, conversationTurns("support-chat", "prom-conversation", model, 7, supportConversation)))
	api.waitValue(ctx, t, `sum(gen_ai_evaluation_results_total{gen_ai_evaluation_name="conversation_completeness"})`, 1)
	assert.Empty(t, api.activeAlerts(ctx, t, burstAlerts), "no alert on good traffic")
	// The series the burst will move on the model in service already
	// exist, at zero; the new model has none.
	for _, name := range []string{"bias", "hallucination"} {
		v, ok := api.value(ctx, fmt.Sprintf(`gen_ai_evaluation_results_total{job=%q,gen_ai_request_model=%q,gen_ai_evaluation_name=%q,gen_ai_evaluation_score_label="fail"}`, promService, model, name))
		assert.True(t, ok && v == 0, "%s fail series before the burst: %v (present %t)", name, v, ok)
	}
	n, err := api.query(ctx, fmt.Sprintf(`gen_ai_evaluation_results_total{gen_ai_request_model=%q}`, promNewModel))
	require.NoError(t, err)
	require.Zero(t, n, "the new model has series before its first traffic")

	// The bursts of both models, each in one request, so within one flush.
	models := []string{model, promNewModel}
	burstSent := time.Now()
	for _, m := range models {
		sendGenerations(t, p.otlp, m, goodBefore, burst, true)
	}
	times := map[alertKey]map[string]time.Time{}
	for _, name := range burstAlerts {
		for _, m := range models {
			times[alertKey{name, m}] = map[string]time.Time{}
		}
	}
	seen := func(states ...string) bool {
		for _, at := range times {
			for _, s := range states {
				if at[s].IsZero() {
					return false
				}
			}
		}
		return true
	}
	record := func() {
		now := time.Now()
		for k, state := range api.activeAlerts(ctx, t, burstAlerts) {
			if at, ok := times[k]; ok && at[state].IsZero() {
				at[state] = now
			}
		}
	}
	require.Eventually(t, func() bool { record(); return seen("pending", "firing") }, promWait, 200*time.Millisecond,
		"the bursts did not make both alerts pending and then firing for both models: %v", times)

	// Good traffic until the failure ratio is below the threshold.
	for _, m := range models {
		sendGenerations(t, p.otlp, m, goodBefore+burst, goodAfter, false)
	}
	require.Eventually(t, func() bool {
		now := time.Now()
		active := api.activeAlerts(ctx, t, burstAlerts)
		for k, at := range times {
			if _, ok := active[k]; !ok && at["resolved"].IsZero() {
				at["resolved"] = now
			}
		}
		return seen("resolved")
	}, promWait, 200*time.Millisecond, "good traffic did not resolve the alerts: %v", times)

	const clock = "15:04:05.0"
	t.Logf("scrape every %s, connector flush every %s, new_series_hold %s; bursts of %d bad answers on %s (in service) and %s (new) sent at %s; "+
		"alert states as /api/v1/alerts showed them (+seconds after the bursts):",
		promScrape, promFlush, promHold, burst, model, promNewModel, burstSent.Format(clock))
	for _, name := range burstAlerts {
		for _, m := range models {
			at := times[alertKey{name, m}]
			assert.False(t, at["firing"].Before(at["pending"]), "%s %s: pending before firing", name, m)
			assert.True(t, at["firing"].Before(at["resolved"]), "%s %s: firing before resolved", name, m)
			show := func(state string) string {
				return fmt.Sprintf("%s %s (+%.1fs)", state, at[state].Format(clock), at[state].Sub(burstSent).Seconds())
			}
			t.Logf("  %-34s %-14s %s  %s  %s", name, m, show("pending"), show("firing"), show("resolved"))
		}
	}

	// Every query of the dashboard, as Grafana would send it with "All"
	// selected, runs without error and returns data.
	queries := dashboardQueries(t, filepath.Join("..", "..", "examples", "grafana-dashboard.json"))
	require.NotEmpty(t, queries)
	for _, q := range queries {
		n, err := api.query(ctx, q)
		if assert.NoError(t, err, "dashboard query %s", q) {
			assert.Positive(t, n, "dashboard query returned no data: %s", q)
		}
	}
	t.Logf("%d dashboard queries returned data", len(queries))
}

// prometheusBinary is $LLMEVAL_PROMETHEUS or prometheus on PATH; the test
// fails, saying how to install it, when there is none.
func prometheusBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("LLMEVAL_PROMETHEUS"); bin != "" {
		return bin
	}
	bin, err := exec.LookPath("prometheus")
	require.NoError(t, err, "the prometheus server is missing: run `make e2e-prometheus` (installs the Debian package), "+
		"or install Prometheus from https://prometheus.io/download/ and put `prometheus` on PATH or in LLMEVAL_PROMETHEUS")
	return bin
}

// writeAlertConfig configures every built-in scorer, so that the
// dashboard's per-scorer panels have data whichever scorers they show.
func writeAlertConfig(t *testing.T, dir, judgeURL string, p ports) {
	t.Helper()
	var builtins strings.Builder
	for _, name := range builtin.Names() {
		fmt.Fprintf(&builtins, "      - name: %s\n", name)
	}
	cfg := fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%[1]d
processors:
  llm_eval:
    judge:
      endpoint: %[5]s
      api_key: e2e-key
      model: e2e-judge
      timeout: 10s
    sampling:
      percentage: 100
    max_wait: 30s
    conversation:
      idle_timeout: 2s
    scorers:
%[6]s      - name: tool_errors
        rules: [{type: tool_errors}]
  batch:
    timeout: 200ms
exporters:
  prometheus:
    endpoint: 127.0.0.1:%[2]d
connectors:
  llm_eval_metrics:
    metrics_flush_interval: %[7]s
    new_series_hold: %[8]s
extensions:
  health_check:
    endpoint: 127.0.0.1:%[3]d
service:
  extensions: [health_check]
  telemetry:
    metrics:
      level: normal
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: %[4]d
  pipelines:
    traces:
      receivers: [otlp]
      processors: [llm_eval, batch]
      exporters: [llm_eval_metrics]
    metrics:
      receivers: [llm_eval_metrics]
      exporters: [prometheus]
`, p.otlp, p.prom, p.health, p.telemetry, judgeURL, builtins.String(), promFlush, promHold)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(cfg), 0o600))
}

var (
	forRE      = regexp.MustCompile(`(?m)^(\s+for:\s*)\S+\s*$`)
	intervalRE = regexp.MustCompile(`(?m)^(\s+interval:\s*)\S+\s*$`)
)

// testRules is examples/alerts.yaml with every `for:` (and a group
// interval, if one is set) shortened.
func testRules(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "examples", "alerts.yaml"))
	require.NoError(t, err)
	require.Regexp(t, forRE, string(raw))
	out := forRE.ReplaceAll(raw, []byte("${1}"+promFor))
	return intervalRE.ReplaceAll(out, []byte("${1}"+promInterval))
}

// promAPI queries one Prometheus server's HTTP API.
type promAPI struct{ base string }

func startPrometheus(ctx context.Context, t *testing.T, bin, dir string, p ports) promAPI {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "alerts.test.yaml"), testRules(t), 0o600))
	cfg := fmt.Sprintf(`
global:
  scrape_interval: %[4]s
  evaluation_interval: %[3]s
rule_files: [alerts.test.yaml]
scrape_configs:
  # The connector's metrics: job and instance come from the evaluated
  # service, so the exporter's labels are kept.
  - job_name: llm_eval
    honor_labels: true
    static_configs: [{targets: ["127.0.0.1:%[1]d"]}]
  # The Collector's own telemetry (otelcol_processor_llm_eval_*).
  - job_name: otelcol
    static_configs: [{targets: ["127.0.0.1:%[2]d"]}]
`, p.prom, p.telemetry, promInterval, promScrape)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(cfg), 0o600))

	port := collectortest.FreePort(t)
	cmd := exec.Command(bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port), "--log.level=warn")
	runUntilCleanup(t, cmd, filepath.Join(dir, "prometheus.log"), "prometheus")

	api := promAPI{base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	require.Eventually(t, func() bool {
		code, _, err := httpGet(ctx, api.base+"/-/ready")
		return err == nil && code == http.StatusOK
	}, promWait, 200*time.Millisecond, "prometheus did not become ready")
	// Both targets up before any traffic, so the zero samples are scraped.
	require.Eventually(t, func() bool {
		n, err := api.query(ctx, `up == 1`)
		return err == nil && n == 2
	}, promWait, 200*time.Millisecond, "prometheus did not scrape the collector")
	// The rules loaded: a broken test copy would leave no rule groups.
	_, body, err := httpGet(ctx, api.base+"/api/v1/rules")
	require.NoError(t, err)
	for _, name := range burstAlerts {
		require.Contains(t, body, `"name":"`+name+`"`, "rule not loaded")
	}
	return api
}

// query runs an instant query and returns the number of series or
// samples in its result.
func (a promAPI) query(ctx context.Context, q string) (int, error) {
	code, body, err := httpGet(ctx, a.base+"/api/v1/query?query="+url.QueryEscape(q))
	if err != nil {
		return 0, err
	}
	var resp struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		return 0, fmt.Errorf("status %d, body %q: %w", code, body, err)
	}
	if resp.Status != "success" {
		return 0, fmt.Errorf("query failed: %s", resp.Error)
	}
	if resp.Data.ResultType == "scalar" || resp.Data.ResultType == "string" {
		return 1, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(resp.Data.Result, &items); err != nil {
		return 0, err
	}
	return len(items), nil
}

// value returns the single sample of an instant query, or false.
func (a promAPI) value(ctx context.Context, q string) (float64, bool) {
	_, body, err := httpGet(ctx, a.base+"/api/v1/query?query="+url.QueryEscape(q))
	if err != nil {
		return 0, false
	}
	var resp struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if json.Unmarshal([]byte(body), &resp) != nil || len(resp.Data.Result) != 1 {
		return 0, false
	}
	s, _ := resp.Data.Result[0].Value[1].(string)
	var v float64
	if _, err := fmt.Sscan(s, &v); err != nil {
		return 0, false
	}
	return v, true
}

func (a promAPI) waitValue(ctx context.Context, t *testing.T, q string, atLeast float64) {
	t.Helper()
	require.Eventually(t, func() bool {
		v, ok := a.value(ctx, q)
		return ok && v >= atLeast
	}, promWait, 200*time.Millisecond, "%s did not reach %v", q, atLeast)
}

// alertKey is one alert of one model.
type alertKey struct{ alert, model string }

// activeAlerts returns the state (pending or firing) of each alert of
// names, per model, that /api/v1/alerts lists; one not listed is inactive.
func (a promAPI) activeAlerts(ctx context.Context, t *testing.T, names []string) map[alertKey]string {
	t.Helper()
	_, body, err := httpGet(ctx, a.base+"/api/v1/alerts")
	require.NoError(t, err)
	var resp struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
				State  string            `json:"state"`
			} `json:"alerts"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &resp), body)
	out := map[alertKey]string{}
	for _, al := range resp.Data.Alerts {
		name := al.Labels["alertname"]
		for _, want := range names {
			if name != want {
				continue
			}
			if al.Labels["job"] != promService {
				t.Errorf("%s fired for job %q, not %q", name, al.Labels["job"], promService)
			}
			k := alertKey{name, al.Labels["gen_ai_request_model"]}
			if out[k] != "firing" { // firing wins over pending
				out[k] = al.State
			}
		}
	}
	return out
}

// sendGenerations sends n chat spans of model numbered from first, in one
// request. Good ones answer from their tool result; bad ones generalise
// about a group of people (bias) and state what the tool result does not
// (hallucination).
func sendGenerations(t *testing.T, otlpPort int, model string, first, n int, bad bool) {
	t.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", promService)
	ss := rs.ScopeSpans().AppendEmpty()
	now := pcommon.NewTimestampFromTime(time.Now())
	h := fnv.New32a()
	h.Write([]byte(model))
	ids := 1<<32 | uint64(h.Sum32()&0xffffff)<<40 // span ids of each model apart
	for i := first; i < first+n; i++ {
		order := 1000 + i
		answer := fmt.Sprintf("Order %d shipped on 2025-12-18 via DHL.", order)
		if bad {
			answer = fmt.Sprintf(promBadAnswer, order)
		}
		s := ss.Spans().AppendEmpty()
		s.SetTraceID(traceIDOf(ids + uint64(i)))
		s.SetSpanID(spanIDOf(ids + uint64(i)))
		s.SetName("chat " + model)
		s.SetKind(ptrace.SpanKindClient)
		s.SetStartTimestamp(now)
		s.SetEndTimestamp(now)
		a := s.Attributes()
		a.PutStr("gen_ai.operation.name", "chat")
		a.PutStr("gen_ai.provider.name", "openai")
		a.PutStr("gen_ai.request.model", model)
		a.PutStr("gen_ai.system_instructions", `[{"type":"text","content":"Answer only from the tool results."}]`)
		a.PutStr("gen_ai.input.messages", fmt.Sprintf(`[`+
			`{"role":"user","parts":[{"type":"text","content":"Where is my order %[1]d?"}]},`+
			`{"role":"assistant","parts":[{"type":"tool_call","id":"call_1","name":"lookup_order","arguments":{"id":"%[1]d"}}]},`+
			`{"role":"tool","parts":[{"type":"tool_call_response","id":"call_1","response":"Order %[1]d shipped on 2025-12-18 via DHL."}]}]`, order))
		out, err := json.Marshal([]map[string]any{{"role": "assistant", "finish_reason": "stop",
			"parts": []map[string]string{{"type": "text", "content": answer}}}})
		require.NoError(t, err)
		a.PutStr("gen_ai.output.messages", string(out))
	}
	require.NoError(t, postTraces(otlpPort, td))
}

// varRE matches a Grafana variable: $name, ${name} or ${name:format}.
var varRE = regexp.MustCompile(`\$\{(\w+)(?::\w+)?\}|\$(\w+)`)

// labelValuesRE matches a variable query label_values(selector, label) or
// label_values(label).
var labelValuesRE = regexp.MustCompile(`^\s*label_values\(\s*(?:(.+),\s*)?(\w+)\s*\)\s*$`)

// dashboardQueries returns every PromQL query of a Grafana dashboard: the
// `expr` of every panel target, and each query variable's query (as
// `count by (label) (selector)`), with the variables as Grafana sends them
// when "All" is selected and $__rate_interval as promRateInterval.
func dashboardQueries(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var dash struct {
		Templating struct {
			List []struct {
				Name     string `json:"name"`
				Type     string `json:"type"`
				AllValue string `json:"allValue"`
				Query    any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	require.NoError(t, json.Unmarshal(raw, &dash))
	values := map[string]string{
		"__rate_interval": promRateInterval, "__interval": "15s", "__range": "1h",
		"__range_s": "3600", "__interval_ms": "15000",
	}
	var variableQueries []string
	for _, v := range dash.Templating.List {
		if v.Type != "query" {
			continue
		}
		values[v.Name] = v.AllValue
		if values[v.Name] == "" {
			values[v.Name] = ".*"
		}
		q := v.Query
		if m, ok := q.(map[string]any); ok {
			q = m["query"]
		}
		if s, ok := q.(string); ok {
			variableQueries = append(variableQueries, s)
		}
	}
	substitute := func(q string) string {
		return varRE.ReplaceAllStringFunc(q, func(m string) string {
			sm := varRE.FindStringSubmatch(m)
			name := sm[1] + sm[2]
			v, ok := values[name]
			require.True(t, ok, "dashboard query uses an unknown variable %s: %s", m, q)
			return v
		})
	}

	var out []string
	for _, q := range variableQueries {
		m := labelValuesRE.FindStringSubmatch(q)
		require.NotNil(t, m, "variable query is not label_values(...): %s", q)
		selector := m[1]
		if selector == "" {
			selector = fmt.Sprintf(`{%s!=""}`, m[2])
		}
		out = append(out, substitute(fmt.Sprintf("count by (%s) (%s)", m[2], selector)))
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if expr, ok := x["expr"].(string); ok && strings.TrimSpace(expr) != "" {
				out = append(out, substitute(expr))
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(x[k])
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	var whole any
	require.NoError(t, json.Unmarshal(raw, &whole))
	walk(whole)
	return out
}
