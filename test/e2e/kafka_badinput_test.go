//go:build e2e && kafka

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKafkaBadInput: what a Kafka outage or a stray record does to the
// Kafka recipe, one replica behind tier 1.
//
//   - The broker is down when both tiers start: they start anyway, say in
//     their log that the broker cannot be reached, and retry; tier 1
//     acknowledges into its persistent queue; once the broker is up,
//     everything comes out.
//   - A record that is not OTLP, in every partition of both topics, is
//     counted, logged and skipped: the replica keeps running and the
//     records after it come out.
//   - The broker is killed mid-stream and comes back on its data
//     directory: nothing acknowledged is lost.
func TestKafkaBadInput(t *testing.T) {
	const partitions = 3
	r := newKafkaRig(t, partitions, 1)
	rep := r.replicas[0]

	// Broker down at start.
	r.startTier1()
	r.start(rep)
	s := newSent()
	r.send(s, traceParts(5000, 10, true, true)) // acknowledged into tier 1's queue
	time.Sleep(3 * time.Second)                 // a few connection attempts
	for name, log := range map[string]string{"tier 1": readLog(t, r.tier1.log), "replica": rep.log()} {
		assert.Positive(t, lineCount(log, "unable to open connection to broker", r.brokerAddr, "connection refused"),
			"%s does not say that the broker cannot be reached:\n%s", name, tail([]byte(log), 30))
	}
	r.tier1.waitHealthy(t, r.tier1Health)
	rep.proc.waitHealthy(t, rep.health)
	r.startBroker()
	r.waitOut(s, 2*time.Minute)
	t.Logf("broker down at start: both tiers started and said so; %d spans acknowledged before the broker came up, all came out", len(s.spans))

	// A record that is not OTLP.
	pid := rep.proc.cmd.Process.Pid
	r.produceJunk("otlp_spans", "this is not OTLP")
	r.produceJunk("otlp_logs", "neither is this")
	after := newSent()
	r.send(after, traceParts(5100, 10, true, true))
	r.waitOut(after, time.Minute)
	own := scrape(t, rep.telemetry)
	assert.Equal(t, float64(partitions), metricSum(own, "otelcol_kafka_receiver_unmarshal_failed_spans"), "junk span records counted")
	assert.Equal(t, float64(partitions), metricSum(own, "otelcol_kafka_receiver_unmarshal_failed_log_records"), "junk log records counted")
	assert.Equal(t, 2*partitions, lineCount(rep.log(), "failed to unmarshal message"), "each junk record is logged once")
	select {
	case <-rep.proc.exited:
		t.Fatal("the replica exited after the junk records")
	default:
	}
	assert.Equal(t, pid, rep.proc.cmd.Process.Pid)
	t.Logf("non-OTLP records: %d counted and skipped, the replica kept running, the %d spans after them came out", 2*partitions, len(after.spans))

	// The broker goes away mid-stream.
	gone := newSent()
	var killAt, backAt time.Time
	for b := range 40 {
		switch b {
		case 15:
			r.broker.kill(t)
			killAt = time.Now()
		case 30:
			r.startBroker()
			backAt = time.Now()
		}
		r.send(gone, traceParts(6000+b*3, 3, true, true))
		time.Sleep(100 * time.Millisecond)
	}
	r.waitOut(gone, 3*time.Minute)
	r.sink.waitQuiet(2 * time.Second)
	out := r.sink.snapshot(gone.spans)
	dups := 0
	for _, sp := range out {
		if sp.copies > 1 {
			dups++
		}
	}
	assert.Len(t, out, len(gone.spans), "acknowledged spans lost while the broker was away")
	t.Logf("broker killed mid-stream for %v: %d spans acknowledged, %d came out, %d of them more than once",
		backAt.Sub(killAt).Round(100*time.Millisecond), len(gone.spans), len(out), dups)
}

// TestKafkaIdleReplicas: three replicas on a topic of two partitions. The
// group gives the third nothing; it says so in its log (franz-go's
// "synced" line with nothing assigned, for each group), holds no partition
// by its metrics, and the other two evaluate everything.
func TestKafkaIdleReplicas(t *testing.T) {
	r := newKafkaRig(t, 2, 3)
	r.startBroker()
	r.startTier1()
	for _, rep := range r.replicas {
		r.start(rep)
	}
	r.waitAssigned(r.replicas, false)
	var idle []*kafkaReplica
	for _, rep := range r.replicas {
		if rep.assigned(t) == 0 {
			idle = append(idle, rep)
		}
	}
	require.Len(t, idle, 1, "two partitions, three replicas: one is idle")
	for group, assigned := range idle[0].lastSynced() {
		assert.Empty(t, assigned, "%s: group %s", idle[0].name, group)
	}
	assert.Len(t, idle[0].lastSynced(), 2, "the idle replica logs an empty assignment for both groups")

	s := newSent()
	r.send(s, traceParts(7000, 20, true, true))
	r.waitOut(s, 2*time.Minute)
	for id, sp := range r.sink.snapshot(s.spans) {
		assert.NotEqual(t, idle[0].index, sp.replicas[0], "span %s came out of the idle replica", id)
	}
	t.Logf("%s is idle and logs it: %s", idle[0].name, strings.TrimSpace(firstLine(idle[0].log(), `"assigned": ""`)))
}

func readLog(t *testing.T, path string) string {
	t.Helper()
	b, err := readFileIfExists(path)
	require.NoError(t, err)
	return string(b)
}

// firstLine is the first line of text containing sub, without the
// resource attributes.
func firstLine(text, sub string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			if i := strings.Index(l, `{"resource"`); i >= 0 {
				if j := strings.Index(l[i:], `"group"`); j >= 0 {
					return l[:i] + l[i+j:]
				}
			}
			return l
		}
	}
	return ""
}
