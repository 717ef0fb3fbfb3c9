package tracecontext

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/scoring"
)

// clock is a settable clock for TTL tests.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func testConfig(c *clock) Config {
	return Config{
		MaxTraces: 100, MaxBytes: 1 << 20, TTL: time.Minute,
		MaxDocumentBytes: 1 << 10, MaxTraceBytes: 1 << 18, Now: c.Now,
	}
}

func newIndex(t *testing.T, mutate func(*Config)) (*Index, *clock) {
	t.Helper()
	c := &clock{now: time.Unix(1_766_400_000, 0)}
	cfg := testConfig(c)
	if mutate != nil {
		mutate(&cfg)
	}
	ix, err := New(cfg)
	require.NoError(t, err)
	return ix, c
}

func tid(n byte) pcommon.TraceID {
	return pcommon.TraceID{n, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
}
func sid(n int) pcommon.SpanID {
	return pcommon.SpanID{0xA, byte(n >> 16), byte(n >> 8), byte(n), 1, 1, 1, 1}
}

// at is a timestamp n seconds into the test trace.
func at(n int) pcommon.Timestamp {
	return pcommon.Timestamp(1_766_400_000_000_000_000 + int64(n)*1_000_000_000)
}

func ctxSpan(trace pcommon.TraceID, span, parent int, start, end int, role genai.ContextRole, texts ...string) Span {
	s := Span{TraceID: trace, SpanID: sid(span), Start: at(start), End: at(end), Role: role, Texts: texts}
	if parent >= 0 {
		s.ParentID = sid(parent)
	}
	return s
}

func genSpan(trace pcommon.TraceID, span, parent int, start, end int) Span {
	return ctxSpan(trace, span, parent, start, end, genai.RoleNone)
}

// Span ids of the test traces.
const (
	root      = 1 // CHAIN or invoke_agent
	retriever = 2 // RETRIEVER or retrieval child of root
	llm       = 3 // LLM or chat
	tool      = 4 // execute_tool child of root
	step      = 5 // plain span between root and the chat span
	far       = 6 // another branch
	farRetr   = 7 // retrieval under far
	late      = 8 // retrieval child of root that ends after the chat span
	nested    = 9 // retrieval under a sibling of the chat span
)

func TestOpenInferenceShapeBothOrders(t *testing.T) {
	tr := tid(1)
	for _, contextFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("context_first=%v", contextFirst), func(t *testing.T) {
			ix, _ := newIndex(t, nil)
			retr := ctxSpan(tr, retriever, root, 0, 1, genai.RoleRetrieval, "Refunds take 5 days.", "Shipping is free.")
			gen := genSpan(tr, llm, root, 1, 3)
			if contextFirst {
				assert.True(t, ix.Add(retr), "first documents of the trace")
				assert.False(t, ix.Add(gen))
			} else {
				assert.False(t, ix.Add(gen))
				assert.Empty(t, ix.ContextFor(tr, sid(llm), sid(root), at(3), ScopeSiblings))
				assert.True(t, ix.Add(retr), "context arriving after the generation")
			}
			assert.Equal(t, []string{"Refunds take 5 days.", "Shipping is free."},
				ix.ContextFor(tr, sid(llm), sid(root), at(3), ScopeSiblings))
			assert.True(t, ix.HasContext(tr))
		})
	}
}

// agentTrace is invoke_agent(root) -> {retrieval, execute_tool, late
// retrieval, step -> {chat, plain -> nested retrieval}, far -> far retrieval}.
func agentTrace(t *testing.T, ix *Index, tr pcommon.TraceID) {
	t.Helper()
	ix.Add(genSpan(tr, llm, step, 3, 5))
	ix.Add(ctxSpan(tr, retriever, root, 0, 1, genai.RoleRetrieval, "doc A"))
	ix.Add(ctxSpan(tr, tool, root, 1, 2, genai.RoleTool, `{"sky":"rainy"}`))
	ix.Add(ctxSpan(tr, late, root, 6, 7, genai.RoleRetrieval, "doc late"))
	ix.Add(ctxSpan(tr, nested, 10, 2, 3, genai.RoleRetrieval, "doc nested"))
	ix.Add(ctxSpan(tr, farRetr, far, 0, 1, genai.RoleRetrieval, "doc far"))
	ix.Add(genSpan(tr, root, -1, 0, 9))
	// Plain spans arrive in the batch and are linked.
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for _, l := range [][2]int{{10, step}, {step, root}, {far, 20}, {20, root}} {
		s := spans.AppendEmpty()
		s.SetTraceID(tr)
		s.SetSpanID(sid(l[0]))
		s.SetParentSpanID(sid(l[1]))
	}
	ix.LinkAll(td)
}

