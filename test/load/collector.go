package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/template"
	"time"
)

// collectorConfig is the pipeline under load: otlp -> [llm_eval] -> batch -> otlphttp (the sink),
// and with LogsPipeline the same for logs.
var collectorConfig = template.Must(template.New("config").Funcs(template.FuncMap{
	"list": func(s ...string) []string { return s },
}).Parse(`
receivers:
  otlp:
    protocols:
      http:
        endpoint: {{.Receiver}}
processors:
  batch: {}
{{- if .Judge}}
  llm_eval:
    judge:
      endpoint: {{.Judge}}
{{- if .JudgeCAFile}}
      tls:
        ca_file: {{.JudgeCAFile}}
{{- end}}
{{- if .JudgeHTTP2}}
      force_attempt_http2: true
{{- end}}
      timeout: 10s
      model: load-judge
      max_concurrency: {{.MaxConcurrency}}
    sampling:
      percentage: {{.Sampling}}
{{- if .MaxWait}}
    max_wait: {{.MaxWait}}
{{- end}}
{{- if .QueueSize}}
    queue_size: {{.QueueSize}}
{{- end}}
{{- if ge .CaptureOffAfter 0}}
    log_events:
      content_capture_off_after: {{.CaptureOffAfter}}
{{- end}}
{{- if .StorageDir}}
    storage: file_storage
{{- end}}
{{- if or .ContextMaxTraces .ContextMaxBytes .ContextTTL}}
    trace_context:
{{- if .ContextMaxTraces}}
      max_traces: {{.ContextMaxTraces}}
{{- end}}
{{- if .ContextMaxBytes}}
      max_bytes: {{.ContextMaxBytes}}
{{- end}}
{{- if .ContextTTL}}
      ttl: {{.ContextTTL}}
{{- end}}
{{- end}}
    scorers:
{{- range (list "bias" "hallucination" "prompt_alignment")}}{{/* loadScorers */}}
      - name: {{.}}
{{- if $.ReasonMode}}
        reason_mode: {{$.ReasonMode}}
{{- end}}
{{- end}}
{{- end}}
exporters:
  otlphttp:
    endpoint: {{.Sink}}
    compression: none
extensions:
  health_check:
    endpoint: {{.Health}}
{{- if .StorageDir}}
  file_storage:
    directory: {{.StorageDir}}
{{- end}}
{{- if .Pprof}}
  pprof:
    endpoint: {{.Pprof}}
{{- end}}
service:
  extensions: [health_check{{if .Pprof}}, pprof{{end}}{{if .StorageDir}}, file_storage{{end}}]
  telemetry:
    logs:
      level: warn
    metrics:
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: {{.TelemetryPort}}
  pipelines:
    traces:
      receivers: [otlp]
      processors: [{{if .Judge}}llm_eval, {{end}}batch]
      exporters: [otlphttp]
{{- if .LogsPipeline}}
    logs:
      receivers: [otlp]
      processors: [llm_eval, batch]
      exporters: [otlphttp]
{{- end}}
`))

// loadScorers is the number of scorers the configuration lists.
const loadScorers = 3

type configValues struct {
	Receiver, Sink, Health, Judge string
	JudgeCAFile                   string // with an HTTPS judge: its certificate
	JudgeHTTP2                    bool   // judge.force_attempt_http2: true
	Pprof                         string // pprof extension address; needs a build with pprofextension
	TelemetryPort                 int
	Sampling                      float64
	MaxConcurrency, QueueSize     int
	MaxWait                       time.Duration // 0 leaves the collector's default
	ReasonMode                    string        // scorers' reason_mode; empty leaves the default
	StorageDir                    string        // llm_eval storage on file_storage in this directory; empty: off
	// LogsPipeline puts llm_eval in a logs pipeline too, so spans without
	// content wait for their GenAI log events (contentless scenario).
	LogsPipeline bool
	// CaptureOffAfter is log_events.content_capture_off_after; negative
	// leaves the collector's default.
	CaptureOffAfter int
	// trace_context settings; zero leaves the collector's default.
	ContextMaxTraces int
	ContextMaxBytes  int64
	ContextTTL       time.Duration
}

