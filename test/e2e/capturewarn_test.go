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

	"github.com/llm-eval/llm_eval/scoring/scoringtest"
	"github.com/llm-eval/llm_eval/test/internal/collectortest"
)

// TestCaptureOffWarningNamesEveryService: 200 services whose
// instrumentation sends chat spans without content, at once, to the built
// collector under the default telemetry settings (no
// service::telemetry::logs section, so the Collector samples its log: the
// first 10 lines of one message per 10 s, then one in 100). Every service
// is named in the collector's log with how to turn content capture on for
// its library: the soak of issue 37 saw 15 of 200 when each service had a
// warning line of its own.
func TestCaptureOffWarningNamesEveryService(t *testing.T) {
	bin := collectortest.Binary(t)
	judge := scoringtest.New(t)
	dir := t.TempDir()
	otlp, health := collectortest.FreePort(t), collectortest.FreePort(t)
	tracesPath := filepath.Join(dir, "traces.jsonl")
	cfg := fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
processors:
  llm_eval:
    judge:
      endpoint: %s
      api_key: ${env:E2E_JUDGE_KEY}
      model: e2e-judge
    scorers:
      - name: bias
exporters:
  file:
    path: %s
extensions:
  health_check:
    endpoint: 127.0.0.1:%d
service:
  extensions: [health_check]
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      processors: [llm_eval]
      exporters: [file]
`, otlp, judge.URL, tracesPath, health)
	cfgPath := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(cfg), 0o600))
	logPath := startCollector(t, bin, cfgPath, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitLimit)
	defer cancel()
	waitHealthy(ctx, t, ports{health: health})

	const services = 200
	name := func(i int) string { return fmt.Sprintf("capture-off-svc-%03d", i) }
	td := ptrace.NewTraces()
	var spanIDs []string
	for i := range services {
		one := chatSpans(i, 1, false)
		rs := one.ResourceSpans().At(0)
		rs.Resource().Attributes().PutStr("service.name", name(i))
		rs.MoveTo(td.ResourceSpans().AppendEmpty())
		_, sp := ids(i)
		spanIDs = append(spanIDs, sp.String())
	}
	postSpans(ctx, t, otlp, td)
	spans := waitForSpans(t, tracesPath, spanIDs)
	for _, id := range spanIDs {
		assert.Equal(t, "not_scorable", labelsOf(spans[id][0])["bias"], "span %s", id)
	}

	// Every service is named in a warning line, with the variable of its
	// library, within the warning window after the first.
	var missing []string
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(logPath)
		if err != nil {
			return false
		}
		var warnings []string
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "content capture is off") {
				warnings = append(warnings, line)
			}
		}
		all := strings.Join(warnings, "\n")
		missing = missing[:0]
		for i := range services {
			if !strings.Contains(all, `"`+name(i)+`"`) {
				missing = append(missing, name(i))
			}
		}
		return len(missing) == 0 && strings.Contains(all, captureOffVar)
	}, 30*time.Second, 250*time.Millisecond, "services not named in the log")
	assert.Empty(t, missing)
}
