// Package logjoin holds the GenAI log events of LLM calls whose events are
// still arriving, and hands each call's events back as one group.
//
// Instrumentations of semantic conventions ≤ 1.36 send one log record per
// input message before the model is called and one gen_ai.choice per answer
// after it returns, all with the trace and span id of the call. The records
// of one call may therefore come in different batches, seconds apart. The
// Joiner groups them by trace and span id until a gen_ai.choice arrives or a
// window passes. The gen_ai.client.inference.operation.details record of
// semantic conventions ≥ 1.37 holds a whole call and leaves at once.
//
// The Joiner holds copies: the records it is given pass on unchanged.
// It is bounded by the number of calls and the estimated bytes it holds.
// A per-message record without a trace or span id cannot be joined to
// anything: it comes back at once as a group of its own (ReasonAlone).
package logjoin // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/logjoin"

import (
	"container/list"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
)

// Config bounds a Joiner.
type Config struct {
	// Window is how long the events of one call are waited for, from its
	// first record.
	Window time.Duration
	// MaxCalls is the most calls held at once; beyond it the oldest is evicted.
	MaxCalls int
	// MaxBytes is the most estimated record bytes held at once; beyond it
	// the oldest calls are evicted.
	MaxBytes int
	// Now is the clock of Add; nil means time.Now.
	Now func() time.Time
	// Holder, when set, stores the records the Joiner keeps.
	Holder Holder
}

// Holder stores what a Joiner holds (the storage setting).
type Holder interface {
	// HoldJoining is given each record the Joiner keeps for a call still
	// being joined (every record it takes but a gen_ai.choice, which
	// completes its call), with the call's key, under the Joiner's lock
	// and before Add returns. Its arguments are valid during the call
	// only.
	HoldJoining(key Key, rec plog.LogRecord, rl plog.ResourceLogs, sl plog.ScopeLogs)
}

// Validate reports a bound that cannot work.
func (c Config) Validate() error {
	var errs []error
	if c.Window <= 0 {
		errs = append(errs, fmt.Errorf("window must be positive, got %s", c.Window))
	}
	if c.MaxCalls < 1 {
		errs = append(errs, fmt.Errorf("max calls must be at least 1, got %d", c.MaxCalls))
	}
	if c.MaxBytes < 1 {
		errs = append(errs, fmt.Errorf("max bytes must be at least 1, got %d", c.MaxBytes))
	}
	return errors.Join(errs...)
}

// Key identifies one call: the trace and span id of its span, which its
// events carry too.
type Key struct {
	TraceID pcommon.TraceID
	SpanID  pcommon.SpanID
}

// Valid reports whether the key can match anything: both ids are set.
func (k Key) Valid() bool { return !k.TraceID.IsEmpty() && !k.SpanID.IsEmpty() }

// Reason says why a group left the Joiner.
type Reason int

// Reasons a group leaves.
const (
	ReasonAnswered Reason = iota // a gen_ai.choice arrived
	ReasonDetails                // an operation-details record: a whole call on its own
	ReasonAlone                  // a per-message record without trace or span id: cannot be joined
	ReasonWindow                 // the window passed before a gen_ai.choice arrived
	ReasonEvicted                // pushed out to stay within MaxCalls or MaxBytes
	ReasonClosed                 // the Joiner was closed
)

// String names the reason for logs and metrics.
func (r Reason) String() string {
	switch r {
	case ReasonAnswered:
		return "answered"
	case ReasonDetails:
		return "details"
	case ReasonAlone:
		return "alone"
	case ReasonWindow:
		return "window"
	case ReasonEvicted:
		return "evicted"
	case ReasonClosed:
		return "closed"
	}
	return "unknown"
}

// Group is the GenAI log events of one call.
type Group struct {
	Key    Key
	Reason Reason
	// Logs holds one ResourceLogs with one ScopeLogs: copies of the resource
	// and scope of the call's first record (with their schema URLs) and of
	// its records, in arrival order. It belongs to the caller.
	Logs plog.Logs
}

