//go:build clients

package clients

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/test/internal/collectortest"
)

const judgeAPIKey = "clients-judge-key-must-never-be-logged"

// collector is a running bin/otelcol-llmeval with llm_eval in a traces and
// a logs pipeline, each ending in a file exporter.
type collector struct {
	otlpURL    string
	tracesPath string
	logsPath   string
	logPath    string
	stop       func() // SIGTERM and wait: flushes held spans and exporters
}

// defaultScorers is llm_eval's default scorer list, written out so that an
// app can change one scorer's settings and keep the others as they are.
const defaultScorers = `
      - name: bias
      - name: hallucination
      - name: prompt_alignment`

// startCollector writes the configuration (llm_eval at its defaults but for
// the judge, and scorers when an app needs its own) and runs the binary.
func startCollector(t *testing.T, judgeURL, scorers string) *collector {
	t.Helper()
	return startCollectorWith(t, judgeURL, scorers, "")
}

// startCollectorWith is startCollector with more llm_eval settings, as
// YAML lines indented under llm_eval (four spaces).
func startCollectorWith(t *testing.T, judgeURL, scorers, settings string) *collector {
	t.Helper()
	dir := t.TempDir()
	otlp, health := collectortest.FreePort(t), collectortest.FreePort(t)
	c := &collector{
		otlpURL:    fmt.Sprintf("http://127.0.0.1:%d", otlp),
		tracesPath: filepath.Join(dir, "traces.jsonl"),
		logsPath:   filepath.Join(dir, "logs.jsonl"),
		logPath:    filepath.Join(dir, "collector.log"),
	}
	if scorers == "" {
		scorers = defaultScorers
	}
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
      api_key: ${env:CLIENTS_JUDGE_KEY}
      model: clients-judge
    scorers:%s%s
  batch:
    timeout: 200ms
exporters:
  file/traces:
    path: %s
  file/logs:
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
      processors: [llm_eval, batch]
      exporters: [file/traces]
    logs:
      receivers: [otlp]
      processors: [llm_eval, batch]
      exporters: [file/logs]
`, otlp, judgeURL, scorers, settings, c.tracesPath, c.logsPath, health)
	cfgPath := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(cfg), 0o600))

	logFile, err := os.Create(c.logPath)
	require.NoError(t, err)
	cmd := exec.Command(collectortest.Binary(t), "--config", cfgPath)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), "CLIENTS_JUDGE_KEY="+judgeAPIKey)
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stopped := false
	c.stop = func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		_ = logFile.Close()
	}
	t.Cleanup(func() {
		c.stop()
		if t.Failed() {
			if b, err := os.ReadFile(c.logPath); err == nil {
				t.Logf("collector log (%s):\n%s", c.logPath, tail(b, 60))
			}
		}
	})

	healthURL := fmt.Sprintf("http://127.0.0.1:%d/", health)
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-exited:
			b, _ := os.ReadFile(c.logPath)
			t.Fatalf("collector exited at start-up:\n%s", tail(b, 30))
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, healthURL, http.NoBody)
		resp, err := http.DefaultClient.Do(req)
		cancel()
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return c
			}
		}
		require.True(t, time.Now().Before(deadline), "collector did not become healthy")
		time.Sleep(200 * time.Millisecond)
	}
}

// tail returns the last n lines of b.
func tail(b []byte, n int) []byte {
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return bytes.Join(lines, []byte("\n"))
}

// readLines calls fn with each non-empty line of the file at path; a missing
// file has no lines.
func readLines(t *testing.T, path string, fn func([]byte)) {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return
	}
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			fn(sc.Bytes())
		}
	}
	require.NoError(t, sc.Err())
}

// output reads what the collector's file exporters wrote.
func (c *collector) output(t *testing.T) (traces []ptrace.Traces, logs []plog.Logs) {
	t.Helper()
	var tu ptrace.JSONUnmarshaler
	var lu plog.JSONUnmarshaler
	readLines(t, c.tracesPath, func(b []byte) {
		td, err := tu.UnmarshalTraces(b)
		require.NoError(t, err, "traces file line is not OTLP/JSON")
		traces = append(traces, td)
	})
	readLines(t, c.logsPath, func(b []byte) {
		ld, err := lu.UnmarshalLogs(b)
		require.NoError(t, err, "logs file line is not OTLP/JSON")
		logs = append(logs, ld)
	})
	return traces, logs
}
