package logjoin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// clock is a settable time source.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

func newJoiner(c *clock, window time.Duration, maxCalls, maxBytes int) *Joiner {
	cfg := Config{Window: window, MaxCalls: maxCalls, MaxBytes: maxBytes, Now: c.Now}
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	return New(cfg)
}

func readLogFile(t testing.TB, file string) plog.Logs {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../../../testdata/otlp/logs", file))
	require.NoError(t, err)
	ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(b)
	require.NoError(t, err)
	return ld
}

// addBatch adds every record of ld, as the processor would, and returns
// the groups completed on the way.
func addBatch(j *Joiner, ld plog.Logs) []Group {
	var out []Group
	for _, rl := range ld.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, rec := range sl.LogRecords().All() {
				out = append(out, j.Add(rec, rl, sl)...)
			}
		}
	}
	return out
}

// summary is what a test checks of a group.
type summary struct {
	span    string
	reason  Reason
	records int
	service string
	input   string
	output  string
	missing string
}

func summarise(t *testing.T, groups []Group) []summary {
	t.Helper()
	out := make([]summary, 0, len(groups))
	for _, g := range groups {
		require.Equal(t, 1, g.Logs.ResourceLogs().Len())
		require.Equal(t, 1, g.Resource().ScopeLogs().Len())
		svc, _ := g.Resource().Resource().Attributes().Get("service.name")
		gen := genai.ReadLogs(g.Records())
		out = append(out, summary{
			span: g.Key.SpanID.String(), reason: g.Reason, records: g.Records().Len(), service: svc.Str(),
			input: gen.Input, output: gen.Output, missing: gen.Missing,
		})
	}
	return out
}

// TestJoinLogFiles joins the batches of the testdata/otlp/logs files and reads
// each group back.
func TestJoinLogFiles(t *testing.T) {
	tests := []struct {
		name    string
		batches []string
		want    [][]summary // groups completed by each batch, in order
		pending int         // calls still held at the end
	}{
		{
			name:    "details event completes at once",
			batches: []string{"details_structured.json"},
			want: [][]summary{{{span: "eee19b7ec3c1b174", reason: ReasonDetails, records: 1, service: "order-assistant",
				input: "Where is my order 1042?", output: "Order 1042 shipped on 18 December 2025 with DHL."}}},
		},
		{
			name:    "details events with string bodies",
			batches: []string{"details_string_body.json"},
			want: [][]summary{{
				{span: "b7ad6b7169203331", reason: ReasonDetails, records: 1, service: "docs-bot",
					input: "What does HTTP 429 mean?", output: "The client sent too many requests and is being rate limited."},
				{span: "00f067aa0ba902b7", reason: ReasonDetails, records: 1, service: "docs-bot",
					input: "Plan one day in Kyoto.", output: "Morning: Fushimi Inari. Afternoon: Gion."},
			}},
		},
		{
			name:    "two interleaved calls in one batch, each completed by its choice",
			batches: []string{"message_events_one_batch.json"},
			want: [][]summary{{
				{span: "8bed2dbecbd446ef", reason: ReasonAnswered, records: 3, service: "weather-agent",
					input: "Opposite of hot?", output: "Cold."},
				{span: "1e44d14bd3c74269", reason: ReasonAnswered, records: 5, service: "weather-agent",
					input: "Weather in Rome?", output: "It is sunny in Rome, 24°C."},
			}},
		},
		{
			name:    "one call split across two batches",
			batches: []string{"message_events_split_1.json", "message_events_split_2.json"},
			want: [][]summary{nil, {{span: "53995c3f42cd8ad8", reason: ReasonAnswered, records: 3, service: "trip-planner",
				input: "Best time to visit Lisbon?", output: "Spring and autumn: mild weather and fewer crowds."}}},
		},
		{
			name:    "first half only: held",
			batches: []string{"message_events_split_1.json"},
			want:    [][]summary{nil},
			pending: 1,
		},
		{
			name:    "capture off: groups without content",
			batches: []string{"capture_off.json"},
			want: [][]summary{{
				{span: "0102030405060708", reason: ReasonAnswered, records: 3, service: "billing-bot", missing: genai.MissingOutput},
				{span: "1112131415161718", reason: ReasonDetails, records: 1, service: "billing-bot", missing: genai.MissingOutput},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{now: t0}
			j := newJoiner(c, 30*time.Second, 100, 1<<20)
			for i, file := range tt.batches {
				ld := readLogFile(t, file)
				before := plog.NewLogs()
				ld.CopyTo(before)
				got := addBatch(j, ld)
				assert.Equal(t, tt.want[i], nilIfEmpty(summarise(t, got)), "batch %d (%s)", i, file)
				assert.Equal(t, before, ld, "the batch passes on unchanged")
				c.set(c.Now().Add(4 * time.Second))
			}
			assert.Equal(t, tt.pending, j.Stats().Calls)
			assert.Len(t, j.Close(), tt.pending)
		})
	}
}

func nilIfEmpty(s []summary) []summary {
	if len(s) == 0 {
		return nil
	}
	return s
}

// recordBuilder makes records of one resource and scope.
type recordBuilder struct {
	rl plog.ResourceLogs
	sl plog.ScopeLogs
}

func newRecordBuilder() recordBuilder {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "svc")
	rl.SetSchemaUrl("https://opentelemetry.io/schemas/1.36.0")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("opentelemetry.instrumentation.openai_v2")
	sl.SetSchemaUrl("https://opentelemetry.io/schemas/1.28.0")
	return recordBuilder{rl: rl, sl: sl}
}