func TestContextForScopes(t *testing.T) {
	tr := tid(2)
	ix, _ := newIndex(t, nil)
	agentTrace(t, ix, tr)
	tests := []struct {
		name   string
		span   int
		parent int
		end    int
		scope  Scope
		want   []string
	}{
		{"siblings: ancestors' earlier children and the sibling's descendants", llm, step, 5, ScopeSiblings,
			[]string{"doc A", `{"sky":"rainy"}`, "doc nested"}},
		{"siblings without an end time take every ancestor child", llm, step, -1, ScopeSiblings,
			[]string{"doc A", `{"sky":"rainy"}`, "doc nested", "doc late"}},
		{"whole trace", llm, step, 5, ScopeTrace,
			[]string{"doc A", "doc far", `{"sky":"rainy"}`, "doc nested", "doc late"}},
		{"agent subtree", root, 0, 9, ScopeSubtree,
			[]string{"doc A", "doc far", `{"sky":"rainy"}`, "doc nested", "doc late"}},
		{"subtree of a branch", far, 20, 9, ScopeSubtree, []string{"doc far"}},
		{"a root span takes what runs below it", root, -1, 9, ScopeSiblings,
			[]string{"doc A", "doc far", `{"sky":"rainy"}`, "doc nested", "doc late"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var parent pcommon.SpanID
			if tt.parent >= 0 {
				parent = sid(tt.parent)
			}
			end := pcommon.Timestamp(0)
			if tt.end >= 0 {
				end = at(tt.end)
			}
			assert.Equal(t, tt.want, ix.ContextFor(tr, sid(tt.span), parent, end, tt.scope))
		})
	}
	assert.Nil(t, ix.ContextFor(tid(99), sid(llm), sid(step), at(5), ScopeTrace), "unknown trace")
}

func TestContextForDeduplicatesAcrossSpans(t *testing.T) {
	tr := tid(3)
	ix, _ := newIndex(t, nil)
	ix.Add(genSpan(tr, llm, root, 5, 6))
	ix.Add(ctxSpan(tr, 11, root, 2, 3, genai.RoleRetrieval, "b", "a"))
	ix.Add(ctxSpan(tr, 12, root, 1, 2, genai.RoleRetrieval, "a", "c", "a"))
	assert.Equal(t, []string{"a", "c", "b"}, ix.ContextFor(tr, sid(llm), sid(root), at(6), ScopeSiblings),
		"ordered by span start, each document once")
	st := ix.Stats()
	// "a" is stored once; its second use costs only a string header.
	wantBytes := int64(traceOverhead + 3*linkBytes + 2*sourceOverhead + 4*docOverhead + 3)
	assert.Equal(t, wantBytes, st.Bytes)
}

func TestDuplicateDeliveryChangesNothing(t *testing.T) {
	tr := tid(4)
	ix, _ := newIndex(t, nil)
	s := ctxSpan(tr, retriever, root, 0, 1, genai.RoleRetrieval, "doc")
	require.True(t, ix.Add(s))
	before := ix.Stats()
	assert.False(t, ix.Add(s))
	assert.Equal(t, before, ix.Stats())
}

func TestParentCyclesAndMissingParents(t *testing.T) {
	tr := tid(5)
	ix, _ := newIndex(t, nil)
	// 30 -> 31 -> 32 -> 30: a cycle; the generation hangs under it.
	ix.Add(genSpan(tr, llm, 30, 5, 6))
	ix.Link(tr, sid(30), sid(31))
	ix.Link(tr, sid(31), sid(32))
	ix.Link(tr, sid(32), sid(30))
	ix.Add(ctxSpan(tr, 40, 31, 0, 1, genai.RoleTool, "in cycle"))
	ix.Add(ctxSpan(tr, 41, 77, 0, 1, genai.RoleTool, "parent never arrives"))
	ix.Add(ctxSpan(tr, 42, 42, 0, 1, genai.RoleTool, "own parent"))
	got := ix.ContextFor(tr, sid(llm), sid(30), at(6), ScopeSiblings)
	assert.Equal(t, []string{"in cycle"}, got, "an ancestor's child, found without looping")
	assert.Len(t, ix.ContextFor(tr, sid(llm), sid(30), at(6), ScopeTrace), 3)
	assert.Equal(t, []string{"in cycle"}, ix.ContextFor(tr, sid(30), sid(32), at(6), ScopeSubtree))
}

