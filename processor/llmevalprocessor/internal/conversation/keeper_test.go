package conversation

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llm-eval/llm_eval/scoring"
)

// clock is a test's time, moved by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// journal keeps the records a Keeper writes, as storage would.
type journal struct {
	next uint64
	recs map[uint64]Record
}

func newJournal() *journal { return &journal{next: 1, recs: map[uint64]Record{}} }

func (j *journal) Added(key Key, ex *Exchange) uint64 {
	id := j.next
	j.next++
	c := *ex
	if ex.Resource != (pcommon.Resource{}) {
		c.Resource = pcommon.NewResource()
		ex.Resource.CopyTo(c.Resource)
	}
	j.recs[id] = Record{ID: id, Key: key, Exchange: &c}
	return id
}

func (j *journal) Marked(key Key, id uint64, omitted, gapAt int, instructions []string) uint64 {
	if id == 0 {
		id = j.next
		j.next++
	}
	j.recs[id] = Record{ID: id, Key: key, Omitted: omitted, GapAt: gapAt, Instructions: instructions}
	return id
}

func (j *journal) Removed(ids ...uint64) {
	for _, id := range ids {
		delete(j.recs, id)
	}
}

// records are what a restart would read, by id.
func (j *journal) records() []Record {
	var out []Record
	for _, id := range slices.Sorted(maps.Keys(j.recs)) {
		out = append(out, j.recs[id])
	}
	return out
}

// observer sums what the bounds left out.
type observer struct {
	mu     sync.Mutex
	counts map[string]int
	firsts map[string]int
}

func (o *observer) Limited(limit string, messages int, _ Key, first bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.counts == nil {
		o.counts, o.firsts = map[string]int{}, map[string]int{}
	}
	o.counts[limit] += messages
	if first {
		o.firsts[limit]++
	}
}

func (o *observer) count(limit string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.counts[limit]
}

// fixture is a Keeper on a hand-moved clock that collects what ends.
type fixture struct {
	t      *testing.T
	clock  *clock
	k      *Keeper
	obs    *observer
	j      *journal
	mu     sync.Mutex
	ended  []Ended
	refuse bool // OnEnd does not take what ends
}

func newFixture(t *testing.T, mod func(*Config)) *fixture {
	f := &fixture{t: t, clock: &clock{now: time.Unix(1_800_000_000, 0)}, obs: &observer{}, j: newJournal()}
	cfg := Config{
		IdleTimeout:          time.Minute,
		MaxTurns:             50,
		MaxConversationBytes: 128 << 10,
		MaxConversations:     100,
		MaxBytes:             64 << 20,
		Journal:              f.j,
		Observer:             f.obs,
		Now:                  f.clock.Now,
		OnEnd: func(e Ended) bool {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.refuse {
				return false
			}
			f.ended = append(f.ended, e)
			return true
		},
	}
	if mod != nil {
		mod(&cfg)
	}
	f.k = New(cfg)
	t.Cleanup(func() { f.k.Stop() })
	return f
}

// endAll moves the clock past every idle timeout and ends what is due.
func (f *fixture) endAll() []Ended {
	f.k.EndIdle(f.clock.add(time.Hour))
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.ended
	f.ended = nil
	return out
}

var t0 = time.Unix(1_700_000_000, 0)

// ex is an exchange of trace n, started n seconds after t0.
func ex(n int, in, out string) *Exchange {
	var tr pcommon.TraceID
	tr[0], tr[1] = byte(n>>8), byte(n)
	var sp pcommon.SpanID
	sp[0], sp[1] = byte(n>>8), byte(n)
	start := t0.Add(time.Duration(n) * time.Second)
	return &Exchange{TraceID: tr, SpanID: sp, Start: start, End: start.Add(500 * time.Millisecond), Input: in, Output: out, Model: "gpt-4o-mini"}
}

func inputs(e Ended) []string {
	var out []string
	for _, x := range e.Exchanges {
		out = append(out, x.Input)
	}
	return out
}

