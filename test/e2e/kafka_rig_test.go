//go:build e2e && kafka

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"

	"github.com/llm-eval/llm_eval/scoring/scoringtest"
	"github.com/llm-eval/llm_eval/test/internal/collectortest"
)

// The Kafka scale-out rig (docs/scaling.md): a kfake broker
// (test/kafkabroker), the built collector as tier 1 running
// examples/kafka-tier1.yaml, and evaluation replicas running
// examples/collector.yaml + otlp-export.yaml + kafka-evaluation-tier.yaml
// as a user would, with an overlay that only points the judge at the fake
// one and picks two cheap scorers. Everything listens on loopback.

// replicaOverlay is the test's only change to the examples of a replica:
// the fake judge's workers and two cheap scorers.
func replicaOverlay(concurrency int) string {
	return fmt.Sprintf(`
processors:
  llm_eval:
    judge:
      max_concurrency: %d
      timeout: 20s
    scorers:
      - name: bias
        reason_mode: summary
      - name: prompt_alignment
        reason_mode: summary
        instructions: ["Answer in English."]
`, concurrency)
}

// kafkaScorers are the scorers of replicaOverlay.
var kafkaScorers = []string{"bias", "prompt_alignment"}

// kafkaRig is one run of the topology.
type kafkaRig struct {
	t          testing.TB
	dir        string
	bin        string
	brokerBin  string
	brokerAddr string
	partitions int
	broker     *collectorProc
	brokerRuns int

	tier1        *collectorProc
	tier1OTLP    int // OTLP/HTTP port of tier 1
	tier1Health  int
	tier1Metrics int

	// overlay is the test's change to the examples of a replica,
	// replicaOverlay(16) unless set before the replica starts.
	overlay  string
	judge    *scoringtest.Server
	calls    *kafkaJudgeCalls
	sink     *kafkaSink
	replicas []*kafkaReplica
}

// kafkaReplica is one otelcol-llmeval of the evaluation tier.
type kafkaReplica struct {
	index             int
	name              string
	dir               string
	env               []string
	health, telemetry int
	proc              *collectorProc
	lives             []time.Time // when each run started
	logs              []string    // log file of each run
}

func newKafkaRig(t testing.TB, partitions, replicas int) *kafkaRig {
	t.Helper()
	r := &kafkaRig{
		t:          t,
		dir:        t.TempDir(),
		bin:        collectortest.Binary(t),
		partitions: partitions,
		brokerAddr: fmt.Sprintf("127.0.0.1:%d", collectortest.FreePort(t)),
		overlay:    replicaOverlay(16),
	}
	r.brokerBin = buildKafkaBroker(t, r.dir)
	r.judge = scoringtest.New(t)
	r.calls = &kafkaJudgeCalls{}
	r.judge.Handle(func(c scoringtest.Call) scoringtest.Reply { r.calls.add(c); return scoringtest.DefaultReply(c) })
	r.sink = newKafkaSink(t, replicas)
	for i := range replicas {
		r.replicas = append(r.replicas, r.newReplica(i))
	}
	return r
}

// buildKafkaBroker builds test/kafkabroker (its own module) into dir.
func buildKafkaBroker(t testing.TB, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "kafkabroker")
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = filepath.Join("..", "kafkabroker")
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "building test/kafkabroker: %s", b)
	return out
}

// startBroker starts the broker with its data directory, so a restarted
// broker has what the one before had.
func (r *kafkaRig) startBroker() {
	r.t.Helper()
	r.brokerRuns++
	cmd := exec.Command(r.brokerBin, "-addr", r.brokerAddr, "-partitions", strconv.Itoa(r.partitions),
		"-data", filepath.Join(r.dir, "broker-data"))
	r.broker = startProcess(r.t, cmd, filepath.Join(r.dir, fmt.Sprintf("broker-%d.log", r.brokerRuns)))
	require.Eventually(r.t, func() bool {
		b, _ := os.ReadFile(r.broker.log)
		return strings.Contains(string(b), "ready ")
	}, waitLimit, 50*time.Millisecond, "broker did not start")
}

