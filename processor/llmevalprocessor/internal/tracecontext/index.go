package tracecontext

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/scoring"
)

// Estimated bookkeeping bytes counted against the limits next to the texts
// themselves, so a trace of many spans without context is bounded too.
const (
	traceOverhead  = 192 // trace struct, list links, map headers
	linkBytes      = 24  // one parent link (span id, parent id) in a trace's link list
	sourceOverhead = 112 // one context source record
	docOverhead    = 16  // one string header (an interned duplicate costs only this)
)

// maxDepth bounds every walk up the parent links: deeper chains are cut,
// and a cycle costs at most this many steps.
const maxDepth = 256

// Scope selects which context spans of a trace count for a query.
type Scope uint8

// Scopes.
const (
	// ScopeSiblings: spans under the generation's parent (its siblings and
	// their descendants), plus the direct retrieval/tool children of its
	// further ancestors that ended before the generation ended.
	ScopeSiblings Scope = iota
	// ScopeTrace: every context span of the trace.
	ScopeTrace
	// ScopeSubtree: every context span below the given span (agent targets).
	ScopeSubtree
)

// Config bounds an Index.
type Config struct {
	// MaxTraces is the most traces remembered.
	MaxTraces int
	// MaxBytes bounds the texts and bookkeeping of all traces.
	MaxBytes int64
	// TTL is how long a trace is kept after it was last added to.
	TTL time.Duration
	// MaxDocumentBytes cuts each document (on a rune boundary).
	MaxDocumentBytes int
	// MaxTraceBytes bounds one trace; what would exceed it is dropped.
	MaxTraceBytes int64
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Validate checks the bounds.
func (c Config) Validate() error {
	var errs []error
	if c.MaxTraces < 1 {
		errs = append(errs, fmt.Errorf("max traces must be at least 1, got %d", c.MaxTraces))
	}
	if c.MaxBytes < 1 {
		errs = append(errs, fmt.Errorf("max bytes must be positive, got %d", c.MaxBytes))
	}
	if c.TTL <= 0 {
		errs = append(errs, fmt.Errorf("ttl must be positive, got %s", c.TTL))
	}
	if c.MaxDocumentBytes < 1 {
		errs = append(errs, fmt.Errorf("max document bytes must be positive, got %d", c.MaxDocumentBytes))
	}
	if c.MaxTraceBytes < 1 || c.MaxTraceBytes > c.MaxBytes {
		errs = append(errs, fmt.Errorf("max trace bytes must be between 1 and max bytes (%d), got %d", c.MaxBytes, c.MaxTraceBytes))
	}
	return errors.Join(errs...)
}

// Span is what the index keeps of one span.
type Span struct {
	TraceID    pcommon.TraceID
	SpanID     pcommon.SpanID
	ParentID   pcommon.SpanID
	Start, End pcommon.Timestamp
	// Role is the context role; RoleNone for a generation or agent span.
	Role genai.ContextRole
	// Texts are its documents or tool results (genai.ReadContext).
	Texts []string
	// Step is the span as a step of an agent run (genai.ReadStep), or nil:
	// the processor reads steps only when a scorer judges trajectories.
	Step *genai.Step
}

// Stats are the index's size and cumulative counters.
type Stats struct {
	Traces int   // traces remembered now
	Bytes  int64 // bytes held now (texts plus bookkeeping estimate)

	EvictedTTL       uint64 // traces dropped because their TTL passed
	EvictedMaxTraces uint64 // traces dropped to stay within MaxTraces
	EvictedMaxBytes  uint64 // traces dropped to stay within MaxBytes

	DroppedDocuments   uint64 // documents not kept because their trace was full
	DroppedLinks       uint64 // parent links not kept because their trace was full
	TruncatedDocuments uint64 // documents cut to MaxDocumentBytes
	DroppedSteps       uint64 // step records not kept because their trace was full
	TruncatedStepTexts uint64 // texts of step records cut to MaxDocumentBytes
}

// link is the parent of one span. Links are appended on the hot path and
// only turned into a map when a query walks them.
type link struct {
	span, parent pcommon.SpanID
}

type source struct {
	span, parent pcommon.SpanID
	start, end   pcommon.Timestamp
	role         genai.ContextRole
	docs         []string
}

type trace struct {
	id         pcommon.TraceID
	touched    time.Time
	prev, next *trace // eviction order: least recently added-to first
	links      []link
	sources    []source
	sourceOf   map[pcommon.SpanID]struct{} // spans whose texts are kept
	interned   map[string]string           // one copy of each document and step text
	steps      []stepRecord                // in arrival order (steps.go)
	// droppedSteps counts the step records not kept because the trace
	// reached MaxTraceBytes.
	droppedSteps int
	bytes        int64
}

// Index is a bounded per-trace store of context texts, parent links and
// the step records of agent runs.
// The zero value is not usable; call New.
type Index struct {
	cfg Config

	mu         sync.Mutex
	traces     map[pcommon.TraceID]*trace
	head, tail *trace
	bytes      int64
	stats      Stats
}

// New returns an empty index with the given bounds.
func New(cfg Config) (*Index, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("trace context index: %w", err)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Index{cfg: cfg, traces: make(map[pcommon.TraceID]*trace)}, nil
}

// Add records a GenAI span: it makes its trace known, keeps its parent link,
// for a context span its texts and, with a Step, its step record. It
// reports whether the trace gained at least one document or step, the
// signal to re-check items of that trace waiting for context or for their
// trajectory. Adding the same context span again changes nothing; another
// span added again only repeats its link and step, which queries read once.
func (ix *Index) Add(s Span) (gained bool) {
	if s.TraceID.IsEmpty() || s.SpanID.IsEmpty() {
		return false
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	now := ix.cfg.Now()
	ix.expire(now)
	t := ix.traces[s.TraceID]
	if t == nil {
		t = ix.newTrace(s.TraceID)
	}
	t.touched = now
	ix.moveToTail(t)
	if _, dup := t.sourceOf[s.SpanID]; dup {
		return false // a duplicate delivery of a context span
	}
	ix.link(t, s.SpanID, s.ParentID)
	if len(s.Texts) > 0 {
		gained = ix.addSource(t, s)
	}
	if s.Step != nil && ix.addStep(t, s) {
		gained = true
	}
	ix.makeRoom(t)
	return gained
}

// addSource keeps the texts of a context span, each cut to
// MaxDocumentBytes (marked with scoring.TruncationMarker), de-duplicated
// within the span and interned per trace.
func (ix *Index) addSource(t *trace, s Span) bool {
	if !ix.grow(t, sourceOverhead) {
		ix.stats.DroppedDocuments += uint64(len(s.Texts))
		return false
	}
	src := source{span: s.SpanID, parent: s.ParentID, start: s.Start, end: s.End, role: s.Role}
	for _, text := range s.Texts {
		if strings.TrimSpace(text) == "" {
			continue
		}
		// Only this cut may end a document with the marker: the scorers
		// take a trailing marker on a context item as a cut made before
		// them, and mark their result truncated.
		text = scoring.NeutralizeTruncationMarkers(text)
		if len(text) > ix.cfg.MaxDocumentBytes {
			text = cutRunes(text, ix.cfg.MaxDocumentBytes) + scoring.TruncationMarker
			ix.stats.TruncatedDocuments++
		}
		if slices.Contains(src.docs, text) {
			continue
		}
		if kept, ok := t.interned[text]; ok {
			if !ix.grow(t, docOverhead) {
				ix.stats.DroppedDocuments++
				continue
			}
			src.docs = append(src.docs, kept)
			continue
		}
		if !ix.grow(t, docOverhead+int64(len(text))) {
			ix.stats.DroppedDocuments++
			continue
		}
		// Copy, so the index never pins the batch's (or a larger) string.
		text = strings.Clone(text)
		if t.interned == nil {
			t.interned = make(map[string]string)
		}
		t.interned[text] = text
		src.docs = append(src.docs, text)
	}
	if len(src.docs) == 0 {
		ix.release(t, sourceOverhead)
		return false
	}
	if t.sourceOf == nil {
		t.sourceOf = make(map[pcommon.SpanID]struct{})
	}
	t.sourceOf[s.SpanID] = struct{}{}
	t.sources = append(t.sources, src)
	return true
}

// Link records the parent link of a span of a known trace; spans of other
// traces are ignored. It reports whether the trace is known.
func (ix *Index) Link(traceID pcommon.TraceID, spanID, parentID pcommon.SpanID) bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	t := ix.traces[traceID]
	if t == nil {
		return false
	}
	ix.link(t, spanID, parentID)
	return true
}

// LinkAll records the parent links of every span of td whose trace is
// known, under one lock, and returns those traces, each once. Call it for
// every batch, after the batch's GenAI spans were added so their traces
// are known: a chain of plain spans (a LangChain RunnableMap between a
// retriever and the chain holding the LLM call) is what connects a
// generation to its context, and such spans often come in batches of
// their own. It costs one map lookup per span of the batch.
func (ix *Index) LinkAll(td ptrace.Traces) []pcommon.TraceID {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if len(ix.traces) == 0 {
		return nil
	}
	var linked []pcommon.TraceID
	var lastID pcommon.TraceID
	var last *trace
	looked := false
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				// Spans of one trace usually come together: look a trace up once.
				if id := span.TraceID(); !looked || id != lastID {
					lastID, last, looked = id, ix.traces[id], true
					if last != nil && !slices.Contains(linked, id) {
						linked = append(linked, id)
					}
				}
				if last != nil {
					ix.link(last, span.SpanID(), span.ParentSpanID())
				}
			}
		}
	}
	return linked
}