// record appends an event for call n (0 means no ids) with a text body.
func (b recordBuilder) record(n byte, event, text string) plog.LogRecord {
	rec := b.sl.LogRecords().AppendEmpty()
	rec.SetEventName(event)
	if n != 0 {
		rec.SetTraceID(pcommon.TraceID{1, n})
		rec.SetSpanID(pcommon.SpanID{2, n})
	}
	switch event {
	case "gen_ai.choice":
		rec.Body().SetEmptyMap().PutEmptyMap("message").PutStr("content", text)
	default:
		rec.Body().SetEmptyMap().PutStr("content", text)
	}
	return rec
}

func (b recordBuilder) add(j *Joiner, n byte, event, text string) []Group {
	return j.Add(b.record(n, event, text), b.rl, b.sl)
}

func reasons(groups []Group) []string {
	var out []string
	for _, g := range groups {
		out = append(out, fmt.Sprintf("%d:%s:%d", g.Key.SpanID[1], g.Reason, g.Records().Len()))
	}
	return out
}

func TestJoinerWindow(t *testing.T) {
	c := &clock{now: t0}
	j := newJoiner(c, 10*time.Second, 10, 1<<20)
	b := newRecordBuilder()
	assert.Empty(t, b.add(j, 1, "gen_ai.user.message", "first"))
	c.set(t0.Add(5 * time.Second))
	assert.Empty(t, b.add(j, 2, "gen_ai.user.message", "second"))
	assert.Empty(t, b.add(j, 1, "gen_ai.system.message", "a later record does not extend the window"))

	assert.Empty(t, j.Expire(t0.Add(10*time.Second-time.Nanosecond)))
	assert.Equal(t, []string{"1:window:2"}, reasons(j.Expire(t0.Add(10*time.Second))))
	assert.Equal(t, 1, j.Stats().Calls)

	// The answer of a call that timed out comes too late: not held, counted.
	c.set(t0.Add(11 * time.Second))
	assert.Empty(t, b.add(j, 1, "gen_ai.choice", "late"))
	assert.Equal(t, uint64(1), j.Stats().Late)

	assert.Equal(t, []string{"2:window:1"}, reasons(j.Expire(t0.Add(15*time.Second))))
	// Once the window has passed again, the ids may start a new call.
	c.set(t0.Add(21 * time.Second))
	j.Expire(c.Now())
	assert.Empty(t, b.add(j, 1, "gen_ai.user.message", "new call, same ids"))
	assert.Equal(t, 1, j.Stats().Calls)
}