// produceJunk writes value to every partition of topic.
func (r *kafkaRig) produceJunk(topic, value string) {
	r.t.Helper()
	out, err := exec.Command(r.brokerBin, "-addr", r.brokerAddr, "-produce", topic, "-value", value).CombinedOutput()
	require.NoError(r.t, err, "%s", out)
}

// startTier1 runs examples/kafka-tier1.yaml.
func (r *kafkaRig) startTier1() {
	r.t.Helper()
	if r.tier1OTLP == 0 {
		r.tier1OTLP, r.tier1Health, r.tier1Metrics = collectortest.FreePort(r.t), collectortest.FreePort(r.t), collectortest.FreePort(r.t)
	}
	dir := filepath.Join(r.dir, "tier1")
	require.NoError(r.t, os.MkdirAll(dir, 0o700))
	cmd := exec.Command(r.bin, "--config", examplePath("kafka-tier1.yaml"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"KAFKA_BROKERS="+r.brokerAddr,
		fmt.Sprintf("OTLP_HTTP_LISTEN=127.0.0.1:%d", r.tier1OTLP),
		fmt.Sprintf("OTLP_GRPC_LISTEN=127.0.0.1:%d", collectortest.FreePort(r.t)),
		fmt.Sprintf("HEALTH_CHECK_LISTEN=127.0.0.1:%d", r.tier1Health),
		"TELEMETRY_HOST=127.0.0.1", fmt.Sprintf("TELEMETRY_PORT=%d", r.tier1Metrics),
		"KAFKA_QUEUE_DIR="+filepath.Join(dir, "queue"),
	)
	r.tier1 = startProcess(r.t, cmd, filepath.Join(r.dir, "tier1.log"))
	waitProcHealthy(r.t, r.tier1, r.tier1Health)
}

func examplePath(name string) string {
	p, _ := filepath.Abs(filepath.Join("..", "..", "examples", name))
	return p
}

func (r *kafkaRig) newReplica(i int) *kafkaReplica {
	t := r.t
	name := fmt.Sprintf("llmeval-%d", i)
	dir := filepath.Join(r.dir, name)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "storage"), 0o700))
	rep := &kafkaReplica{index: i, name: name, dir: dir, health: collectortest.FreePort(t), telemetry: collectortest.FreePort(t)}
	rep.env = []string{
		"LLMEVAL_REPLICA=" + name,
		"KAFKA_BROKERS=" + r.brokerAddr,
		"LLMEVAL_JUDGE_ENDPOINT=" + r.judge.URL,
		"LLMEVAL_JUDGE_MODEL=e2e-judge",
		"OPENAI_API_KEY=" + judgeKeyOf(name),
		"LLMEVAL_STORAGE_DIR=" + filepath.Join(dir, "storage"),
		"OTLP_EXPORT_ENDPOINT=" + r.sink.addrs[i],
		"OTLP_EXPORT_INSECURE=true",
		fmt.Sprintf("OTLP_GRPC_LISTEN=127.0.0.1:%d", collectortest.FreePort(t)),
		fmt.Sprintf("OTLP_HTTP_LISTEN=127.0.0.1:%d", collectortest.FreePort(t)),
		fmt.Sprintf("PROMETHEUS_LISTEN=127.0.0.1:%d", collectortest.FreePort(t)),
		fmt.Sprintf("HEALTH_CHECK_LISTEN=127.0.0.1:%d", rep.health),
		"TELEMETRY_HOST=127.0.0.1", fmt.Sprintf("TELEMETRY_PORT=%d", rep.telemetry),
	}
	return rep
}

func judgeKeyOf(replica string) string { return "e2e-key-" + replica }

