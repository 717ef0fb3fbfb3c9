//go:build e2e && kafka

package e2e

import (
	"fmt"
	"testing"
	"time"
)

// The scaling run: the Kafka recipe with 1, 2 and 3 replicas against one
// fake judge of fixed latency, each replica with the same fixed number of
// judge workers, so that a replica's throughput is bounded by its workers
// and not by the machine. It reports evaluations per second and their
// ratio to linear (the rate of n replicas over n times the rate of one).
//
//	make bench-kafka
const (
	scalingJudgeWait   = 200 * time.Millisecond
	scalingConcurrency = 4
	scalingGenerations = 240 // per iteration, each its own trace
)

func BenchmarkKafkaScaling(b *testing.B) {
	var single float64 // evaluations/s of one replica
	for _, n := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			r := newKafkaRig(b, kafkaPartitions, n)
			r.overlay = replicaOverlay(scalingConcurrency)
			r.judge.SetLatency(scalingJudgeWait)
			r.startBroker()
			r.startTier1()
			for _, rep := range r.replicas {
				r.start(rep)
			}
			r.waitAssigned(r.replicas, true)

			var evaluations int
			var elapsed time.Duration
			b.ResetTimer()
			for i := range b.N {
				s := newSent()
				start := time.Now()
				first := 10000 + i*scalingGenerations
				for k := 0; k < scalingGenerations; k += 20 {
					r.send(s, traceParts(first+k, 20, false, true))
				}
				r.waitOut(s, 5*time.Minute)
				elapsed += time.Since(start)
				out := r.sink.snapshot(s.spans)
				for id, gen := range s.gens {
					for _, sc := range kafkaScorers {
						if l := out[id].labels[sc]; l == "" || l == "error" {
							b.Fatalf("generation %d: %s result %q (the run must evaluate everything)", gen, sc, l)
						}
					}
				}
				evaluations += len(s.gens) * len(kafkaScorers)
				perReplica := make([]int, n)
				for id := range s.gens {
					perReplica[out[id].replicas[0]]++
				}
				busiest := 0
				for _, c := range perReplica {
					busiest = max(busiest, c)
				}
				// The run ends when the busiest replica is done: its share
				// over an even one bounds the ratio to linear.
				b.Logf("generations per replica: %v; an even share over the busiest: %.2f",
					perReplica, float64(scalingGenerations)/float64(n)/float64(busiest))
			}
			b.StopTimer()
			rate := float64(evaluations) / elapsed.Seconds()
			b.ReportMetric(rate, "evals/s")
			if n == 1 {
				single = rate
			}
			if single > 0 {
				b.ReportMetric(rate/(float64(n)*single), "ratio_to_linear")
			}
		})
	}
}