// link appends a parent link; a span delivered twice is linked twice,
// which queries read as one.
func (ix *Index) link(t *trace, spanID, parentID pcommon.SpanID) {
	if spanID.IsEmpty() {
		return
	}
	if !ix.grow(t, linkBytes) {
		ix.stats.DroppedLinks++
		return
	}
	t.links = append(t.links, link{span: spanID, parent: parentID})
	ix.makeRoom(t)
}

// ContextFor returns the de-duplicated documents of the context spans of a
// trace that count for the span spanID (child of parentID, ended at end)
// under scope, ordered by the start time of their spans. It returns nil for
// an unknown trace.
func (ix *Index) ContextFor(traceID pcommon.TraceID, spanID, parentID pcommon.SpanID, end pcommon.Timestamp, scope Scope) []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	t := ix.traces[traceID]
	if t == nil || len(t.sources) == 0 {
		return nil
	}
	parents := make(map[pcommon.SpanID]pcommon.SpanID, len(t.links))
	for _, l := range t.links {
		parents[l.span] = l.parent
	}
	var picked []*source
	switch scope {
	case ScopeTrace:
		for i := range t.sources {
			picked = append(picked, &t.sources[i])
		}
	case ScopeSubtree:
		for i := range t.sources {
			if s := &t.sources[i]; s.span != spanID && below(parents, s.parent, spanID) {
				picked = append(picked, s)
			}
		}
	default:
		anchor := parentID
		if anchor.IsEmpty() {
			anchor = spanID // a root generation: what runs below it
		}
		ancestors := ancestors(parents, anchor)
		for i := range t.sources {
			s := &t.sources[i]
			if s.span == spanID || s.span == anchor || slices.Contains(ancestors, s.span) {
				continue // a span's own result is not context for what runs inside it
			}
			if below(parents, s.parent, anchor) ||
				(slices.Contains(ancestors, s.parent) && (end == 0 || s.end <= end)) {
				picked = append(picked, s)
			}
		}
	}
	sortByStart(picked, func(s *source) pcommon.Timestamp { return s.start })
	var out []string
	seen := make(map[string]struct{})
	for _, s := range picked {
		for _, d := range s.docs {
			if _, dup := seen[d]; !dup {
				seen[d] = struct{}{}
				out = append(out, d)
			}
		}
	}
	return out
}

