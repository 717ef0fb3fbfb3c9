package conversation

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// BenchmarkOpenConversationMemory measures what an open conversation costs
// in memory: 1,000 conversations of a support chat (a 120-character
// question and a 400-character answer a turn, a 300-character system
// prompt on every turn, a resource of five attributes) are opened turn by
// turn, and the live heap they hold is divided by the conversations. It
// reports that (heapB/conversation) and what the Keeper counts against
// max_bytes (countedB/conversation), so the bound can be read in memory.
// BENCHMARKS.md has the figures.
func BenchmarkOpenConversationMemory(b *testing.B) {
	const conversations = 1000
	question, answer := strings.Repeat("q", 120), strings.Repeat("a", 400)
	system := []string{strings.Repeat("s", 300)}
	res := pcommon.NewResource()
	for i, k := range []string{"service.name", "service.version", "service.instance.id", "deployment.environment.name", "telemetry.sdk.name"} {
		res.Attributes().PutStr(k, fmt.Sprintf("value-%d-of-some-length", i))
	}
	for _, turns := range []int{1, 10, 25, 100} {
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			for range b.N {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.GC() // a stopped timer of the last round lets its Keeper go
				runtime.ReadMemStats(&before)
				k := New(Config{
					IdleTimeout: time.Hour, MaxTurns: 50, MaxConversationBytes: 128 << 10,
					MaxConversations: conversations, MaxBytes: 1 << 30,
				})
				start := time.Unix(1_700_000_000, 0)
				for c := range conversations {
					id := fmt.Sprintf("conversation-%d", c)
					for n := range turns {
						var tr pcommon.TraceID
						tr[0], tr[1], tr[2], tr[3] = byte(c>>8), byte(c), byte(n>>8), byte(n)
						at := start.Add(time.Duration(n) * time.Minute)
						k.Offer("support", id, tr, &Exchange{
							TraceID: tr, SpanID: pcommon.SpanID{1}, Start: at, End: at.Add(time.Second),
							Model: "gpt-4o-mini", Input: question + fmt.Sprint(n), Output: answer + fmt.Sprint(n),
							Instructions: system, Resource: res,
						})
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				st := k.Stats()
				if st.Open != conversations {
					b.Fatalf("%d conversations open, want %d", st.Open, conversations)
				}
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/conversations, "heapB/conversation")
				b.ReportMetric(float64(st.Bytes)/conversations, "countedB/conversation")
				k.Stop()
				runtime.KeepAlive(k)
			}
		})
	}
}