func TestJoinerSecondChoiceIsLate(t *testing.T) {
	c := &clock{now: t0}
	j := newJoiner(c, 10*time.Second, 10, 1<<20)
	b := newRecordBuilder()
	assert.Empty(t, b.add(j, 1, "gen_ai.user.message", "Name a colour."))
	assert.Equal(t, []string{"1:answered:2"}, reasons(b.add(j, 1, "gen_ai.choice", "Red")))
	assert.Empty(t, b.add(j, 1, "gen_ai.choice", "Blue"), "choice 1 of an answered call")
	assert.Equal(t, Stats{Late: 1}, j.Stats())
}

func TestJoinerBounds(t *testing.T) {
	t.Run("max calls evicts the oldest", func(t *testing.T) {
		c := &clock{now: t0}
		j := newJoiner(c, time.Minute, 2, 1<<20)
		b := newRecordBuilder()
		assert.Empty(t, b.add(j, 1, "gen_ai.user.message", "one"))
		assert.Empty(t, b.add(j, 2, "gen_ai.user.message", "two"))
		assert.Empty(t, b.add(j, 2, "gen_ai.system.message", "two again: no new call"))
		assert.Equal(t, []string{"1:evicted:1"}, reasons(b.add(j, 3, "gen_ai.user.message", "three")))
		assert.Empty(t, b.add(j, 1, "gen_ai.choice", "answer of the evicted call"))
		assert.Equal(t, []string{"2:answered:3"}, reasons(b.add(j, 2, "gen_ai.choice", "answer two")))
		s := j.Stats()
		assert.Equal(t, Stats{Calls: 1, Bytes: s.Bytes, Evicted: 1, Late: 1}, s)
		assert.Positive(t, s.Bytes)
	})
	t.Run("max bytes evicts the oldest", func(t *testing.T) {
		c := &clock{now: t0}
		b := newRecordBuilder()
		one := recordSize(b.record(1, "gen_ai.user.message", strings.Repeat("x", 1000)))
		j := newJoiner(c, time.Minute, 100, 2*one+10)
		assert.Empty(t, b.add(j, 1, "gen_ai.user.message", strings.Repeat("x", 1000)))
		assert.Empty(t, b.add(j, 2, "gen_ai.user.message", strings.Repeat("x", 1000)))
		assert.Equal(t, 2*one, j.Stats().Bytes)
		assert.Equal(t, []string{"1:evicted:1"}, reasons(b.add(j, 3, "gen_ai.user.message", strings.Repeat("x", 1000))))
		assert.Equal(t, 2*one, j.Stats().Bytes)
	})
	t.Run("a record over the byte budget is evicted on its own", func(t *testing.T) {
		c := &clock{now: t0}
		j := newJoiner(c, time.Minute, 100, 500)
		b := newRecordBuilder()
		assert.Empty(t, b.add(j, 1, "gen_ai.user.message", "small"))
		assert.Equal(t, []string{"1:evicted:1", "2:evicted:1"}, reasons(b.add(j, 2, "gen_ai.user.message", strings.Repeat("x", 600))))
		assert.Equal(t, Stats{Evicted: 2}, j.Stats())
	})
	t.Run("answered calls remembered are bounded too", func(t *testing.T) {
		c := &clock{now: t0}
		j := newJoiner(c, time.Minute, 2, 1<<20)
		b := newRecordBuilder()
		for n := byte(1); n <= 5; n++ {
			assert.Len(t, b.add(j, n, "gen_ai.choice", "answer"), 1)
		}
		assert.Equal(t, 2, j.done.Len())
		assert.Len(t, b.add(j, 1, "gen_ai.choice", "forgotten early: a new call"), 1)
		assert.Empty(t, b.add(j, 5, "gen_ai.choice", "remembered"))
	})
}