// HasContext reports whether the index holds any document of the trace.
func (ix *Index) HasContext(traceID pcommon.TraceID) bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	t := ix.traces[traceID]
	return t != nil && len(t.sources) > 0
}

// Stats returns the current size and the counters since New.
func (ix *Index) Stats() Stats {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	st := ix.stats
	st.Traces = len(ix.traces)
	st.Bytes = ix.bytes
	return st
}

// Expire drops the traces whose TTL has passed; Add does it too, so a
// processor only needs it when adds are rare.
func (ix *Index) Expire() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.expire(ix.cfg.Now())
}

// below reports whether walking up from span reaches anchor (span itself
// included), within maxDepth steps.
func below(parents map[pcommon.SpanID]pcommon.SpanID, span, anchor pcommon.SpanID) bool {
	for range maxDepth {
		if span == anchor {
			return true
		}
		p, ok := parents[span]
		if !ok || p.IsEmpty() {
			return false
		}
		span = p
	}
	return false
}

// ancestors lists the strict ancestors of span, nearest first, stopping at
// an unknown parent, a repeat (cycle) or maxDepth.
func ancestors(parents map[pcommon.SpanID]pcommon.SpanID, span pcommon.SpanID) []pcommon.SpanID {
	var out []pcommon.SpanID
	for range maxDepth {
		p, ok := parents[span]
		if !ok || p.IsEmpty() || p == span || slices.Contains(out, p) {
			break
		}
		span = p
		out = append(out, span)
	}
	return out
}