// Records are the call's records, in arrival order.
func (g Group) Records() plog.LogRecordSlice { return g.scope().LogRecords() }

// Resource is where the call's records came from, with its schema URL.
func (g Group) Resource() plog.ResourceLogs { return g.Logs.ResourceLogs().At(0) }

// Scope is the instrumentation scope of the call's records, with its schema URL.
func (g Group) Scope() plog.ScopeLogs { return g.scope() }

func (g Group) scope() plog.ScopeLogs { return g.Logs.ResourceLogs().At(0).ScopeLogs().At(0) }

// Stats is what a Joiner holds and has shed.
type Stats struct {
	Calls   int    // calls held now
	Bytes   int    // estimated record bytes held now
	Evicted uint64 // calls evicted to stay within bounds, since New
	Late    uint64 // records of a call already answered or evicted, not held, since New
}

// Joiner groups the per-message events of each call. It is safe for
// concurrent use.
type Joiner struct {
	cfg Config
	now func() time.Time

	mu      sync.Mutex
	closed  bool
	calls   map[Key]*call
	order   *list.List // of *call, oldest first; all share Window, so also by deadline
	bytes   int
	done    RecentSet[Key] // calls that left within the last window: their records are late
	evicted uint64
	late    uint64
}

// call is one call whose events are still arriving.
type call struct {
	key      Key
	logs     plog.Logs
	records  plog.LogRecordSlice
	bytes    int
	deadline time.Time
	elem     *list.Element
}

// New returns an empty Joiner; cfg must be valid.
func New(cfg Config) *Joiner {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Joiner{
		cfg:   cfg,
		now:   now,
		calls: make(map[Key]*call),
		order: list.New(),
		done:  NewRecentSet[Key](cfg.MaxCalls),
	}
}

// Add takes one record with its resource and scope and returns the groups
// that are complete now. Records that are no GenAI event are not taken
// (nil). An operation-details record comes back at once as its own group,
// and so does a per-message record without trace or span id. A gen_ai.choice
// completes its call's group. A record of a call that left within the last
// Window (answered, expired or evicted) is counted as late and not held: a
// second choice of the same call comes back in nothing, so each call is read
// once. Taking a record may evict the oldest calls, which come back too.
// After Close, every GenAI record comes back at once as ReasonClosed.
func (j *Joiner) Add(rec plog.LogRecord, rl plog.ResourceLogs, sl plog.ScopeLogs) []Group {
	kind := genai.LogEventKind(genai.LogEventName(rec))
	if kind == genai.LogOther {
		return nil
	}
	key := Key{TraceID: rec.TraceID(), SpanID: rec.SpanID()}

	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.closed:
		return []Group{single(key, ReasonClosed, rec, rl, sl)}
	case kind == genai.LogDetails:
		return []Group{single(key, ReasonDetails, rec, rl, sl)}
	case key.TraceID.IsEmpty() || key.SpanID.IsEmpty():
		return []Group{single(key, ReasonAlone, rec, rl, sl)}
	}
	now := j.now()
	j.done.Forget(now)
	if j.done.Has(key) {
		j.late++
		return nil
	}
	c, ok := j.calls[key]
	if !ok {
		c = &call{key: key, deadline: now.Add(j.cfg.Window)}
		c.logs, c.records = NewLogsUnder(rl, sl)
		c.elem = j.order.PushBack(c)
		j.calls[key] = c
	}
	rec.CopyTo(c.records.AppendEmpty())
	if kind != genai.LogChoice && j.cfg.Holder != nil {
		j.cfg.Holder.HoldJoining(key, rec, rl, sl)
	}
	size := recordSize(rec)
	c.bytes += size
	j.bytes += size

	var out []Group
	if kind == genai.LogChoice {
		out = append(out, j.take(c, ReasonAnswered))
		j.done.Add(key, now.Add(j.cfg.Window))
	}
	for len(j.calls) > 0 && (len(j.calls) > j.cfg.MaxCalls || j.bytes > j.cfg.MaxBytes) {
		oldest := j.order.Front().Value.(*call)
		out = append(out, j.take(oldest, ReasonEvicted))
		j.done.Add(oldest.key, now.Add(j.cfg.Window))
		j.evicted++
	}
	return out
}

