//go:build e2e && kafka

package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

const (
	kafkaPartitions = 6
	// kafkaJudgeWait is the fake judge's latency per call. It is above
	// autocommit.interval of examples/kafka-evaluation-tier.yaml (1 s), as a
	// real judge's is: see the kill phase.
	kafkaJudgeWait = 1500 * time.Millisecond
	// kafkaDupWindow bounds how long before a kill a record may have been
	// acknowledged by tier 1 and still be delivered again: the
	// autocommit.interval (1 s) whose marks the kill loses, plus the time
	// from tier 1's acknowledgement to the replica taking the record and
	// the commit request, on this shared machine.
	kafkaDupWindow = 3 * time.Second
)

// TestKafkaScaleOut runs the Kafka recipe of docs/scaling.md with three
// evaluation replicas, in three phases:
//
//  1. membership changes: two replicas, then a third joins while traces
//     are half sent. Traces whose partition moves are split between two
//     replicas; the move is in the replicas' metrics and logs.
//  2. stable membership: every generation is evaluated exactly once (one
//     replica, one judge call per step), no trace is split, every span,
//     application log record and result comes out once, metrics too.
//  3. kill -9 of one replica mid-stream and an immediate restart on its
//     name and storage: no acknowledged span is lost, no partition moves,
//     duplicates are counted and bounded, and a duplicated span costs no
//     second judge call.
func TestKafkaScaleOut(t *testing.T) {
	r := newKafkaRig(t, kafkaPartitions, 3)
	r.judge.SetLatency(kafkaJudgeWait)
	r.startBroker()
	r.startTier1()
	r0, r1, r2 := r.replicas[0], r.replicas[1], r.replicas[2]
	all := r.replicas

	// Phase 1: a replica joins while traces are in flight.
	r.start(r0)
	r.start(r1)
	r.waitAssigned(all[:2], true)
	moving := newSent()
	const movingTraces = 40
	r.send(moving, traceParts(0, movingTraces, true, false))
	r.waitOut(moving, 30*time.Second)
	closed := []int{r0.closed(t), r1.closed(t)}
	r.start(r2)
	r.waitAssigned(all, true)
	r.send(moving, traceParts(0, movingTraces, false, true))
	r.waitOut(moving, 2*time.Minute)
	out := r.sink.snapshot(moving.spans)
	split := splitTraces(out)
	assertOnce(t, "phase 1", out)
	t.Logf("phase 1 (a replica joins mid-trace): %d of %d traces split between two replicas; spans out %d of %d",
		len(split), movingTraces, len(out), len(moving.spans))
	require.NotEmpty(t, split, "the join moves half the partitions: some traces must have been in flight")
	// Never silent: the replicas that gave partitions up count them and
	// say which in their log.
	assert.Greater(t, r0.closed(t)+r1.closed(t), closed[0]+closed[1],
		"otelcol_kafka_receiver_partition_close did not count the partitions that moved")
	for _, rep := range all[:2] {
		assert.Positive(t, lineCount(rep.log(), "revoking prior assigned partitions", "otlp_spans"),
			"%s does not log the partitions it gave up", rep.name)
	}
	assert.Positive(t, lineCount(r2.log(), "new group session begun", "otlp_spans"),
		"the joining replica does not log the partitions it took")

	// Phase 2: stable membership.
	stable := newSent()
	const stableFirst, stableTraces, contentless = 1000, 45, 9
	r.send(stable, traceParts(stableFirst, stableTraces, true, false))
	r.send(stable, traceParts(stableFirst, stableTraces, false, true))
	for k := range contentless {
		td, ld := contentlessCall(2000 + k)
		postLogs(context.Background(), t, r.tier1OTLP, ld)
		stable.recordLogs(ld)
		r.send(stable, td)
		_, span := ids(2000 + k)
		stable.gens[span.String()] = 2000 + k
	}
	r.waitOut(stable, 2*time.Minute)
	r.sink.waitQuiet(2 * time.Second)
	out = r.sink.snapshot(stable.spans)
	assertOnce(t, "phase 2", out)
	assert.Empty(t, splitTraces(out), "phase 2: traces split under stable membership")
	// A verdict on every generation span, the ones whose content came in
	// log events included: their span and events met on one replica (a
	// span parted from its events would leave not_scorable).
	for id, n := range stable.gens {
		labels := out[id].labels
		for _, sc := range kafkaScorers {
			assert.Contains(t, []string{"pass", "fail"}, labels[sc], "generation %d: %s result %q", n, sc, labels[sc])
		}
	}
	evaluatedOnce(t, r.calls.all(), stable.gens)
	r.sink.mu.Lock()
	for key := range stable.events {
		assert.Equal(t, 1, r.sink.appLogs[key], "application log record %s came out %d times", key, r.sink.appLogs[key])
	}
	for id, n := range stable.gens {
		for _, sc := range kafkaScorers {
			assert.Positive(t, r.sink.resultsOf[id][sc], "generation %d: no %s result record reached the backend", n, sc)
		}
	}
	r.sink.mu.Unlock()
	// llm_eval_metrics flushes every 15 s (examples/collector.yaml).
	assert.Eventually(t, func() bool {
		r.sink.mu.Lock()
		defer r.sink.mu.Unlock()
		return r.sink.metrics["gen_ai.evaluation.results"]
	}, 30*time.Second, 250*time.Millisecond, "llm_eval_metrics did not reach the backend")
	t.Logf("phase 2 (stable): %d traces, %d generations (%d of them with their content in log events), %d spans and %d application log records out once each; no trace split",
		stableTraces+contentless, len(stable.gens), contentless, len(out), len(stable.events))

	// Phase 3: kill -9 one replica mid-stream and restart it at once. The
	// kill comes as soon as the replica has sent on the first spans of a
	// record, before the next autocommit tick (most of the time), so that
	// the record is delivered again after the restart.
	killed := r1
	assignedBefore := map[string]map[string]string{}
	for _, rep := range all {
		assignedBefore[rep.name] = rep.lastSynced()
	}
	phase3 := time.Now()
	kill := newSent()
	const killFirst, batches, perBatch = 3000, 60, 3
	var killAt, restarted time.Time
	restartDone := make(chan struct{})
	for b := range batches {
		td := traceParts(killFirst+b*perBatch, perBatch, true, true)
		r.send(kill, td)
		if b >= batches/2 && killAt.IsZero() && r.sink.cameFrom(td, killed.index, 2*time.Second) {
			killed.proc.kill(t)
			killAt = time.Now()
			go func() {
				defer close(restartDone)
				r.start(killed)
				restarted = time.Now()
			}()
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.False(t, killAt.IsZero(), "no request reached %s in the second half", killed.name)
	<-restartDone
	r.waitOut(kill, 3*time.Minute)
	r.sink.waitQuiet(3 * time.Second)
	out = r.sink.snapshot(kill.spans)

	lost := 0
	for id := range kill.spans {
		if _, ok := out[id]; !ok {
			lost++
		}
	}
	assert.Zero(t, lost, "acknowledged spans lost across the kill")
	assert.Empty(t, splitTraces(out), "phase 3: a trace moved although the replica came back within session_timeout")
	// Static membership: the restart rebalances the group once (franz-go's
	// range metadata carries the generation), and range gives every
	// replica the partitions it had.
	for _, rep := range all {
		for group, assigned := range rep.syncedSince(phase3) {
			assert.Equal(t, assignedBefore[rep.name][group], assigned, "%s, group %s: partitions changed owner", rep.name, group)
		}
	}

	// Duplicates: a record the killed replica took after its last offset
	// commit is delivered again (replay); a span being sent on at the
	// kill is sent again from the exporter's persistent queue or from
	// llm_eval's storage (at-least-once). Nothing else may come out twice.
	var dups, replayed, resent, dupGens int
	var widest time.Duration
	dupNumbers := map[int]bool{}
	for id, got := range out {
		if got.copies == 1 {
			continue
		}
		dups++
		before := killAt.Sub(kill.ackedAt[id])
		sentOnAtKill := got.arrived[0].After(killAt.Add(-time.Second)) && got.arrived[0].Before(killAt)
		switch {
		case before >= 0 && before <= kafkaDupWindow:
			replayed++
			widest = max(widest, before)
		case sentOnAtKill:
			resent++
		default:
			t.Errorf("span %s came out %d times: acknowledged %v and first sent on %v before the kill",
				id, got.copies, before, killAt.Sub(got.arrived[0]))
		}
		for _, rep := range got.replicas {
			assert.Equal(t, killed.index, rep, "span %s duplicated by a replica that was not killed", id)
		}
		assert.LessOrEqual(t, got.copies, 3, "span %s came out %d times", id, got.copies)
		if n, ok := kill.gens[id]; ok {
			dupGens++
			dupNumbers[n] = true
		}
	}
	secondCalls, inFlight := duplicateCalls(t, r.calls.all(), killed.name, dupNumbers, killAt, restarted)
	assert.Zero(t, secondCalls, "duplicated generations cost a second judge call")
	t.Logf("phase 3 (kill -9 of %s mid-stream, healthy again %v later): spans in %d, out %d, lost %d; duplicated %d (%d generations): %d delivered again (acknowledged at most %v before the kill, bound %v), %d sent again (being sent on at the kill); judge calls repeated for duplicates: %d; calls lost in flight at the kill and made again: %d",
		killed.name, restarted.Sub(killAt).Round(10*time.Millisecond), len(kill.spans), len(out), lost, dups, dupGens,
		replayed, widest.Round(10*time.Millisecond), kafkaDupWindow, resent, secondCalls, inFlight)
}

// send posts td to tier 1 and records it as acknowledged.
func (r *kafkaRig) send(s *sent, td ptrace.Traces) {
	r.t.Helper()
	require.NoError(r.t, postTraces(r.tier1OTLP, td), "tier 1 refused a request")
	s.record(td)
}

// waitOut waits until every span of s has come out.
func (r *kafkaRig) waitOut(s *sent, limit time.Duration) {
	r.t.Helper()
	if assert.Eventually(r.t, func() bool { return r.sink.missing(s.spans) == 0 }, limit, 250*time.Millisecond,
		"acknowledged spans did not all come out") {
		return
	}
	out := r.sink.snapshot(s.spans)
	var missing []string
	for id := range s.spans {
		if _, ok := out[id]; !ok {
			missing = append(missing, fmt.Sprintf("%s (acknowledged %s)", id, s.ackedAt[id].Format("15:04:05.000")))
		}
	}
	sort.Strings(missing)
	r.t.Fatalf("%d spans missing: %s", len(missing), strings.Join(missing[:min(len(missing), 30)], ", "))
}

// closed is the replica's partition_close count.
func (rep *kafkaReplica) closed(t *testing.T) int {
	return int(metricSum(scrape(t, rep.telemetry), "otelcol_kafka_receiver_partition_close"))
}

// splitTraces are the traces whose spans came out of more than one replica.
func splitTraces(out map[string]sunkSpan) []string {
	replicas := map[string]map[int]bool{}
	for _, sp := range out {
		if replicas[sp.trace] == nil {
			replicas[sp.trace] = map[int]bool{}
		}
		for _, r := range sp.replicas {
			replicas[sp.trace][r] = true
		}
	}
	var split []string
	for tr, rs := range replicas {
		if len(rs) > 1 {
			split = append(split, tr)
		}
	}
	sort.Strings(split)
	return split
}

func assertOnce(t *testing.T, phase string, out map[string]sunkSpan) {
	t.Helper()
	for id, sp := range out {
		assert.Equal(t, 1, sp.copies, "%s: span %s came out %d times (replicas %v)", phase, id, sp.copies, sp.replicas)
	}
}

type callKey struct {
	gen          int
	scorer, step string
}

// evaluatedOnce checks that each generation of gens was judged by one
// replica, once per scorer step, with every scorer.
func evaluatedOnce(t *testing.T, calls []kafkaJudgeCall, gens map[string]int) {
	t.Helper()
	want := map[int]bool{}
	for _, n := range gens {
		want[n] = true
	}
	perStep := map[callKey]int{}
	replicas := map[int]map[string]bool{}
	scorers := map[int]map[string]bool{}
	for _, c := range calls {
		if !want[c.gen] {
			continue
		}
		perStep[callKey{c.gen, c.scorer, c.step}]++
		if replicas[c.gen] == nil {
			replicas[c.gen], scorers[c.gen] = map[string]bool{}, map[string]bool{}
		}
		replicas[c.gen][c.replica] = true
		scorers[c.gen][c.scorer] = true
	}
	for k, n := range perStep {
		assert.Equal(t, 1, n, "generation %d, %s step %q: %d judge calls", k.gen, k.scorer, k.step, n)
	}
	for n := range want {
		assert.Len(t, replicas[n], 1, "generation %d judged by replicas %v", n, replicas[n])
		assert.Len(t, scorers[n], len(kafkaScorers), "generation %d judged by scorers %v", n, scorers[n])
	}
}

// duplicateCalls looks at the judge calls for the duplicated generations
// of the killed replica: after its restart each scorer step may be called
// once for both copies (second counts those called more often), and
// calls made again after the restart for a step called before the kill
// (inFlight) are the work a kill loses, duplicated or not.
func duplicateCalls(t *testing.T, calls []kafkaJudgeCall, replica string, dupGens map[int]bool, killAt, restarted time.Time) (second, inFlight int) {
	t.Helper()
	before, after := map[callKey]int{}, map[callKey]int{}
	for _, c := range calls {
		if c.replica != replica || !dupGens[c.gen] {
			continue
		}
		k := callKey{c.gen, c.scorer, c.step}
		switch {
		case c.at.Before(killAt):
			before[k]++
		case !c.at.Before(restarted):
			after[k]++
		}
	}
	for k, n := range after {
		if n > 1 {
			second += n - 1
			t.Errorf("generation %d (duplicated), %s step %q: judged %d times after the restart", k.gen, k.scorer, k.step, n)
		}
		if before[k] > 0 {
			inFlight++
		}
	}
	return second, inFlight
}