func TestLinkOnlyForKnownTraces(t *testing.T) {
	ix, _ := newIndex(t, nil)
	assert.False(t, ix.Link(tid(6), sid(1), sid(2)))
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i := range 50 {
		s := spans.AppendEmpty()
		s.SetTraceID(tid(6))
		s.SetSpanID(sid(100 + i))
	}
	assert.Empty(t, ix.LinkAll(td), "no known trace linked")
	assert.Equal(t, Stats{}, ix.Stats(), "a trace without GenAI spans costs nothing")
	ix.Add(genSpan(tid(6), llm, root, 0, 1))
	// A second trace, known too, interleaved with the first.
	ix.Add(genSpan(tid(7), llm, root, 0, 1))
	s := spans.AppendEmpty()
	s.SetTraceID(tid(7))
	s.SetSpanID(sid(300))
	s = spans.AppendEmpty()
	s.SetTraceID(tid(6))
	s.SetSpanID(sid(301))
	assert.Equal(t, []pcommon.TraceID{tid(6), tid(7)}, ix.LinkAll(td), "each linked trace once")
	assert.Equal(t, int64(2*traceOverhead+(1+51)*linkBytes+(1+1)*linkBytes), ix.Stats().Bytes)
}

func TestEvictionByMaxTraces(t *testing.T) {
	ix, _ := newIndex(t, func(c *Config) { c.MaxTraces = 3 })
	for i := range 5 {
		ix.Add(ctxSpan(tid(byte(i)), retriever, root, 0, 1, genai.RoleRetrieval, "doc"))
	}
	st := ix.Stats()
	assert.Equal(t, 3, st.Traces)
	assert.Equal(t, uint64(2), st.EvictedMaxTraces)
	assert.False(t, ix.HasContext(tid(0)), "oldest evicted first")
	assert.False(t, ix.HasContext(tid(1)))
	assert.True(t, ix.HasContext(tid(4)))
}

func TestEvictionLeastRecentlyAddedFirst(t *testing.T) {
	ix, _ := newIndex(t, func(c *Config) { c.MaxTraces = 2 })
	ix.Add(genSpan(tid(0), llm, root, 0, 1))
	ix.Add(genSpan(tid(1), llm, root, 0, 1))
	ix.Add(ctxSpan(tid(0), retriever, root, 0, 1, genai.RoleRetrieval, "still active"))
	ix.Add(genSpan(tid(2), llm, root, 0, 1))
	assert.True(t, ix.HasContext(tid(0)), "a trace added to recently survives")
}

func TestEvictionByTTL(t *testing.T) {
	ix, c := newIndex(t, nil)
	ix.Add(ctxSpan(tid(0), retriever, root, 0, 1, genai.RoleRetrieval, "old"))
	c.now = c.now.Add(30 * time.Second)
	ix.Add(ctxSpan(tid(1), retriever, root, 0, 1, genai.RoleRetrieval, "newer"))
	c.now = c.now.Add(31 * time.Second)
	ix.Expire()
	st := ix.Stats()
	assert.Equal(t, uint64(1), st.EvictedTTL)
	assert.Equal(t, 1, st.Traces)
	assert.True(t, ix.HasContext(tid(1)))
	c.now = c.now.Add(time.Hour)
	ix.Add(genSpan(tid(2), llm, root, 0, 1))
	st = ix.Stats()
	assert.Equal(t, uint64(2), st.EvictedTTL)
	assert.Equal(t, int64(traceOverhead+linkBytes), st.Bytes, "bytes return to what is held")
}

func TestEvictionByMaxBytes(t *testing.T) {
	ix, _ := newIndex(t, func(c *Config) { c.MaxBytes = 4000; c.MaxTraceBytes = 2000 })
	doc := strings.Repeat("x", 1000)
	for i := range 6 {
		ix.Add(ctxSpan(tid(byte(i)), retriever, root, 0, 1, genai.RoleRetrieval, doc+fmt.Sprint(i)))
	}
	st := ix.Stats()
	assert.LessOrEqual(t, st.Bytes, int64(4000))
	assert.Positive(t, st.EvictedMaxBytes)
	assert.True(t, ix.HasContext(tid(5)), "the newest trace is kept")
}

