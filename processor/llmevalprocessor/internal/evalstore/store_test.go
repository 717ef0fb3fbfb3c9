package evalstore

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llm-eval/llm_eval/scoring"
)

// The scorers' configuration in these tests is the scorer's name.
type testStore = Store

// scorer answers pass with the case's output as reason once gate (if
// any) is closed, or an error when its context ends first.
type scorer struct {
	name  string
	gate  chan struct{}
	calls atomic.Int32
}

func (f *scorer) Name() string { return f.name }

func (f *scorer) Score(ctx context.Context, c scoring.Case) scoring.Result {
	f.calls.Add(1)
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return ErrorResult(scoring.ErrorCanceled, ctx.Err())
		}
	}
	return scoring.Result{Scorer: f.name, Label: scoring.LabelPass, Score: 0.1, Reason: c.Output}
}

// subject is a Subject that records where its results went.
type subject struct {
	output  string
	skipped map[string]bool
	trace   pcommon.TraceID
	waiting atomic.Bool // waits for its trace's context

	mu     sync.Mutex
	leaves [][]Result
	lates  []Result
}

func (s *subject) Case(Scorer) scoring.Case                 { return scoring.Case{Output: s.output} }
func (s *subject) Skips(sc Scorer) bool                     { return s.skipped[sc.Name] }
func (s *subject) WaitsForContext() (pcommon.TraceID, bool) { return s.trace, s.waiting.Load() }

func (s *subject) Leave(_ context.Context, results []Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.leaves = append(s.leaves, results)
}

func (s *subject) Late(_ context.Context, r Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lates = append(s.lates, r)
}

// left is what the subject left with; nil before it left.
func (s *subject) left() []Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.leaves) == 0 {
		return nil
	}
	return s.leaves[0]
}

func (s *subject) leaveCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.leaves)
}

func (s *subject) late() []Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Result(nil), s.lates...)
}

// observer records what the store told it.
type observer struct {
	mu       sync.Mutex
	results  int
	unscored []string
	waits    []bool
	joins    []string
	recovery []string
	learned  []string
	missed   int
}

func (o *observer) Result(context.Context, Result) { o.mu.Lock(); o.results++; o.mu.Unlock() }
func (o *observer) Unscored(_ context.Context, reason string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.unscored = append(o.unscored, reason)
}
func (o *observer) ContextWaitEnded(_ context.Context, arrived bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.waits = append(o.waits, arrived)
}
func (o *observer) SignalJoined(_ context.Context, outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.joins = append(o.joins, outcome)
}
func (o *observer) EventsMissed(_ context.Context, service, _ string, learned bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.missed++
	if learned {
		o.learned = append(o.learned, service)
	}
}
func (o *observer) Recovered(_ context.Context, outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.recovery = append(o.recovery, outcome)
}

func (o *observer) snapshot() observer {
	o.mu.Lock()
	defer o.mu.Unlock()
	return observer{results: o.results, unscored: append([]string(nil), o.unscored...), waits: append([]bool(nil), o.waits...),
		joins: append([]string(nil), o.joins...), recovery: append([]string(nil), o.recovery...),
		learned: append([]string(nil), o.learned...), missed: o.missed}
}

// journal records the store's writes by item id.
type journal struct {
	mu       sync.Mutex
	next     uint64
	finished map[uint64][]string
	left     []uint64
}

func (j *journal) Admitted(Subject, time.Time) uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.next++
	return j.next
}

func (j *journal) Rewritten(id uint64, s Subject, at time.Time) uint64 {
	if id == 0 {
		return j.Admitted(s, at)
	}
	return id
}

func (j *journal) Finished(id uint64, r Result) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.finished == nil {
		j.finished = map[uint64][]string{}
	}
	j.finished[id] = append(j.finished[id], r.Scorer)
}

func (j *journal) Left(id uint64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.left = append(j.left, id)
}

// fixture is a started store with its observer.
type fixture struct {
	s   *testStore
	obs *observer
}

// waits marks a scorer whose evaluation waits for context.
const waits = "waits:"

// newFixture starts a store running the given scorers; a scorer whose name
// starts with waits: reads the trace's context.
func newFixture(t *testing.T, set Settings, j Journal, scorers ...*scorer) *fixture {
	t.Helper()
	return newFixtureWith(t, set, j, nil, scorers...)
}