// collector is a running otelcol-llmeval process.
type collector struct {
	cmd           *exec.Cmd
	receiver      string
	telemetryPort int
	logPath       string
}

func startCollector(ctx context.Context, binary, dir string, v configValues) (*collector, error) {
	v.Receiver = freeAddr()
	v.Health = freeAddr()
	_, port, _ := net.SplitHostPort(freeAddr())
	v.TelemetryPort, _ = strconv.Atoi(port)
	var cfg bytes.Buffer
	if err := collectorConfig.Execute(&cfg, v); err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, "collector.yaml")
	if err := os.WriteFile(cfgPath, cfg.Bytes(), 0o600); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "collector.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	// The load runs read the processor's diagnostic metrics too.
	cmd := exec.Command(binary, "--config", cfgPath, "--feature-gates=processor.llmeval.diagnosticMetrics")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), "GOMAXPROCS=2")
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", binary, err)
	}
	c := &collector{cmd: cmd, receiver: "http://" + v.Receiver, telemetryPort: v.TelemetryPort, logPath: logPath}
	if err := waitHealthy(ctx, "http://"+v.Health+"/"); err != nil {
		c.stop()
		return nil, fmt.Errorf("collector did not become healthy (log: %s): %w", logPath, err)
	}
	return c, nil
}

func waitHealthy(ctx context.Context, url string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("health check %s not OK after 30s", url)
}

// stop sends SIGTERM, so the collector flushes what it holds, and waits.
func (c *collector) stop() error {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(60 * time.Second):
		_ = c.cmd.Process.Kill()
		return fmt.Errorf("collector did not stop within 60s")
	}
}

// cpuSeconds is the user+system CPU time the process has used.
func (c *collector) cpuSeconds() (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	const ticksPerSecond = 100 // USER_HZ on Linux
	return (utime + stime) / ticksPerSecond, nil
}

// memory returns the current and peak resident set size in bytes.
func (c *collector) memory() (rss, peak int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var kb int64
		switch {
		case strings.HasPrefix(line, "VmRSS:"):
			fmt.Sscanf(strings.TrimPrefix(line, "VmRSS:"), "%d", &kb)
			rss = kb * 1024
		case strings.HasPrefix(line, "VmHWM:"):
			fmt.Sscanf(strings.TrimPrefix(line, "VmHWM:"), "%d", &kb)
			peak = kb * 1024
		}
	}
	return rss, peak, sc.Err()
}

// metric sums every sample of the named metric on the collector's own
// telemetry endpoint whose labels contain all of the given label pairs.
func (c *collector) metric(name string, labels ...string) float64 {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", c.telemetryPort))
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
next:
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		for _, l := range labels {
			if !strings.Contains(line, l) {
				continue next
			}
		}
		if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
			sum += v
		}
	}
	return sum
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Names of the trace context index's metrics on the telemetry endpoint.
const (
	metricContextTraces    = "otelcol_processor_llm_eval_trace_context_traces"
	metricContextBytes     = "otelcol_processor_llm_eval_trace_context_bytes"
	metricContextEvictions = "otelcol_processor_llm_eval_trace_context_evictions"
	metricContextJoins     = "otelcol_processor_llm_eval_context_joins"
)

// metricBy sums the samples of the named metric by the value of one label.
func (c *collector) metricBy(name, label string) map[string]float64 {
	out := map[string]float64{}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", c.telemetryPort))
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") {
			continue
		}
		_, rest, ok := strings.Cut(line, label+`="`)
		if !ok {
			continue
		}
		value, _, _ := strings.Cut(rest, `"`)
		if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
			out[value] += v
		}
	}
	return out
}