// start runs the replica (again, after a kill: same name, storage, ports).
func (r *kafkaRig) start(rep *kafkaReplica) {
	r.t.Helper()
	require.NoError(r.t, os.WriteFile(filepath.Join(rep.dir, "overlay.yaml"), []byte(r.overlay), 0o600))
	cmd := exec.Command(r.bin,
		"--config", examplePath("collector.yaml"),
		"--config", examplePath("otlp-export.yaml"),
		"--config", examplePath("kafka-evaluation-tier.yaml"),
		"--config", filepath.Join(rep.dir, "overlay.yaml"))
	cmd.Dir = rep.dir
	cmd.Env = append(os.Environ(), rep.env...)
	rep.lives = append(rep.lives, time.Now())
	logPath := filepath.Join(r.dir, fmt.Sprintf("%s-run%d.log", rep.name, len(rep.lives)))
	rep.logs = append(rep.logs, logPath)
	rep.proc = startProcess(r.t, cmd, logPath)
	waitProcHealthy(r.t, rep.proc, rep.health)
}

// log is the text of every run's log of the replica.
func (rep *kafkaReplica) log() string {
	var sb strings.Builder
	for _, p := range rep.logs {
		b, _ := os.ReadFile(p)
		sb.Write(b)
	}
	return sb.String()
}

// assigned is how many partitions (of both topics) the replica's kafka
// receivers hold now, from their partition_start and partition_close
// counters.
func (rep *kafkaReplica) assigned(t testing.TB) int {
	page := scrapePage(t, rep.telemetry)
	return int(metricSum(page, "otelcol_kafka_receiver_partition_start") - metricSum(page, "otelcol_kafka_receiver_partition_close"))
}

// waitAssigned waits until the live replicas hold every partition of both
// topics between them, once each, by their metrics and their logs, each
// at least one when eachHasOne.
func (r *kafkaRig) waitAssigned(live []*kafkaReplica, eachHasOne bool) {
	r.t.Helper()
	var last []int
	require.Eventually(r.t, func() bool {
		total, fromLogs, counts := 0, 0, make([]int, len(live))
		for i, rep := range live {
			counts[i] = rep.assigned(r.t)
			total += counts[i]
			synced := rep.lastSynced()
			if len(synced) < 2 || (eachHasOne && counts[i] == 0) {
				last = counts
				return false
			}
			for _, assigned := range synced {
				fromLogs += len(partitionRE.FindAllString(assigned, -1))
			}
		}
		last = counts
		return total == 2*r.partitions && fromLogs == 2*r.partitions
	}, waitLimit, 200*time.Millisecond, "partitions were not all assigned")
	r.t.Logf("partitions held (traces+logs) by replica: %v", last)
}

// partitionRE finds the partition numbers in franz-go's "topic[0 1]".
var partitionRE = regexp.MustCompile(`\b\d+\b`)

// metricSum adds up every sample of a metric on a Prometheus page whose
// labels contain all of parts.
func metricSum(page, name string, parts ...string) float64 {
	var sum float64
	for _, line := range strings.Split(page, "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(line, p)
		}
		if !ok {
			continue
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			sum += v
		}
	}
	return sum
}

// syncedRE reads franz-go's "synced" log line: the partitions the group
// gave the replica.
var syncedRE = regexp.MustCompile(`^(\S+)\s.*\bsynced\b.*"group": "([^"]+)", "assigned": "([^"]*)"`)

// syncs returns each "synced" line of the replica's logs in order: when,
// which group, which partitions.
// syncLine is one "synced" line.
type syncLine struct {
	at              time.Time
	group, assigned string
}

func (rep *kafkaReplica) syncs() []syncLine {
	var out []syncLine
	for _, line := range strings.Split(rep.log(), "\n") {
		m := syncedRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			continue
		}
		out = append(out, syncLine{at, m[2], m[3]})
	}
	return out
}

// lastSynced is the partitions the replica holds now, by group.
func (rep *kafkaReplica) lastSynced() map[string]string {
	out := map[string]string{}
	for _, s := range rep.syncs() {
		out[s.group] = s.assigned
	}
	return out
}