// Expire returns the groups of the calls whose window has passed by now,
// oldest first. Their records arriving within another window are late.
// It also forgets the calls completed more than a window ago.
func (j *Joiner) Expire(now time.Time) []Group {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.done.Forget(now)
	var out []Group
	for e := j.order.Front(); e != nil; e = j.order.Front() {
		c := e.Value.(*call)
		if now.Before(c.deadline) {
			break
		}
		out = append(out, j.take(c, ReasonWindow))
		// Its answer may still come: it must not start a call of its own.
		j.done.Add(c.key, now.Add(j.cfg.Window))
	}
	return out
}

// Close returns every call still held, oldest first. The Joiner holds
// nothing afterwards.
func (j *Joiner) Close() []Group {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.closed = true
	out := make([]Group, 0, len(j.calls))
	for e := j.order.Front(); e != nil; e = j.order.Front() {
		out = append(out, j.take(e.Value.(*call), ReasonClosed))
	}
	j.done = RecentSet[Key]{}
	return out
}

// Stats reports what the Joiner holds and has shed.
func (j *Joiner) Stats() Stats {
	j.mu.Lock()
	defer j.mu.Unlock()
	return Stats{Calls: len(j.calls), Bytes: j.bytes, Evicted: j.evicted, Late: j.late}
}

// take removes c and returns its group.
func (j *Joiner) take(c *call, why Reason) Group {
	j.order.Remove(c.elem)
	delete(j.calls, c.key)
	j.bytes -= c.bytes
	return Group{Key: c.key, Reason: why, Logs: c.logs}
}

// single is a group of one record.
func single(key Key, why Reason, rec plog.LogRecord, rl plog.ResourceLogs, sl plog.ScopeLogs) Group {
	ld, records := NewLogsUnder(rl, sl)
	rec.CopyTo(records.AppendEmpty())
	return Group{Key: key, Reason: why, Logs: ld}
}

// NewLogsUnder returns new, empty logs under a copy of rl's resource and
// sl's scope (with their schema URLs), and the slice their records go into.
func NewLogsUnder(rl plog.ResourceLogs, sl plog.ScopeLogs) (plog.Logs, plog.LogRecordSlice) {
	ld := plog.NewLogs()
	outRL := ld.ResourceLogs().AppendEmpty()
	rl.Resource().CopyTo(outRL.Resource())
	outRL.SetSchemaUrl(rl.SchemaUrl())
	outSL := outRL.ScopeLogs().AppendEmpty()
	sl.Scope().CopyTo(outSL.Scope())
	outSL.SetSchemaUrl(sl.SchemaUrl())
	return ld, outSL.LogRecords()
}

// recordOverhead approximates the fixed size of a held record.
const recordOverhead = 128

// recordSize estimates the memory a copy of rec takes: its strings and
// bytes plus a fixed cost per value.
func recordSize(rec plog.LogRecord) int {
	return recordOverhead + len(rec.EventName()) + len(rec.SeverityText()) +
		valueSize(rec.Body()) + mapSize(rec.Attributes())
}

const valueOverhead = 16

func valueSize(v pcommon.Value) int {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return valueOverhead + len(v.Str())
	case pcommon.ValueTypeBytes:
		return valueOverhead + v.Bytes().Len()
	case pcommon.ValueTypeMap:
		return valueOverhead + mapSize(v.Map())
	case pcommon.ValueTypeSlice:
		n := valueOverhead
		for _, e := range v.Slice().All() {
			n += valueSize(e)
		}
		return n
	}
	return valueOverhead
}

func mapSize(m pcommon.Map) int {
	n := 0
	for k, v := range m.All() {
		n += len(k) + valueSize(v)
	}
	return n
}