func TestThousandsOfRetrievalSpansAndHugeDocuments(t *testing.T) {
	ix, _ := newIndex(t, func(c *Config) { c.MaxDocumentBytes = 100; c.MaxTraceBytes = 64 << 10 })
	tr := tid(7)
	ix.Add(genSpan(tr, llm, root, 0, 9))
	huge := strings.Repeat("é", 10_000) // 2-byte runes: a cut must not split one
	for i := range 5000 {
		ix.Add(ctxSpan(tr, 1000+i, root, 0, 1, genai.RoleRetrieval, fmt.Sprintf("doc %d ", i)+huge))
	}
	st := ix.Stats()
	assert.LessOrEqual(t, st.Bytes, int64(64<<10))
	assert.Positive(t, st.DroppedDocuments)
	assert.Positive(t, st.TruncatedDocuments)
	docs := ix.ContextFor(tr, sid(llm), sid(root), at(9), ScopeSiblings)
	require.NotEmpty(t, docs)
	for _, d := range docs {
		assert.LessOrEqual(t, len(d), 100+len(scoring.TruncationMarker), "cut to MaxDocumentBytes, then marked")
		assert.True(t, utf8.ValidString(d))
	}
}

func TestConfigValidate(t *testing.T) {
	c := &clock{}
	good := testConfig(c)
	require.NoError(t, good.Validate())
	bad := good
	bad.MaxTraces, bad.MaxBytes, bad.TTL, bad.MaxDocumentBytes, bad.MaxTraceBytes = 0, 0, 0, 0, 10
	err := bad.Validate()
	require.Error(t, err)
	for _, want := range []string{"max traces", "max bytes", "ttl", "max document bytes", "max trace bytes"} {
		assert.Contains(t, err.Error(), want)
	}
	_, err = New(bad)
	require.ErrorContains(t, err, "trace context index")
}

func TestConcurrentUse(t *testing.T) {
	ix, _ := newIndex(t, func(c *Config) { c.MaxTraces = 20; c.MaxBytes = 1 << 16; c.MaxTraceBytes = 1 << 14 })
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			td := ptrace.NewTraces()
			spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
			for i := range 500 {
				tr := tid(byte(i % 40))
				ix.Add(ctxSpan(tr, w*1000+i, root, 0, 1, genai.RoleTool, fmt.Sprint("doc ", i)))
				s := spans.AppendEmpty()
				s.SetTraceID(tr)
				s.SetSpanID(sid(50_000 + w*1000 + i))
				s.SetParentSpanID(sid(root))
				if i%50 == 0 {
					ix.LinkAll(td)
					_ = ix.ContextFor(tr, sid(llm), sid(root), at(2), ScopeSiblings)
					_ = ix.Stats()
				}
			}
		}()
	}
	wg.Wait()
	st := ix.Stats()
	assert.LessOrEqual(t, st.Traces, 20)
	assert.LessOrEqual(t, st.Bytes, int64(1<<16))
}

// TestDocumentCutCarriesTheMarker checks a document cut to
// MaxDocumentBytes ends with llm_eval's truncation marker, so the scorer
// that reads it knows it was cut and marks its result truncated, and that
// a marker a document wrote itself is stored neutralised, so that only
// this index's cut ends a document with it (issue 36 item 1).
func TestDocumentCutCarriesTheMarker(t *testing.T) {
	ix, _ := newIndex(t, func(c *Config) { c.MaxDocumentBytes = 100 })
	tr := tid(31)
	ix.Add(genSpan(tr, llm, root, 0, 9))
	ix.Add(ctxSpan(tr, retriever, root, 0, 1, genai.RoleRetrieval, strings.Repeat("é", 500)))
	ix.Add(ctxSpan(tr, tool, root, 0, 1, genai.RoleRetrieval, "short doc"+scoring.TruncationMarker))
	docs := ix.ContextFor(tr, sid(llm), sid(root), at(9), ScopeSiblings)
	require.Len(t, docs, 2)
	assert.True(t, strings.HasSuffix(docs[0], scoring.TruncationMarker), "a cut document ends with the marker: %q", docs[0])
	assert.LessOrEqual(t, len(docs[0]), 100+len(scoring.TruncationMarker))
	assert.True(t, utf8.ValidString(docs[0]))
	assert.Equal(t, "short doc [...]", docs[1], "a document's own marker is neutralised")
}