// syncedSince is every assignment the replica got since t, by group; a
// group with two different ones since t is reported as both, joined by |.
func (rep *kafkaReplica) syncedSince(t time.Time) map[string]string {
	out := map[string]string{}
	for _, s := range rep.syncs() {
		if s.at.Before(t) {
			continue
		}
		if prev, ok := out[s.group]; ok && prev != s.assigned {
			out[s.group] = prev + "|" + s.assigned
			continue
		}
		out[s.group] = s.assigned
	}
	return out
}

// kafkaJudgeCalls records every judge call: which replica made it (by its
// API key), for which generation (its unique reply number), scorer and step.
type kafkaJudgeCalls struct {
	mu    sync.Mutex
	calls []kafkaJudgeCall
}

type kafkaJudgeCall struct {
	at      time.Time
	replica string
	gen     int
	scorer  string
	step    string
}

var replyNumberRE = regexp.MustCompile(`reply number (\d+)\.`)

func (j *kafkaJudgeCalls) add(c scoringtest.Call) {
	call := kafkaJudgeCall{at: time.Now(), gen: -1, step: c.Step, scorer: "prompt_alignment"}
	call.replica = strings.TrimPrefix(strings.TrimPrefix(c.Header.Get("Authorization"), "Bearer "), "e2e-key-")
	if m := replyNumberRE.FindStringSubmatch(c.Text()); m != nil {
		call.gen, _ = strconv.Atoi(m[1])
	}
	if strings.HasPrefix(c.Step, "bias") {
		call.scorer = "bias"
	}
	j.mu.Lock()
	j.calls = append(j.calls, call)
	j.mu.Unlock()
}

func (j *kafkaJudgeCalls) all() []kafkaJudgeCall {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]kafkaJudgeCall(nil), j.calls...)
}

// kafkaSink is the OTLP/gRPC backend of the tier, one listener per
// replica so that it knows which replica sent what.
type kafkaSink struct {
	addrs     []string
	mu        sync.Mutex
	spans     map[string]*sunkSpan // by span id
	traces    map[string]map[int]bool
	appLogs   map[string]int            // application log records by trace/span id and event name
	resultsOf map[string]map[string]int // span id -> scorer -> result records
	metrics   map[string]bool
	lastWrite atomic.Int64
}

type sunkSpan struct {
	trace    string
	copies   int
	replicas []int       // of each copy
	arrived  []time.Time // of each copy
	labels   map[string]string
}

func newKafkaSink(t testing.TB, replicas int) *kafkaSink {
	s := &kafkaSink{spans: map[string]*sunkSpan{}, traces: map[string]map[int]bool{}, appLogs: map[string]int{},
		resultsOf: map[string]map[string]int{}, metrics: map[string]bool{}}
	for i := range replicas {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		srv := grpc.NewServer()
		ptraceotlp.RegisterGRPCServer(srv, &sinkTraces{s: s, replica: i})
		plogotlp.RegisterGRPCServer(srv, &sinkLogs{s: s})
		pmetricotlp.RegisterGRPCServer(srv, &sinkMetrics{s: s})
		go func() { _ = srv.Serve(lis) }()
		t.Cleanup(srv.Stop)
		s.addrs = append(s.addrs, lis.Addr().String())
	}
	return s
}

type sinkTraces struct {
	ptraceotlp.UnimplementedGRPCServer
	s       *kafkaSink
	replica int
}

func (h *sinkTraces) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	s := h.s
	now := time.Now()
	s.mu.Lock()
	for _, rs := range req.Traces().ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				id, tr := sp.SpanID().String(), sp.TraceID().String()
				got := s.spans[id]
				if got == nil {
					got = &sunkSpan{trace: tr, labels: labelsOf(sp)}
					s.spans[id] = got
				}
				got.copies++
				got.replicas = append(got.replicas, h.replica)
				got.arrived = append(got.arrived, now)
				if s.traces[tr] == nil {
					s.traces[tr] = map[int]bool{}
				}
				s.traces[tr][h.replica] = true
			}
		}
	}
	s.mu.Unlock()
	s.lastWrite.Store(now.UnixNano())
	return ptraceotlp.NewExportResponse(), nil
}

type sinkLogs struct {
	plogotlp.UnimplementedGRPCServer
	s *kafkaSink
}