func TestGroupsByServiceAndIDInStartOrder(t *testing.T) {
	f := newFixture(t, nil)
	// Arrival order is not start order.
	f.k.Offer("shop", "c1", ex(3, "q3", "a3").TraceID, ex(3, "q3", "a3"))
	f.k.Offer("shop", "c1", ex(1, "q1", "a1").TraceID, ex(1, "q1", "a1"))
	f.k.Offer("shop", "c1", ex(2, "q2", "a2").TraceID, ex(2, "q2", "a2"))
	// Another service with the same id: another conversation.
	f.k.Offer("bank", "c1", ex(4, "b1", "r1").TraceID, ex(4, "b1", "r1"))
	require.Equal(t, 2, f.k.Stats().Open)

	f.k.EndIdle(f.clock.add(59 * time.Second))
	assert.Empty(t, f.ended, "nothing ends before the idle timeout")
	ended := f.endAll()
	require.Len(t, ended, 2)
	byService := map[string]Ended{}
	for _, e := range ended {
		byService[e.Key.Service] = e
	}
	assert.Equal(t, []string{"q1", "q2", "q3"}, inputs(byService["shop"]))
	assert.Equal(t, []string{"b1"}, inputs(byService["bank"]))
	assert.Equal(t, 6, byService["shop"].Messages())
	assert.Zero(t, f.k.Stats().Open)
	assert.Zero(t, f.k.Stats().Bytes)
}

func TestIdleTimeoutRunsFromTheLastExchange(t *testing.T) {
	f := newFixture(t, nil)
	f.k.Offer("shop", "c1", ex(1, "q1", "a1").TraceID, ex(1, "q1", "a1"))
	f.clock.add(50 * time.Second)
	f.k.Offer("shop", "c1", ex(2, "q2", "a2").TraceID, ex(2, "q2", "a2"))
	f.k.EndIdle(f.clock.add(50 * time.Second))
	assert.Empty(t, f.ended, "the second exchange restarted the idle timeout")
	f.k.EndIdle(f.clock.add(11 * time.Second))
	require.Len(t, f.ended, 1)
}

func TestOneTurnPerTrace(t *testing.T) {
	f := newFixture(t, nil)
	gen := ex(1, "Where is my order?", "It shipped.")
	f.k.Offer("shop", "c1", gen.TraceID, gen)
	again := *gen // a second copy of the same span
	f.k.Offer("shop", "c1", again.TraceID, &again)
	later := *gen // a later reading of the same request: the final answer
	later.Output, later.End = "It shipped on Monday.", gen.End.Add(time.Second)
	f.k.Offer("shop", "c1", later.TraceID, &later)
	other := *gen // another request in the same trace
	other.Input, other.Start = "And the invoice?", gen.Start.Add(time.Second)
	f.k.Offer("shop", "c1", other.TraceID, &other)
	ended := f.endAll()
	require.Len(t, ended, 1)
	assert.Equal(t, []string{"Where is my order?", "And the invoice?"}, inputs(ended[0]))
	assert.Equal(t, "It shipped on Monday.", ended[0].Exchanges[0].Output)

	// An agent span stands for every generation of its run, whichever comes first.
	f.k.Offer("shop", "c2", gen.TraceID, gen)
	agent := *gen
	agent.Agent, agent.Output, agent.SpanID = true, "Your order shipped on Monday.", pcommon.SpanID{9}
	f.k.Offer("shop", "c2", agent.TraceID, &agent)
	f.k.Offer("shop", "c2", other.TraceID, &other)
	ended = f.endAll()
	require.Len(t, ended, 1)
	require.Len(t, ended[0].Exchanges, 1)
	assert.Equal(t, "Your order shipped on Monday.", ended[0].Exchanges[0].Output)
	assert.Len(t, ended[0].Stored, 1, "only the records of the exchanges kept are live")
}

func TestTenThousandTurnsAreBounded(t *testing.T) {
	f := newFixture(t, nil)
	const n = 10_000
	for i := range n {
		e := ex(i, fmt.Sprintf("question %d", i), fmt.Sprintf("answer %d", i))
		f.k.Offer("shop", "long", e.TraceID, e)
		require.LessOrEqual(t, f.k.Stats().Bytes, 128<<10+1000)
	}
	ended := f.endAll()
	require.Len(t, ended, 1)
	e := ended[0]
	kept := 0
	for _, x := range e.Exchanges {
		kept += x.messages()
	}
	assert.LessOrEqual(t, kept+1, 50, "the messages kept and the omitted mark fit max_turns")
	assert.Equal(t, 2*n, e.Messages(), "every message is counted, kept or left out")
	assert.Equal(t, 2*n-kept, e.Omitted)
	assert.Equal(t, e.Omitted, f.obs.count(LimitMaxTurns), "what was left out is counted")
	assert.Equal(t, 1, f.obs.firsts[LimitMaxTurns], "and said once for the conversation")
	assert.Equal(t, "question 0", e.Exchanges[0].Input, "the start of the conversation is kept")
	assert.Equal(t, fmt.Sprintf("question %d", n-1), e.Last().Input, "and its end")
	assert.Equal(t, "question 11", e.Exchanges[e.OmittedAt-1].Input, "the omitted messages sit after the first ones")
	assert.Equal(t, fmt.Sprintf("question %d", n-len(e.Exchanges)+e.OmittedAt), e.Exchanges[e.OmittedAt].Input, "and before the latest ones")
	// Storage holds only what is kept, and the mark, which the ended
	// conversation lists to go with it.
	assert.Len(t, f.j.recs, len(e.Exchanges)+1)
	assert.ElementsMatch(t, slices.Collect(maps.Keys(f.j.recs)), e.Stored)
}