func TestJoinerRecordsWithoutIDs(t *testing.T) {
	c := &clock{now: t0}
	j := newJoiner(c, time.Minute, 10, 1<<20)
	b := newRecordBuilder()
	assert.Equal(t, []string{"0:alone:1"}, reasons(b.add(j, 0, "gen_ai.user.message", "no ids")))
	assert.Equal(t, []string{"0:alone:1"}, reasons(b.add(j, 0, "gen_ai.choice", "no ids")))

	onlyTrace := b.record(0, "gen_ai.user.message", "trace id, no span id")
	onlyTrace.SetTraceID(pcommon.TraceID{9})
	assert.Equal(t, []string{"0:alone:1"}, reasons(j.Add(onlyTrace, b.rl, b.sl)))

	details := b.record(0, "gen_ai.client.inference.operation.details", "")
	assert.Equal(t, []string{"0:details:1"}, reasons(j.Add(details, b.rl, b.sl)))

	empty := plog.NewLogRecord()
	assert.Nil(t, j.Add(empty, b.rl, b.sl), "no event name: not taken")
	assert.Equal(t, Stats{}, j.Stats())
}

func TestJoinerCopiesResourceAndScope(t *testing.T) {
	c := &clock{now: t0}
	j := newJoiner(c, time.Minute, 10, 1<<20)
	b := newRecordBuilder()
	b.add(j, 1, "gen_ai.user.message", "hello")
	b.rl.Resource().Attributes().PutStr("service.name", "changed after Add")
	groups := b.add(j, 1, "gen_ai.choice", "hi")
	require.Len(t, groups, 1)
	g := groups[0]
	svc, _ := g.Resource().Resource().Attributes().Get("service.name")
	assert.Equal(t, "svc", svc.Str(), "resource of the first record, copied when it came")
	assert.Equal(t, "https://opentelemetry.io/schemas/1.36.0", g.Resource().SchemaUrl())
	assert.Equal(t, "opentelemetry.instrumentation.openai_v2", g.Scope().Scope().Name())
	assert.Equal(t, "https://opentelemetry.io/schemas/1.28.0", g.Scope().SchemaUrl())
	assert.Equal(t, Key{TraceID: pcommon.TraceID{1, 1}, SpanID: pcommon.SpanID{2, 1}}, g.Key)

	g.Records().At(0).Body().Map().PutStr("content", "changed in the group")
	orig, _ := b.sl.LogRecords().At(0).Body().Map().Get("content")
	assert.Equal(t, "hello", orig.Str(), "the group holds copies")
}

func TestJoinerClose(t *testing.T) {
	c := &clock{now: t0}
	j := newJoiner(c, time.Minute, 10, 1<<20)
	b := newRecordBuilder()
	b.add(j, 2, "gen_ai.user.message", "two")
	b.add(j, 1, "gen_ai.user.message", "one")
	b.add(j, 2, "gen_ai.system.message", "two")
	assert.Equal(t, []string{"2:closed:2", "1:closed:1"}, reasons(j.Close()))
	assert.Equal(t, Stats{}, j.Stats())
	assert.Equal(t, []string{"3:closed:1"}, reasons(b.add(j, 3, "gen_ai.user.message", "after close")))
	assert.Empty(t, j.Close())
}

// TestJoinerConcurrent adds the events of many calls from several
// goroutines while another expires: every call comes out exactly once.
func TestJoinerConcurrent(t *testing.T) {
	c := &clock{now: t0}
	j := newJoiner(c, time.Hour, 1000, 1<<24)
	const workers, perWorker = 4, 50
	var mu sync.Mutex
	seen := map[Key]int{}
	collect := func(gs []Group) {
		mu.Lock()
		defer mu.Unlock()
		for _, g := range gs {
			seen[g.Key]++
		}
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			b := newRecordBuilder()
			for i := range perWorker {
				rec := b.record(1, "gen_ai.user.message", "q")
				rec.SetSpanID(pcommon.SpanID{byte(w + 1), byte(i)})
				collect(j.Add(rec, b.rl, b.sl))
				ch := b.record(1, "gen_ai.choice", "a")
				ch.SetSpanID(pcommon.SpanID{byte(w + 1), byte(i)})
				collect(j.Add(ch, b.rl, b.sl))
			}
		})
	}
	wg.Go(func() {
		for range 100 {
			collect(j.Expire(t0))
		}
	})
	wg.Wait()
	collect(j.Close())
	assert.Len(t, seen, workers*perWorker)
	for k, n := range seen {
		assert.Equal(t, 1, n, "call %v", k)
	}
}

