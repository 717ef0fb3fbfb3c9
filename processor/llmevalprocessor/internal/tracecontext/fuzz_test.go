package tracecontext

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/scoring"
)

// FuzzIndex drives the index with arbitrary sequences of adds, links,
// clock steps and queries over a small id space, so parent cycles, self
// parents, missing parents, duplicates and evictions all occur. It checks
// the index never panics, stays within its bounds and accounts its bytes
// exactly.
func FuzzIndex(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 1, 2, 1, 0, 3, 3, 2, 9})
	f.Add([]byte{1, 1, 1, 1, 1, 2, 2, 2, 1, 3, 3, 3, 0, 4, 5, 200, 4, 0, 0, 0})
	f.Add([]byte(strings.Repeat("\x00\x05\x06\xff", 40)))
	f.Fuzz(func(t *testing.T, ops []byte) {
		c := &clock{now: time.Unix(1_766_400_000, 0)}
		ix, err := New(Config{
			MaxTraces: 3, MaxBytes: 4096, TTL: time.Minute,
			MaxDocumentBytes: 64, MaxTraceBytes: 2048, Now: c.Now,
		})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+3 < len(ops) && i < 4000; i += 4 {
			op, a, b, n := ops[i]%6, int(ops[i+1]%16), int(ops[i+2]%16), int(ops[i+3])
			tr := tid(byte(n % 5))
			switch op {
			case 0: // context span a under b with n bytes of text
				ix.Add(Span{TraceID: tr, SpanID: sid(a), ParentID: sid(b), Start: at(n % 7), End: at(n%7 + 1),
					Role: genai.RoleRetrieval, Texts: []string{strings.Repeat("é", n), string(rune('a' + a))}})
			case 1: // generation a under b
				ix.Add(Span{TraceID: tr, SpanID: sid(a), ParentID: sid(b), End: at(n % 9)})
			case 2: // plain link, maybe a root
				parent := sid(b)
				if b == 0 {
					parent = pcommon.SpanID{}
				}
				ix.Link(tr, sid(a), parent)
			case 3:
				c.now = c.now.Add(time.Duration(n) * time.Second)
				ix.Expire()
			default:
				for _, scope := range []Scope{ScopeSiblings, ScopeTrace, ScopeSubtree} {
					docs := ix.ContextFor(tr, sid(a), sid(b), at(n%9), scope)
					seen := map[string]bool{}
					for _, d := range docs {
						if seen[d] || len(d) > 64+len(scoring.TruncationMarker) {
							t.Fatalf("duplicate or oversized document %q", d)
						}
						seen[d] = true
					}
				}
			}
			checkInvariants(t, ix)
		}
	})
}

func checkInvariants(t *testing.T, ix *Index) {
	t.Helper()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if len(ix.traces) > ix.cfg.MaxTraces || ix.bytes > ix.cfg.MaxBytes {
		t.Fatalf("bounds exceeded: %d traces, %d bytes", len(ix.traces), ix.bytes)
	}
	var sum int64
	n := 0
	for tr := ix.head; tr != nil; tr = tr.next {
		if ix.traces[tr.id] != tr {
			t.Fatal("eviction list and map disagree")
		}
		if tr.bytes > ix.cfg.MaxTraceBytes {
			t.Fatalf("trace holds %d bytes", tr.bytes)
		}
		sum += tr.bytes
		n++
	}
	if n != len(ix.traces) || sum != ix.bytes {
		t.Fatalf("accounting: list %d traces %d bytes, map %d traces, index %d bytes", n, sum, len(ix.traces), ix.bytes)
	}
}