// newFixtureWith is newFixture calling prepare, if not nil, before Start.
func newFixtureWith(t *testing.T, set Settings, j Journal, prepare func(*testStore), scorers ...*scorer) *fixture {
	t.Helper()
	obs := &observer{}
	set.Observer = obs
	if set.MaxWait == 0 {
		set.MaxWait = time.Hour
	}
	if set.Capacity == 0 {
		set.Capacity = 10
	}
	if set.Workers == 0 {
		set.Workers = 2
	}
	s := New(set)
	var run []Scorer
	for _, sc := range scorers {
		w := len(sc.name) > len(waits) && sc.name[:len(waits)] == waits
		run = append(run, Scorer{Name: sc.name, ReadsContext: w, Run: sc})
	}
	if prepare != nil {
		prepare(s)
	}
	s.Start(run, j)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return &fixture{s: s, obs: obs}
}

// stateOf is the state of the item of subj: StateLeft once it is no longer
// held.
func (f *fixture) stateOf(subj Subject) State {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	for e := f.s.held.Front(); e != nil; e = e.Next() {
		it := e.Value.(*item)
		if it.subject == subj {
			return it.state
		}
		if p, ok := it.subject.(*pair); ok {
			for _, h := range p.halves {
				if h == subj {
					return it.state
				}
			}
		}
	}
	return StateLeft
}

func labels(results []Result) []string {
	var out []string
	for _, r := range results {
		switch {
		case r.Skipped:
			out = append(out, r.Scorer+":skipped")
		case r.Label() == scoring.LabelError:
			var se *scoring.Error
			if e, ok := r.Result.Err.(*scoring.Error); ok {
				se = e
			}
			if se != nil {
				out = append(out, r.Scorer+":error:"+string(se.Type))
			} else {
				out = append(out, r.Scorer+":error")
			}
		default:
			out = append(out, r.Scorer+":"+string(r.Label()))
		}
	}
	return out
}

func eventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, time.Millisecond, msg)
}

// An admitted item is dispatched to every scorer, the scorers that do not
// apply are skipped without a call, and the item leaves once, with its
// results in scorer order, when the last has finished; results in between
// are written to the journal.
func TestAdmitDispatchFinish(t *testing.T) {
	gate := make(chan struct{})
	a, b, c := &scorer{name: "a"}, &scorer{name: "b", gate: gate}, &scorer{name: "c"}
	j := &journal{}
	f := newFixture(t, Settings{}, j, a, b, c)
	subj := &subject{output: "answer", skipped: map[string]bool{"c": true}}

	require.Equal(t, Admitted, f.s.Admit(context.Background(), func() Subject { return subj }))
	eventually(t, func() bool { return a.calls.Load() == 1 && b.calls.Load() == 1 }, "both scorers that apply run")
	eventually(t, func() bool { return f.s.Stats().Results == 2 }, "a and the skip of c are filed")
	assert.Equal(t, StateEvaluating, f.stateOf(subj))
	assert.Nil(t, subj.left(), "held while b runs")

	close(gate)
	eventually(t, func() bool { return subj.left() != nil }, "leaves with the last result")
	assert.Equal(t, []string{"a:pass", "b:pass", "c:skipped"}, labels(subj.left()))
	assert.Equal(t, StateLeft, f.stateOf(subj))
	assert.Zero(t, c.calls.Load(), "a scorer that does not apply is not called")
	assert.Equal(t, 2, f.obs.snapshot().results, "skips are not counted")
	st := f.s.Stats()
	assert.Zero(t, st.Held)
	assert.Zero(t, st.Unfinished)
	j.mu.Lock()
	assert.Equal(t, map[uint64][]string{1: {"a"}}, j.finished, "the result before the last is written; the last leaves instead")
	assert.Equal(t, []uint64{1}, j.left)
	j.mu.Unlock()
	assert.Equal(t, 1, subj.leaveCount())
}

