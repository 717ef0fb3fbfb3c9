//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/llm-eval/llm_eval/scoring/scoringtest"
	"github.com/llm-eval/llm_eval/test/internal/collectortest"
)

// The kill test: 2,000 sampled generation spans through the built
// collector with llm_eval's storage on file_storage, a slow fake judge,
// kill -9 at several points while spans are being sent and evaluated, a
// restart on the same storage after each; the last restart comes after
// max_wait has passed. Every acknowledged span must come out, exactly once
// except a span killed between being sent on and the delete of its record
// (at-least-once, as docs/durability.md says), and the judge must not be called
// again for a result that was recorded before a kill.
const (
	durableSpans     = 2000
	durableBatch     = 10                     // generation spans per request, plus one other span
	durablePace      = 100 * time.Millisecond // between requests
	durableJudgeWait = 150 * time.Millisecond // the slow judge
	durableWorkers   = 32
	// dupWindow bounds how long before a kill a span may have been sent on
	// and still come out again after the restart: the hand-off to the
	// exporter and the delete of its record (on this shared machine,
	// scheduling delays included).
	dupWindow = time.Second
	// arrivalLag is how much later than the kill the sink may take in a
	// copy that the killed collector sent before it died: the sink stamps
	// a request when it handles it. The restarted collector, which could
	// send a real second copy, is not up that soon.
	arrivalLag = 50 * time.Millisecond
)

// killPoints are the acknowledged generation spans after which the
// collector is killed; the last kill comes after every span was sent.
var killPoints = []int{400, 900, 1400, durableSpans}

// Conversations open across the kills: each gets one turn in every run
// but the last, in requests of their own, and ends durableIdle after its
// last turn, in the last run. None may lose a turn.
const (
	durableConversations = 10
	durableIdle          = 20 * time.Second
)

var replyNumber = regexp.MustCompile(`reply number (\d+)\.`)