func (h *sinkLogs) Export(_ context.Context, req plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	s := h.s
	s.mu.Lock()
	for _, rl := range req.Logs().ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				event := lr.EventName()
				if event == "" {
					event = attr(lr.Attributes(), "event.name")
				}
				if event == "gen_ai.evaluation.result" {
					id := lr.SpanID().String()
					if s.resultsOf[id] == nil {
						s.resultsOf[id] = map[string]int{}
					}
					s.resultsOf[id][attr(lr.Attributes(), "gen_ai.evaluation.name")]++
					continue
				}
				s.appLogs[logKey(lr)]++
			}
		}
	}
	s.mu.Unlock()
	s.lastWrite.Store(time.Now().UnixNano())
	return plogotlp.NewExportResponse(), nil
}

func logKey(lr plog.LogRecord) string {
	return lr.TraceID().String() + "/" + lr.SpanID().String() + "/" + attr(lr.Attributes(), "event.name")
}

type sinkMetrics struct {
	pmetricotlp.UnimplementedGRPCServer
	s *kafkaSink
}

func (h *sinkMetrics) Export(_ context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	h.s.mu.Lock()
	for _, rm := range req.Metrics().ResourceMetrics().All() {
		for _, sm := range rm.ScopeMetrics().All() {
			for _, m := range sm.Metrics().All() {
				h.s.metrics[m.Name()] = true
			}
		}
	}
	h.s.mu.Unlock()
	return pmetricotlp.NewExportResponse(), nil
}

// cameFrom waits up to limit for a span of td to come out of the replica.
func (s *kafkaSink) cameFrom(td ptrace.Traces, replica int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					if got := s.spans[sp.SpanID().String()]; got != nil && got.replicas[0] == replica {
						s.mu.Unlock()
						return true
					}
				}
			}
		}
		s.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

// missing counts the span ids of want that have not come out.
func (s *kafkaSink) missing(want map[string]bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id := range want {
		if s.spans[id] == nil {
			n++
		}
	}
	return n
}

func (s *kafkaSink) waitQuiet(d time.Duration) {
	for time.Since(time.Unix(0, s.lastWrite.Load())) < d {
		time.Sleep(100 * time.Millisecond)
	}
}

// snapshot copies what came out for the spans of ids.
func (s *kafkaSink) snapshot(ids map[string]bool) map[string]sunkSpan {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]sunkSpan, len(ids))
	for id := range ids {
		if sp := s.spans[id]; sp != nil {
			out[id] = *sp
		}
	}
	return out
}

// sent is what the test sent through tier 1, by span id.
type sent struct {
	spans   map[string]bool      // every acknowledged span
	gens    map[string]int       // generation span id -> its reply number
	ackedAt map[string]time.Time // when its request was acknowledged
	events  map[string]bool      // log keys of the acknowledged log records
}

func newSent() *sent {
	return &sent{spans: map[string]bool{}, gens: map[string]int{}, ackedAt: map[string]time.Time{}, events: map[string]bool{}}
}

// kafkaTraceID and kafkaSpanID number the test's traces and spans; the
// first byte keeps them apart from the other e2e tests' ids.
func kafkaTraceID(n int) pcommon.TraceID {
	id := traceIDOf(uint64(n) + 1)
	id[0] = 0x4b
	return id
}

func kafkaSpanID(n, role int) pcommon.SpanID {
	id := spanIDOf(uint64(n)<<4 | uint64(role))
	id[0] = 0x4b
	return id
}

// Span roles within trace n.
const (
	roleRoot = iota + 1
	roleRetriever
	roleGeneration
)