// The store refuses items before Start, past queue_size and after
// Shutdown.
func TestAdmitRefusals(t *testing.T) {
	s := New(Settings{MaxWait: time.Hour, Capacity: 1, Workers: 1, Observer: &observer{}})
	assert.Equal(t, NotRunning, s.Admit(context.Background(), func() Subject { return &subject{} }))
	gate := make(chan struct{})
	defer close(gate)
	s.Start([]Scorer{{Name: "a", Run: &scorer{name: "a", gate: gate}}}, nil)
	assert.Equal(t, Admitted, s.Admit(context.Background(), func() Subject { return &subject{} }))
	assert.Equal(t, RejectedFull, s.Admit(context.Background(), func() Subject { return &subject{} }))
	require.NoError(t, s.Shutdown(context.Background()))
	assert.Equal(t, RejectedClosed, s.Admit(context.Background(), func() Subject { return &subject{} }))
}

// An item whose trace has no context yet waits for it: the scorers that
// read context wait, the others run at once. When the context arrives, or
// context_wait passes, the waiting scorers run.
func TestWaitForContext(t *testing.T) {
	for _, arrives := range []bool{true, false} {
		t.Run(map[bool]string{true: "arrives", false: "context_wait passes"}[arrives], func(t *testing.T) {
			reader, other := &scorer{name: waits + "reader"}, &scorer{name: "other"}
			wait := time.Hour
			if !arrives {
				wait = 20 * time.Millisecond
			}
			f := newFixture(t, Settings{ContextWait: wait}, nil, reader, other)
			subj := &subject{output: "answer", trace: pcommon.TraceID{1}}
			subj.waiting.Store(true)
			require.Equal(t, Admitted, f.s.Admit(context.Background(), func() Subject { return subj }))
			if arrives {
				eventually(t, func() bool { return other.calls.Load() == 1 }, "the scorer that does not wait runs")
				assert.Equal(t, StateWaitingForContext, f.stateOf(subj))
				assert.Equal(t, 1, f.s.Stats().WaitingForContext)
				assert.Zero(t, reader.calls.Load(), "the reader waits")

				f.s.ContextMayHaveArrived([]pcommon.TraceID{{2}})
				assert.Equal(t, StateWaitingForContext, f.stateOf(subj), "another trace's context changes nothing")
				subj.waiting.Store(false)
				f.s.ContextMayHaveArrived([]pcommon.TraceID{{1}})
			}
			eventually(t, func() bool { return subj.left() != nil }, "leaves once both ran")
			assert.Equal(t, []string{waits + "reader:pass", "other:pass"}, labels(subj.left()))
			assert.Equal(t, []bool{arrives}, f.obs.snapshot().waits)
			assert.Zero(t, f.s.Stats().WaitingForContext)
		})
	}
}

// At max_wait an item leaves with a max_wait marker for each evaluation
// not finished; the result that finishes afterwards is late.
func TestExpire(t *testing.T) {
	gate := make(chan struct{})
	slow := &scorer{name: "slow", gate: gate}
	f := newFixture(t, Settings{}, nil, &scorer{name: "quick"}, slow)
	subj := &subject{output: "answer"}
	require.Equal(t, Admitted, f.s.Admit(context.Background(), func() Subject { return subj }))
	eventually(t, func() bool { return f.s.Stats().Results == 1 && slow.calls.Load() == 1 }, "quick done, slow running")

	f.s.Expire(time.Now()) // before its max_wait: nothing happens
	assert.Equal(t, StateEvaluating, f.stateOf(subj))
	f.s.Expire(time.Now().Add(2 * time.Hour))
	require.NotNil(t, subj.left())
	assert.Equal(t, []string{"quick:pass", "slow:error:" + string(scoring.ErrorMaxWaitExceeded)}, labels(subj.left()))
	assert.Equal(t, StateLeft, f.stateOf(subj))

	close(gate)
	eventually(t, func() bool { return len(subj.late()) == 1 }, "the slow result comes late")
	assert.Equal(t, []string{"slow:pass"}, labels(subj.late()))
	assert.Equal(t, 1, subj.leaveCount(), "an item leaves once")
	assert.Zero(t, f.s.Stats().Unfinished)
}