func TestDurableEvaluationSurvivesKill(t *testing.T) {
	bin := collectortest.Binary(t)
	judge := scoringtest.New(t)
	judge.SetLatency(durableJudgeWait)
	var calls judgeCalls
	judge.Handle(func(c scoringtest.Call) scoringtest.Reply { calls.add(c); return scoringtest.Reply{} })
	sink := newSpanSink(t)

	dir := t.TempDir()
	storageDir := filepath.Join(dir, "storage")
	require.NoError(t, os.Mkdir(storageDir, 0o700))
	p := ports{otlp: collectortest.FreePort(t), health: collectortest.FreePort(t), telemetry: collectortest.FreePort(t)}
	normal := writeDurableConfig(t, dir, "normal.yaml", judge.URL, sink.srv.URL, storageDir, "60s", p)
	// The last restart reads the same storage with a max_wait that has
	// passed for every span held at the kill.
	expired := writeDurableConfig(t, dir, "expired.yaml", judge.URL, sink.srv.URL, storageDir, "1s", p)

	var lives []time.Time // when each run started
	var kills []time.Time // when each run was killed
	start := func(cfg string) *collectorProc {
		lives = append(lives, time.Now())
		c := startKillable(t, bin, cfg, filepath.Join(dir, fmt.Sprintf("collector-%d.log", len(lives))))
		c.waitHealthy(t, p.health)
		return c
	}
	col := start(normal)

	acked := map[string]bool{}   // span ids whose request was acknowledged
	unacked := map[string]bool{} // span ids whose request failed at a kill
	var generations int          // acknowledged generation spans
	next := 0
	turns := map[string]int{} // conversation id -> turns acknowledged
	for run, killAt := range killPoints {
		// One turn of every conversation, open since the first run.
		for c := range durableConversations {
			id := fmt.Sprintf("durable-conversation-%d", c)
			td, ids := durableTurnOf(id, turns[id], run*durableConversations+c)
			if err := postTraces(p.otlp, td); err != nil {
				t.Fatalf("request failed with the collector up: %v", err)
			}
			for _, sid := range ids {
				acked[sid] = true
			}
			turns[id]++
		}
		for next < durableSpans && generations < killAt {
			td, ids := durableBatchOf(next, durableBatch)
			next += durableBatch
			if err := postTraces(p.otlp, td); err != nil {
				t.Fatalf("request failed with the collector up: %v", err)
			}
			for _, id := range ids {
				acked[id] = true
			}
			generations += durableBatch
			time.Sleep(durablePace)
		}
		// kill -9 while a request is in flight and evaluations run.
		td, ids := durableBatchOf(next, durableBatch)
		next += durableBatch
		sent := make(chan error, 1)
		go func() { sent <- postTraces(p.otlp, td) }()
		time.Sleep(2 * time.Millisecond)
		col.kill(t)
		kills = append(kills, time.Now()) // the process has exited
		if err := <-sent; err == nil {
			for _, id := range ids {
				acked[id] = true
			}
			generations += durableBatch
		} else {
			for _, id := range ids {
				unacked[id] = true
			}
		}
		if killAt == durableSpans {
			time.Sleep(1500 * time.Millisecond) // max_wait of expired.yaml passes
			col = start(expired)
		} else {
			col = start(normal)
		}
	}

	// Every acknowledged span comes out; then the output stays still.
	require.Eventually(t, func() bool { return sink.missing(acked) == 0 }, 2*time.Minute, 250*time.Millisecond,
		"acknowledged spans did not all come out")
	// Every conversation, open at every kill, is scored once with every turn
	// it was sent, idle_timeout after its last turn.
	require.Eventually(t, func() bool { return len(sink.conversationResults()) == durableConversations }, 2*durableIdle+time.Minute, 250*time.Millisecond,
		"conversations were not all scored after the restarts")
	sink.waitQuiet(2 * time.Second)
	own := scrape(t, p.telemetry)
	col.stop(t)

	counts := sink.counts()
	var out, duplicated, lost, unackedOut int
	var widest time.Duration // between a duplicate's first copy and the kill after it
	for id, n := range counts {
		out++
		if n > 1 {
			// Sent on, then killed before its record was deleted: the
			// documented window of at-least-once. Any other duplicate is
			// a bug.
			duplicated++
			first := sink.firstArrival(id)
			i := sort.Search(len(kills), func(i int) bool { return !kills[i].Add(arrivalLag).Before(first) })
			if n > 2 || i == len(kills) || kills[i].Sub(first) > dupWindow {
				t.Errorf("span %s came out %d times, the first %v before a kill", id, n, kills[min(i, len(kills)-1)].Sub(first))
			} else {
				widest = max(widest, kills[i].Sub(first)) // negative: taken in after the kill
			}
		}
		if !acked[id] && !unacked[id] {
			t.Errorf("span %s came out but was never sent", id)
		}
		if unacked[id] {
			unackedOut++
		}
	}
	for id := range acked {
		if counts[id] == 0 {
			lost++
		}
	}
	assert.Zero(t, lost, "acknowledged spans lost")

	wasted, afterRecorded := calls.check(t, lives, sink)
	t.Logf("kill points (acknowledged generation spans): %v; runs: %d", killPoints, len(lives))
	t.Logf("spans in (acknowledged): %d; unacknowledged at a kill: %d, of which came out: %d", len(acked), len(unacked), unackedOut)
	t.Logf("spans out: %d; duplicated: %d (sent on at most %v before a kill, before their record was deleted); lost: %d", out, duplicated, widest, lost)
	t.Logf("judge calls: %d; evaluations whose calls before a kill were lost (in flight, or finished and not yet recorded): %d; calls for results recorded before a kill: %d",
		calls.len(), wasted, afterRecorded)
	assert.Zero(t, afterRecorded, "the judge was called again for a result recorded before a kill")
	assert.LessOrEqual(t, wasted, len(killPoints)*durableWorkers*2,
		"only evaluations in flight at a kill lose their calls (bounded by the workers)")
	assert.True(t, hasLine(own, "otelcol_processor_llm_eval_storage_recovered", `outcome="forwarded"`),
		"the last run forwards the spans found after max_wait:\n%s", grepLines(own, "storage"))
	assert.Positive(t, sink.restarted(), "spans found after max_wait carry error.type restarted")

	for id, results := range sink.conversationResults() {
		require.Len(t, results, 1, "conversation %s scored once", id)
		assert.Equal(t, 2*turns[id], results[0].messages, "conversation %s kept every turn across %d kills", id, len(kills))
		assert.Contains(t, []string{"pass", "fail"}, results[0].label, "conversation %s judged, not failed", id)
	}
	t.Logf("conversations open at every kill: %d, each of %d turns; each scored once with every turn (conversation_completeness judge calls: %d)",
		durableConversations, len(killPoints), calls.conversationCalls())
}