// traceParts builds requests for traces first..first+count-1: the root
// and retriever spans (context) in one request, the generation spans
// (with content, unique answers) in another; genNumber maps a trace to its
// generation's reply number.
func traceParts(first, count int, withContext, withGeneration bool) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("e2e-kafka")
	now := pcommon.NewTimestampFromTime(time.Now())
	for n := first; n < first+count; n++ {
		add := func(role int, name string) ptrace.Span {
			s := ss.Spans().AppendEmpty()
			s.SetTraceID(kafkaTraceID(n))
			s.SetSpanID(kafkaSpanID(n, role))
			if role != roleRoot {
				s.SetParentSpanID(kafkaSpanID(n, roleRoot))
			}
			s.SetName(name)
			s.SetStartTimestamp(now)
			s.SetEndTimestamp(now)
			return s
		}
		if withContext {
			add(roleRoot, "POST /chat").SetKind(ptrace.SpanKindServer)
			ret := add(roleRetriever, "retrieve orders")
			ret.Attributes().PutStr("openinference.span.kind", "RETRIEVER")
			ret.Attributes().PutStr("retrieval.documents.0.document.content", fmt.Sprintf("Order %d shipped yesterday.", n))
		}
		if withGeneration {
			s := add(roleGeneration, "chat "+model)
			s.SetKind(ptrace.SpanKindClient)
			a := s.Attributes()
			a.PutStr("gen_ai.operation.name", "chat")
			a.PutStr("gen_ai.request.model", model)
			a.PutStr("gen_ai.input.messages", fmt.Sprintf(`[{"role":"user","parts":[{"type":"text","content":"Where is order %d?"}]}]`, n))
			a.PutStr("gen_ai.output.messages", fmt.Sprintf(`[{"role":"assistant","parts":[{"type":"text","content":"Everyone knows such customers are careless; this is reply number %d."}],"finish_reason":"stop"}]`, n))
		}
	}
	return td
}

// record notes the spans of an acknowledged request.
func (s *sent) record(td ptrace.Traces) {
	now := time.Now()
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				id := sp.SpanID().String()
				s.spans[id] = true
				s.ackedAt[id] = now
				if v, ok := sp.Attributes().Get("gen_ai.output.messages"); ok {
					if m := replyNumberRE.FindStringSubmatch(v.Str()); m != nil {
						s.gens[id], _ = strconv.Atoi(m[1])
					}
				}
			}
		}
	}
}

// contentlessCall is LLM call n as an instrumentation with content in log
// events sends it: a chat span without content (chatSpans), and its GenAI
// log events, with a unique answer, carrying the span's trace and span id.
func contentlessCall(n int) (ptrace.Traces, plog.Logs) {
	td := chatSpans(n, 1, false)
	tr, sp := ids(n)
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", captureOffService)
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName(captureOffScope)
	add := func(event string, body func(pcommon.Map)) {
		rec := sl.LogRecords().AppendEmpty()
		rec.SetTraceID(tr)
		rec.SetSpanID(sp)
		rec.SetTimestamp(pcommon.NewTimestampFromTime(time.Now()))
		rec.Attributes().PutStr("event.name", event)
		rec.Attributes().PutStr("gen_ai.system", "openai")
		body(rec.Body().SetEmptyMap())
	}
	add("gen_ai.user.message", func(m pcommon.Map) { m.PutStr("content", fmt.Sprintf("Where is order %d?", n)) })
	add("gen_ai.choice", func(m pcommon.Map) {
		m.PutInt("index", 0)
		m.PutStr("finish_reason", "stop")
		m.PutEmptyMap("message").PutStr("content", fmt.Sprintf("Everyone knows such customers are careless; this is reply number %d.", n))
	})
	return td, ld
}

// recordLogs notes the records of an acknowledged logs request.
func (s *sent) recordLogs(ld plog.Logs) {
	for _, rl := range ld.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				s.events[logKey(lr)] = true
			}
		}
	}
}

// lineCount counts the lines of text containing every one of parts.
func lineCount(text string, parts ...string) int {
	n := 0
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(sc.Text(), p)
		}
		if ok {
			n++
		}
	}
	return n
}

// scrapePage is a Prometheus page of the collector's own telemetry.
func scrapePage(t testing.TB, port int) string {
	t.Helper()
	_, body, err := httpGet(context.Background(), fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	require.NoError(t, err)
	return body
}

func readFileIfExists(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	return b, err
}