// At shutdown every held item leaves with a shutdown marker for each
// evaluation not finished, and is counted unscored.
func TestShutdownLetsHeldItemsLeave(t *testing.T) {
	slow := &scorer{name: "slow", gate: make(chan struct{})}
	f := newFixture(t, Settings{}, nil, slow)
	subj := &subject{output: "answer"}
	require.Equal(t, Admitted, f.s.Admit(context.Background(), func() Subject { return subj }))
	eventually(t, func() bool { return slow.calls.Load() == 1 }, "running")
	require.NoError(t, f.s.Shutdown(context.Background()))
	assert.Equal(t, []string{"slow:error:" + string(scoring.ErrorShutdown)}, labels(subj.left()))
	assert.Equal(t, []string{ReasonShutdown}, f.obs.snapshot().unscored)
	assert.Empty(t, subj.late(), "a result after shutdown is dropped")
}

// An item found in storage goes back into the store with the results it
// had recorded, and only the missing evaluations run; one found after its
// max_wait is forwarded at once with a restarted marker.
func TestRecover(t *testing.T) {
	tests := []struct {
		name      string
		admitted  time.Duration // before now
		want      []string
		outcome   string
		wantCalls int32
	}{
		{name: "resumed", admitted: time.Minute, want: []string{"a:fail", "b:pass"}, outcome: "resumed", wantCalls: 1},
		{name: "forwarded", admitted: 2 * time.Hour, want: []string{"a:fail", "b:error:" + string(scoring.ErrorRestarted)}, outcome: "forwarded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := &scorer{name: "a"}, &scorer{name: "b"}
			j := &journal{}
			f := newFixture(t, Settings{}, j, a, b)
			subj := &subject{output: "answer"}
			f.s.Recover(subj, Recovered{ID: 7, Admitted: time.Now().Add(-tt.admitted), Results: []Result{
				{Scorer: "a", Result: scoring.Result{Label: scoring.LabelFail, Score: 0.9}},
			}})
			eventually(t, func() bool { return subj.left() != nil }, "leaves")
			assert.Equal(t, tt.want, labels(subj.left()))
			assert.Zero(t, a.calls.Load(), "a recorded result is not evaluated again")
			assert.Equal(t, tt.wantCalls, b.calls.Load())
			assert.Equal(t, []string{tt.outcome}, f.obs.snapshot().recovery)
			j.mu.Lock()
			assert.Equal(t, []uint64{7}, j.left, "its stored record is deleted once it left")
			j.mu.Unlock()
		})
	}
}

// goroutineScorer records the goroutine each evaluation runs on.
type goroutineScorer struct {
	mu  sync.Mutex
	ran map[string]int // goroutine id -> evaluations
}

func (*goroutineScorer) Name() string { return "a" }

func (g *goroutineScorer) Score(context.Context, scoring.Case) scoring.Result {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := strings.Cut(strings.TrimPrefix(string(buf), "goroutine "), " ")
	g.mu.Lock()
	g.ran[id]++
	g.mu.Unlock()
	return scoring.Result{Label: scoring.LabelPass}
}

// Items arriving one at a time through a store with many workers must each
// be evaluated on the worker that ran the one before, the only one whose
// stack is grown, not on the worker idle the longest; shutdown ends every
// parked worker.
func TestIdleWorkersTakeTurnsLastInFirstOut(t *testing.T) {
	const workers = 8
	sc := &goroutineScorer{ran: map[string]int{}}
	s := New(Settings{MaxWait: time.Hour, Capacity: 10, Workers: workers, Observer: &observer{}})
	s.Start([]Scorer{{Name: "a", Run: sc}}, nil)
	allParked := func() bool { return s.Stats().IdleWorkers == workers }
	const items = 20
	subjects := make([]*subject, items)
	for i := range items {
		// Every worker is parked before the next item arrives.
		eventually(t, allParked, "every worker parks")
		subjects[i] = &subject{}
		require.Equal(t, Admitted, s.Admit(context.Background(), func() Subject { return subjects[i] }))
		eventually(t, func() bool { return subjects[i].left() != nil }, "the item leaves")
	}
	sc.mu.Lock()
	assert.Len(t, sc.ran, 1, "evaluations per worker: %v", sc.ran)
	sc.mu.Unlock()
	require.NoError(t, s.Shutdown(context.Background()))
	s.Wait() // returns only if every parked worker ended
}