func (ix *Index) newTrace(id pcommon.TraceID) *trace {
	for len(ix.traces) >= ix.cfg.MaxTraces && ix.head != nil {
		ix.evict(ix.head)
		ix.stats.EvictedMaxTraces++
	}
	t := &trace{id: id, bytes: traceOverhead}
	ix.traces[id] = t
	ix.bytes += traceOverhead
	ix.pushTail(t)
	return t
}

// grow accounts n more bytes to t, or reports false when t would exceed
// MaxTraceBytes.
func (ix *Index) grow(t *trace, n int64) bool {
	if t.bytes+n > ix.cfg.MaxTraceBytes {
		return false
	}
	t.bytes += n
	ix.bytes += n
	return true
}

func (ix *Index) release(t *trace, n int64) {
	t.bytes -= n
	ix.bytes -= n
}

// makeRoom evicts the least recently added-to traces, other than keep,
// until the index is within MaxBytes.
func (ix *Index) makeRoom(keep *trace) {
	for ix.bytes > ix.cfg.MaxBytes {
		victim := ix.head
		if victim == keep {
			victim = keep.next
		}
		if victim == nil {
			return
		}
		ix.evict(victim)
		ix.stats.EvictedMaxBytes++
	}
}

func (ix *Index) expire(now time.Time) {
	for ix.head != nil && now.Sub(ix.head.touched) > ix.cfg.TTL {
		ix.evict(ix.head)
		ix.stats.EvictedTTL++
	}
}

func (ix *Index) evict(t *trace) {
	ix.unlink(t)
	delete(ix.traces, t.id)
	ix.bytes -= t.bytes
}

func (ix *Index) pushTail(t *trace) {
	t.prev, t.next = ix.tail, nil
	if ix.tail != nil {
		ix.tail.next = t
	} else {
		ix.head = t
	}
	ix.tail = t
}

func (ix *Index) unlink(t *trace) {
	if t.prev != nil {
		t.prev.next = t.next
	} else {
		ix.head = t.next
	}
	if t.next != nil {
		t.next.prev = t.prev
	} else {
		ix.tail = t.prev
	}
	t.prev, t.next = nil, nil
}

func (ix *Index) moveToTail(t *trace) {
	if ix.tail == t {
		return
	}
	ix.unlink(t)
	ix.pushTail(t)
}

// sortByStart orders items by their start time, keeping the order of
// equal ones (arrival order).
func sortByStart[T any](items []T, start func(T) pcommon.Timestamp) {
	slices.SortStableFunc(items, func(a, b T) int { return cmp.Compare(start(a), start(b)) })
}

// cutRunes cuts s to at most n bytes on a rune boundary.
func cutRunes(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