// durableTurnOf is turn n of a conversation: a chat span carrying the
// conversation id, in a trace and with a span id of its own (above the
// generations' ids).
func durableTurnOf(conversation string, n, unique int) (ptrace.Traces, []string) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("e2e")
	s := ss.Spans().AppendEmpty()
	id := uint64(1)<<48 + uint64(unique)
	s.SetTraceID(traceIDOf(id))
	s.SetSpanID(spanIDOf(id))
	s.SetName("chat " + model)
	s.SetKind(ptrace.SpanKindClient)
	now := pcommon.NewTimestampFromTime(time.Now())
	s.SetStartTimestamp(now)
	s.SetEndTimestamp(now)
	a := s.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("gen_ai.request.model", model)
	a.PutStr("gen_ai.conversation.id", conversation)
	a.PutStr("gen_ai.input.messages", fmt.Sprintf(`[{"role":"user","parts":[{"type":"text","content":"Question %d of %s: can you help with my order?"}]}]`, n, conversation))
	a.PutStr("gen_ai.output.messages", fmt.Sprintf(`[{"role":"assistant","parts":[{"type":"text","content":"Yes, answer %d of %s: your order is on its way."}],"finish_reason":"stop"}]`, n, conversation))
	return td, []string{s.SpanID().String()}
}

// durableBatchOf builds a request with generation spans first..first+n-1,
// each in its own trace with a unique answer, and one other span.
func durableBatchOf(first, n int) (ptrace.Traces, []string) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("e2e")
	var ids []string
	now := pcommon.NewTimestampFromTime(time.Now())
	for i := first; i < first+n; i++ {
		s := ss.Spans().AppendEmpty()
		s.SetTraceID(traceIDOf(uint64(i) + 1))
		s.SetSpanID(spanIDOf(uint64(i) + 1))
		s.SetName("chat " + model)
		s.SetKind(ptrace.SpanKindClient)
		s.SetStartTimestamp(now)
		s.SetEndTimestamp(now)
		a := s.Attributes()
		a.PutStr("gen_ai.operation.name", "chat")
		a.PutStr("gen_ai.request.model", model)
		a.PutStr("gen_ai.input.messages", fmt.Sprintf(`[{"role":"user","parts":[{"type":"text","content":"Where is order %d?"}]}]`, i))
		a.PutStr("gen_ai.output.messages", fmt.Sprintf(`[{"role":"assistant","parts":[{"type":"text","content":"Everyone knows such customers are careless; this is reply number %d."}],"finish_reason":"stop"}]`, i))
		ids = append(ids, s.SpanID().String())
	}
	o := ss.Spans().AppendEmpty()
	o.SetTraceID(traceIDOf(uint64(first) + 1))
	o.SetSpanID(spanIDOf(uint64(first) + 1<<40))
	o.SetName("GET /orders")
	o.SetStartTimestamp(now)
	o.SetEndTimestamp(now)
	ids = append(ids, o.SpanID().String())
	return td, ids
}

func traceIDOf(n uint64) pcommon.TraceID {
	var id pcommon.TraceID
	binary.BigEndian.PutUint64(id[8:], n)
	return id
}

func spanIDOf(n uint64) pcommon.SpanID {
	var id pcommon.SpanID
	binary.BigEndian.PutUint64(id[:], n)
	return id
}