// TestSmallestMaxTurnsKeepsFirstAndLatest: at the smallest max_turns the
// processor accepts (5), the first exchange, the mark and the latest
// exchange fit.
func TestSmallestMaxTurnsKeepsFirstAndLatest(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.MaxTurns = 5 })
	for i := 1; i <= 4; i++ {
		e := ex(i, fmt.Sprintf("q%d", i), fmt.Sprintf("a%d", i))
		f.k.Offer("shop", "c1", e.TraceID, e)
	}
	ended := f.endAll()
	require.Len(t, ended, 1)
	var inputs []string
	for _, e := range ended[0].Exchanges {
		inputs = append(inputs, e.Input)
	}
	assert.Equal(t, []string{"q1", "q4"}, inputs)
	assert.Equal(t, 4, ended[0].Omitted)
}

func TestLongMessagesAreCutAndBytesBounded(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.MaxConversationBytes = 4096 })
	big := strings.Repeat("é", 3000) // 6,000 bytes
	e := ex(1, big, "short")
	f.k.Offer("shop", "c1", e.TraceID, e)
	for i := 2; i < 20; i++ {
		e := ex(i, strings.Repeat("q", 500), strings.Repeat("a", 500))
		f.k.Offer("shop", "c1", e.TraceID, e)
	}
	assert.LessOrEqual(t, f.k.Stats().Bytes, 4096)
	ended := f.endAll()
	require.Len(t, ended, 1)
	first := ended[0].Exchanges[0].Input
	assert.True(t, strings.HasSuffix(first, scoring.TruncationMarker), "a message over a quarter of the bytes is cut, with the marker that makes the result truncated")
	assert.LessOrEqual(t, len(first), 1024)
	assert.True(t, strings.HasPrefix(first, "é"), "on a rune boundary")
	assert.Equal(t, 1, f.obs.count(LimitMessageCut))
	assert.Positive(t, f.obs.count(LimitMaxConversationBytes))
	assert.Equal(t, f.obs.count(LimitMaxConversationBytes), ended[0].Omitted)
}

func TestMaxConversationsAndMaxBytesRefuse(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.MaxConversations = 2 })
	for i := range 3 {
		e := ex(i, "q", "a")
		f.k.Offer("shop", fmt.Sprint("c", i), e.TraceID, e)
	}
	assert.Equal(t, 2, f.k.Stats().Open)
	assert.Equal(t, 2, f.obs.count(LimitMaxConversations), "the third conversation's messages are refused")
	e := ex(5, "more", "for c0")
	f.k.Offer("shop", "c0", e.TraceID, e)
	assert.Equal(t, 2, f.obs.count(LimitMaxConversations), "an open conversation still takes exchanges")

	g := newFixture(t, func(c *Config) { c.MaxBytes = 2000 })
	e = ex(1, strings.Repeat("q", 300), strings.Repeat("a", 300))
	g.k.Offer("shop", "c1", e.TraceID, e)
	e = ex(2, strings.Repeat("q", 300), strings.Repeat("a", 300))
	g.k.Offer("shop", "c1", e.TraceID, e)
	assert.Equal(t, 2, g.obs.count(LimitMaxBytes))
	assert.LessOrEqual(t, g.k.Stats().Bytes, 2000)
}