func TestConfigValidate(t *testing.T) {
	assert.NoError(t, Config{Window: time.Second, MaxCalls: 1, MaxBytes: 1}.Validate())
	err := Config{}.Validate()
	require.Error(t, err)
	for _, want := range []string{"window", "max calls", "max bytes"} {
		assert.Contains(t, err.Error(), want)
	}
}

// BenchmarkJoinMessageEvents joins the five per-message events of one call
// and reads the group.
func BenchmarkJoinMessageEvents(b *testing.B) {
	ld := readLogFile(b, "message_events_one_batch.json")
	c := &clock{now: t0}
	j := newJoiner(c, time.Minute, 1000, 1<<24)
	rl := ld.ResourceLogs().At(0)
	sl := rl.ScopeLogs().At(0)
	var call []plog.LogRecord
	for _, rec := range sl.LogRecords().All() {
		if rec.SpanID().String() == "1e44d14bd3c74269" {
			call = append(call, rec)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	var i uint64
	for b.Loop() {
		i++
		var id pcommon.SpanID
		for k := range 8 {
			id[k] = byte(i >> (8 * k))
		}
		var groups []Group
		for _, rec := range call {
			rec.SetSpanID(id)
			groups = append(groups, j.Add(rec, rl, sl)...)
		}
		if len(groups) != 1 || genai.ReadLogs(groups[0].Records()).Output == "" {
			b.Fatalf("groups %v", reasons(groups))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(call)), "ns/record")
}

func TestKeyValid(t *testing.T) {
	assert.True(t, Key{TraceID: pcommon.TraceID{1}, SpanID: pcommon.SpanID{2}}.Valid())
	assert.False(t, Key{TraceID: pcommon.TraceID{1}}.Valid())
	assert.False(t, Key{SpanID: pcommon.SpanID{1}}.Valid())
}

// Result records and held records go under copies of the resource and
// scope of the call's records, schema URLs included; the logs they are
// copied from are not touched.
func TestNewLogsUnder(t *testing.T) {
	in := plog.NewLogs()
	rl := in.ResourceLogs().AppendEmpty()
	rl.SetSchemaUrl("https://opentelemetry.io/schemas/1.37.0")
	rl.Resource().Attributes().PutStr("service.name", "order-assistant")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.SetSchemaUrl("https://opentelemetry.io/schemas/1.37.0")
	sl.Scope().SetName("opentelemetry.util.genai")
	sl.Scope().SetVersion("0.2b0")
	sl.LogRecords().AppendEmpty().SetEventName("gen_ai.client.inference.operation.details")
	before := plog.NewLogs()
	in.CopyTo(before)

	ld, records := NewLogsUnder(rl, sl)
	records.AppendEmpty().SetEventName("gen_ai.evaluation.result")

	assert.Equal(t, before, in, "the logs copied from are not touched")
	require.Equal(t, 1, ld.ResourceLogs().Len())
	outRL := ld.ResourceLogs().At(0)
	assert.Equal(t, rl.Resource().Attributes().AsRaw(), outRL.Resource().Attributes().AsRaw())
	assert.Equal(t, rl.SchemaUrl(), outRL.SchemaUrl())
	require.Equal(t, 1, outRL.ScopeLogs().Len())
	outSL := outRL.ScopeLogs().At(0)
	assert.Equal(t, "opentelemetry.util.genai", outSL.Scope().Name())
	assert.Equal(t, "0.2b0", outSL.Scope().Version())
	assert.Equal(t, sl.SchemaUrl(), outSL.SchemaUrl())
	require.Equal(t, 1, outSL.LogRecords().Len(), "the records go into the copy")
}