func postTraces(port int, td ptrace.Traces) error {
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/v1/traces", port), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

func writeDurableConfig(t *testing.T, dir, name, judgeURL, sinkURL, storageDir, maxWait string, p ports) string {
	t.Helper()
	cfg := fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%[1]d
processors:
  llm_eval:
    storage: file_storage/llm_eval
    judge:
      endpoint: %[3]s
      model: e2e-judge
      timeout: 10s
      max_concurrency: %[8]d
    sampling:
      percentage: 100
    max_wait: %[6]s
    queue_size: 5000
    late_results: none
    cache:
      enabled: false
    conversation:
      idle_timeout: %[9]s
    scorers:
      - name: bias
        reason_mode: summary
      - name: prompt_alignment
        reason_mode: summary
        instructions: ["Answer in English."]
      - name: conversation_completeness
        reason_mode: summary
exporters:
  # Synchronous: a span has reached the sink when ConsumeTraces returns.
  otlp_http:
    endpoint: %[4]s
    compression: none
    sending_queue:
      enabled: false
extensions:
  health_check:
    endpoint: 127.0.0.1:%[2]d
  file_storage/llm_eval:
    directory: %[5]s
service:
  extensions: [health_check, file_storage/llm_eval]
  telemetry:
    metrics:
      level: normal
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: %[7]d
  pipelines:
    traces:
      receivers: [otlp]
      processors: [llm_eval]
      exporters: [otlp_http]
`, p.otlp, p.health, judgeURL, sinkURL, storageDir, maxWait, p.telemetry, durableWorkers, durableIdle)
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	return path
}

// collectorProc is one run of the collector that the test can kill.
type collectorProc struct {
	cmd    *exec.Cmd
	exited chan struct{}
	log    string
}

func startKillable(t *testing.T, bin, cfg, logPath string) *collectorProc {
	t.Helper()
	return startKillableWith(t, bin, cfg, logPath, nil)
}

// startKillableWith is startKillable with setup run on the command before
// it starts (its environment, its user).
func startKillableWith(t *testing.T, bin, cfg, logPath string, setup func(*exec.Cmd)) *collectorProc {
	t.Helper()
	cmd := exec.Command(bin, "--config", cfg, diagnosticMetrics) // storage_recovered is diagnostic
	if setup != nil {
		setup(cmd)
	}
	return startProcess(t, cmd, logPath)
}

func (c *collectorProc) waitHealthy(t *testing.T, port int) {
	t.Helper()
	waitProcHealthy(t, c, port)
}

func (c *collectorProc) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGKILL))
	<-c.exited
}

func (c *collectorProc) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("collector did not stop on SIGTERM")
	}
}

// spanSink is an OTLP/HTTP endpoint that counts every span it receives.
type spanSink struct {
	srv      *httptest.Server
	mu       sync.Mutex
	seen     map[string]int
	arrived  map[string]time.Time            // first copy of each span
	results  map[string]map[string]time.Time // span id -> scorer -> result time
	restarts int                             // results with error.type restarted
	// conversations are the result spans of conversations, by id.
	conversations map[string][]conversationResult
	lastWrite     atomic.Int64
}

// conversationResult is what one conversation's result span said.
type conversationResult struct {
	messages int    // llm_eval.conversation.messages
	label    string // conversation_completeness's label
}

func newSpanSink(t *testing.T) *spanSink {
	s := &spanSink{seen: map[string]int{}, arrived: map[string]time.Time{}, results: map[string]map[string]time.Time{},
		conversations: map[string][]conversationResult{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *spanSink) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	for _, rs := range req.Traces().ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				if conv, ok := sp.Attributes().Get("gen_ai.conversation.id"); ok && sp.Name() == "gen_ai.evaluation" {
					s.conversationSpan(conv.Str(), sp)
					continue // a result span, not one of the spans sent
				}
				id := sp.SpanID().String()
				s.seen[id]++
				if s.seen[id] == 1 {
					s.arrived[id] = time.Now()
				}
				for _, ev := range sp.Events().All() {
					name, _ := ev.Attributes().Get("gen_ai.evaluation.name")
					if s.results[id] == nil {
						s.results[id] = map[string]time.Time{}
					}
					s.results[id][name.Str()] = ev.Timestamp().AsTime()
					if et, ok := ev.Attributes().Get("error.type"); ok && et.Str() == "restarted" {
						s.restarts++
					}
				}
			}
		}
	}
	s.mu.Unlock()
	s.lastWrite.Store(time.Now().UnixNano())
	resp, _ := ptraceotlp.NewExportResponse().MarshalProto()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(resp)
}

// conversationSpan notes a conversation's result span. Called with mu held.
func (s *spanSink) conversationSpan(id string, sp ptrace.Span) {
	r := conversationResult{}
	if m, ok := sp.Attributes().Get("llm_eval.conversation.messages"); ok {
		r.messages = int(m.Int())
	}
	for _, ev := range sp.Events().All() {
		if name, _ := ev.Attributes().Get("gen_ai.evaluation.name"); name.Str() == "conversation_completeness" {
			label, _ := ev.Attributes().Get("gen_ai.evaluation.score.label")
			r.label = label.Str()
		}
	}
	s.conversations[id] = append(s.conversations[id], r)
}

// conversationResults are the result spans of conversations so far.
func (s *spanSink) conversationResults() map[string][]conversationResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string][]conversationResult, len(s.conversations))
	for k, v := range s.conversations {
		out[k] = append([]conversationResult(nil), v...)
	}
	return out
}

func (s *spanSink) missing(want map[string]bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id := range want {
		if s.seen[id] == 0 {
			n++
		}
	}
	return n
}

func (s *spanSink) waitQuiet(d time.Duration) {
	for time.Since(time.Unix(0, s.lastWrite.Load())) < d {
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *spanSink) counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.seen))
	for k, v := range s.seen {
		out[k] = v
	}
	return out
}

func (s *spanSink) firstArrival(id string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.arrived[id]
}

func (s *spanSink) restarted() int { s.mu.Lock(); defer s.mu.Unlock(); return s.restarts }

// resultTime is when the span's result of scorer was produced.
func (s *spanSink) resultTime(spanID, scorer string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.results[spanID][scorer]
	return at, ok
}

// judgeCalls records when each judge call arrived, by span and scorer.
type judgeCalls struct {
	mu    sync.Mutex
	calls []judgeCall
	// conversation counts the calls of conversation_completeness, which
	// judges a conversation, not a generation.
	conversation int
}

type judgeCall struct {
	at     time.Time
	span   int // the generation's number, from its unique answer
	scorer string
}

func (j *judgeCalls) add(c scoringtest.Call) {
	at := time.Now()
	if strings.HasPrefix(c.Step, "conversation_completeness") {
		j.mu.Lock()
		j.conversation++
		j.mu.Unlock()
		return
	}
	if strings.Contains(c.Text(), "durable-conversation-") {
		return // a turn of a conversation: not one of the numbered generations
	}
	m := replyNumber.FindStringSubmatch(c.Text())
	n := -1
	if m != nil {
		n, _ = strconv.Atoi(m[1])
	}
	scorer := "prompt_alignment"
	if strings.HasPrefix(c.Step, "bias") {
		scorer = "bias"
	}
	j.mu.Lock()
	j.calls = append(j.calls, judgeCall{at: at, span: n, scorer: scorer})
	j.mu.Unlock()
}

func (j *judgeCalls) len() int { j.mu.Lock(); defer j.mu.Unlock(); return len(j.calls) }

func (j *judgeCalls) conversationCalls() int { j.mu.Lock(); defer j.mu.Unlock(); return j.conversation }

// check attributes every judge call to the run it arrived in and compares
// it with the run in which the span's result that came out was produced:
// calls in a later run than that one paid again for a recorded result
// (afterRecorded); calls in an earlier run were lost at a kill: the
// evaluation was in flight, or finished and not yet recorded (wasted).
func (j *judgeCalls) check(t *testing.T, lives []time.Time, sink *spanSink) (wasted, afterRecorded int) {
	t.Helper()
	lifeOf := func(at time.Time) int {
		return sort.Search(len(lives), func(i int) bool { return lives[i].After(at) }) - 1
	}
	type key struct {
		span   int
		scorer string
	}
	runs := map[key]map[int]bool{}
	j.mu.Lock()
	for _, c := range j.calls {
		require.GreaterOrEqual(t, c.span, 0, "a judge call without a reply number")
		k := key{c.span, c.scorer}
		if runs[k] == nil {
			runs[k] = map[int]bool{}
		}
		runs[k][lifeOf(c.at)] = true
	}
	j.mu.Unlock()
	for k, in := range runs {
		spanID := spanIDOf(uint64(k.span) + 1).String()
		at, ok := sink.resultTime(spanID, k.scorer)
		if !ok {
			continue // the span was unacknowledged and did not come out
		}
		produced := lifeOf(at)
		for life := range in {
			switch {
			case life > produced:
				afterRecorded++
				t.Errorf("span %d scorer %s: judged in run %d, after its result from run %d", k.span, k.scorer, life, produced)
			case life < produced:
				wasted++
			}
		}
	}
	return wasted, afterRecorded
}

func scrape(t *testing.T, port int) string {
	t.Helper()
	_, body, err := httpGet(context.Background(), fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	require.NoError(t, err)
	return body
}

func grepLines(page, sub string) string {
	var out []string
	for _, l := range strings.Split(page, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// Storage faults at start, as the user sees them: a directory the
// collector cannot write, and a second collector on the directory of a
// running one. Both fail to start naming llm_eval's storage key; the first
// collector keeps working.
func TestDurableStartFaults(t *testing.T) {
	bin := collectortest.Binary(t)
	judge := scoringtest.New(t)
	sink := newSpanSink(t)
	dir := t.TempDir()

	unwritable := "/sys/kernel" // not writable by root either
	if os.Geteuid() != 0 {
		unwritable = filepath.Join(dir, "read-only")
		require.NoError(t, os.Mkdir(unwritable, 0o500))
	}
	p := ports{otlp: collectortest.FreePort(t), health: collectortest.FreePort(t), telemetry: collectortest.FreePort(t)}
	cfg := writeDurableConfig(t, dir, "unwritable.yaml", judge.URL, sink.srv.URL, unwritable, "30s", p)
	out, err := exec.Command(bin, "--config", cfg).CombinedOutput()
	require.Error(t, err, "the collector must not start")
	assert.Contains(t, string(out), `llm_eval: storage: extension "file_storage/llm_eval" could not open storage for llm_eval`)
	assert.Contains(t, string(out), filepath.Join(unwritable, "processor_llm_eval_"), "the error names the file it could not create")

	shared := filepath.Join(dir, "shared")
	require.NoError(t, os.Mkdir(shared, 0o700))
	first := writeDurableConfig(t, dir, "first.yaml", judge.URL, sink.srv.URL, shared, "30s", p)
	c := startKillable(t, bin, first, filepath.Join(dir, "first.log"))
	c.waitHealthy(t, p.health)
	q := ports{otlp: collectortest.FreePort(t), health: collectortest.FreePort(t), telemetry: collectortest.FreePort(t)}
	second := writeDurableConfig(t, dir, "second.yaml", judge.URL, sink.srv.URL, shared, "30s", q)
	out, err = exec.Command(bin, "--config", second).CombinedOutput()
	require.Error(t, err, "a second collector on the same directory must not start")
	assert.Contains(t, string(out), `could not open storage for llm_eval: timeout (is another collector using the same storage directory?)`)

	td, ids := durableBatchOf(0, 2)
	require.NoError(t, postTraces(p.otlp, td))
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	require.Eventually(t, func() bool { return sink.missing(want) == 0 }, waitLimit, 100*time.Millisecond,
		"the first collector keeps evaluating and forwarding")
	c.stop(t)
}