func TestLateExchangeAfterItsConversationEnded(t *testing.T) {
	f := newFixture(t, nil)
	e1, e2 := ex(1, "q1", "a1"), ex(2, "q2", "a2")
	f.k.Offer("shop", "c1", e2.TraceID, e2)
	require.Len(t, f.endAll(), 1)
	f.k.Offer("shop", "c1", e1.TraceID, e1) // started before the conversation's last exchange ended
	assert.Equal(t, 2, f.obs.count(LimitLate))
	assert.Zero(t, f.k.Stats().Open)
	e3 := ex(100, "back again", "welcome back")
	f.k.Offer("shop", "c1", e3.TraceID, e3) // the user came back after the idle timeout
	ended := f.endAll()
	require.Len(t, ended, 1)
	assert.Equal(t, []string{"back again"}, inputs(ended[0]), "a new conversation under the same id")
}

func TestExchangeWaitsForItsTracesID(t *testing.T) {
	f := newFixture(t, nil)
	// A service that never sent an id: nothing waits.
	e := ex(1, "q", "a")
	f.k.Offer("other", "", e.TraceID, e)
	assert.Zero(t, f.k.Stats().Pending)

	// The generation arrives first, its root span with the id last.
	first := ex(2, "q1", "a1")
	f.k.Offer("shop", "c1", first.TraceID, first)
	gen := ex(3, "q2", "a2")
	gen.Resource = pcommon.NewResource()
	gen.Resource.Attributes().PutStr("service.name", "shop")
	gen.Start = gen.Start.Add(time.Hour) // the conversation's latest: its resource is the results'
	f.k.Offer("shop", "", gen.TraceID, gen)
	gen.Resource.Attributes().PutStr("service.name", "changed after Offer") // borrowed only
	assert.Equal(t, 1, f.k.Stats().Pending)
	f.k.Offer("shop", "c1", gen.TraceID, nil) // the root: no turn, names the id
	assert.Zero(t, f.k.Stats().Pending)
	// A later span of the trace without an id joins directly.
	again := ex(3, "q2b", "a2b")
	again.Start = gen.Start
	f.k.Offer("shop", "", again.TraceID, again)

	// One that never learns its id is forgotten after the pending wait.
	lost := ex(4, "q3", "a3")
	f.k.Offer("shop", "", lost.TraceID, lost)
	assert.Equal(t, 1, f.k.Stats().Pending)
	f.k.EndIdle(f.clock.add(DefaultPendingWait + time.Second))
	assert.Zero(t, f.k.Stats().Pending)

	ended := f.endAll()
	require.Len(t, ended, 1)
	assert.Equal(t, []string{"q1", "q2", "q2b"}, inputs(ended[0]))
	v, _ := ended[0].Resource.Attributes().Get("service.name")
	assert.Equal(t, "shop", v.Str(), "the waiting exchange kept a copy of its resource")
	assert.ElementsMatch(t, slices.Collect(maps.Keys(f.j.recs)), ended[0].Stored,
		"the forgotten exchange's record went; the waiting one's was written again under its conversation")
}

func TestRetriedWhenNotTaken(t *testing.T) {
	f := newFixture(t, nil)
	e := ex(1, "q", "a")
	f.k.Offer("shop", "c1", e.TraceID, e)
	f.refuse = true
	f.k.EndIdle(f.clock.add(time.Minute))
	assert.Equal(t, 1, f.k.Stats().Open, "a conversation the store cannot take stays open")
	f.refuse = false
	f.k.EndIdle(f.clock.add(RetryDelay / 2))
	assert.Empty(t, f.ended)
	f.k.EndIdle(f.clock.add(RetryDelay))
	assert.Len(t, f.ended, 1)
}

func TestSampledByID(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Sampled = func(id string) bool { return id == "in" } })
	e := ex(1, "q", "a")
	f.k.Offer("shop", "out", e.TraceID, e)
	e = ex(2, "q", "a")
	f.k.Offer("shop", "in", e.TraceID, e)
	assert.Equal(t, 1, f.k.Stats().Open)
}

func TestRestoreGivesBackWhatWasOpen(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.MaxTurns = 10 })
	res := pcommon.NewResource()
	res.Attributes().PutStr("service.name", "shop")
	for i := range 12 {
		e := ex(i, fmt.Sprint("q", i), fmt.Sprint("a", i))
		e.Resource = res
		if i == 3 {
			e.Instructions = []string{"You are the shop's assistant."}
		}
		f.k.Offer("shop", "c1", e.TraceID, e)
	}
	waiting := ex(20, "q20", "a20")
	f.k.Offer("shop", "", waiting.TraceID, waiting)
	recs := f.j.records()
	f.k.Offer("shop", "c2", waiting.TraceID, nil)

	// A restart: a new Keeper reads the records back.
	g := newFixture(t, func(c *Config) { c.MaxTurns = 10 })
	g.clock.now = f.clock.now.Add(10 * time.Second)
	g.j = f.j
	g.k.cfg.Journal = f.j
	require.Equal(t, 1, g.k.Restore(recs))
	assert.Equal(t, 1, g.k.Stats().Pending)
	g.k.Offer("shop", "c2", waiting.TraceID, nil) // its trace names its id after the restart

	byID := func(es []Ended) map[string]Ended {
		out := map[string]Ended{}
		for _, e := range es {
			out[e.Key.ID] = e
		}
		return out
	}
	want, got := byID(f.endAll()), byID(g.endAll())
	require.Len(t, want, 2)
	require.Len(t, got, 2)
	assert.Equal(t, 16, got["c1"].Omitted)
	assert.Equal(t, want["c1"].Omitted, got["c1"].Omitted)
	assert.Equal(t, want["c1"].OmittedAt, got["c1"].OmittedAt)
	assert.Equal(t, inputs(want["c1"]), inputs(got["c1"]))
	assert.Equal(t, []string{"q20"}, inputs(got["c2"]))
	assert.Equal(t, []string{"You are the shop's assistant."}, got["c1"].Instructions, "the system prompt of an exchange left out is kept")
	v, _ := got["c1"].Resource.Attributes().Get("service.name")
	assert.Equal(t, "shop", v.Str())
}

func TestRestoredConversationEndsAfterItsIdleTimeout(t *testing.T) {
	f := newFixture(t, nil)
	e := ex(1, "q", "a")
	e.Received = f.clock.Now().Add(-50 * time.Second)
	f.k.Offer("shop", "c1", e.TraceID, e)
	recs := f.j.records()

	g := newFixture(t, nil)
	g.clock.now = f.clock.now
	require.Equal(t, 1, g.k.Restore(recs))
	g.k.EndIdle(g.clock.add(9 * time.Second))
	assert.Empty(t, g.ended)
	g.k.EndIdle(g.clock.add(2 * time.Second))
	assert.Len(t, g.ended, 1, "the idle timeout runs from when the last exchange arrived, before the restart")
}

func TestHistory(t *testing.T) {
	f := newFixture(t, nil)
	for i := 1; i <= 4; i++ {
		e := ex(i, fmt.Sprint("q", i), fmt.Sprint("a", i))
		f.k.Offer("shop", "c1", e.TraceID, e)
	}
	h := f.k.History(Key{"shop", "c1"}, ex(3, "", "").Start, 10)
	require.Len(t, h, 2)
	assert.Equal(t, "q1", h[0].Input)
	assert.Equal(t, "a2", h[1].Output)
	assert.Len(t, f.k.History(Key{"shop", "c1"}, ex(9, "", "").Start, 3), 3)
	assert.Nil(t, f.k.History(Key{"shop", "none"}, ex(9, "", "").Start, 3))
}

func TestTimerEndsConversations(t *testing.T) {
	done := make(chan Ended, 1)
	k := New(Config{
		IdleTimeout: 50 * time.Millisecond, MaxTurns: 50, MaxConversationBytes: 1 << 16, MaxConversations: 10, MaxBytes: 1 << 20,
		OnEnd: func(e Ended) bool { done <- e; return true },
	})
	defer k.Stop()
	e := ex(1, "q", "a")
	k.Offer("shop", "c1", e.TraceID, e)
	select {
	case got := <-done:
		assert.Equal(t, Key{"shop", "c1"}, got.Key)
	case <-time.After(10 * time.Second):
		t.Fatal("the conversation did not end")
	}
}

func TestStopTakesNothingMore(t *testing.T) {
	f := newFixture(t, nil)
	e := ex(1, "q", "a")
	f.k.Offer("shop", "c1", e.TraceID, e)
	assert.Equal(t, 1, f.k.Stop())
	assert.False(t, f.k.Offer("shop", "c2", e.TraceID, ex(2, "q", "a")))
	f.k.EndIdle(f.clock.add(time.Hour))
	assert.Empty(t, f.ended, "after Stop nothing ends: with storage it is scored after the next start")
}
