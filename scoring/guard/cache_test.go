package guard

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/llm-eval/llm_eval/scoring"
)

func cacheTestCase() scoring.Case {
	return scoring.Case{
		Input:        "What is the capital of France?",
		Output:       "Paris.",
		Context:      []string{"France's capital is Paris."},
		Instructions: []string{"Answer briefly"},
		Trajectory: &scoring.Trajectory{Steps: []scoring.Step{
			{Kind: scoring.StepGeneration, ToolCalls: []scoring.ToolCall{{ID: "c1", Name: "lookup", Arguments: `{"country":"France"}`}}},
			{Kind: scoring.StepTool, Tool: "lookup", CallID: "c1", Result: "Paris"},
			{Kind: scoring.StepOmitted, Count: 3},
			{Kind: scoring.StepGeneration, Output: "Paris."},
		}},
		Turns: []scoring.Turn{
			{Role: scoring.RoleUser, Content: "Hi, I'm in Lyon."},
			{Role: scoring.RoleOmitted, Count: 2},
			{Role: scoring.RoleAssistant, Content: "Hello!"},
		},
		Metadata: map[string]string{"trace_id": "a"},
	}
}

func newGuardCache(t *testing.T, cfg CacheConfig) *Cache {
	t.Helper()
	c, err := NewCache(cfg)
	if err != nil {
		t.Fatalf("NewCache: %v", err)
	}
	return c
}

func TestNewCacheRejectsBadConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  CacheConfig
		want string
	}{
		{CacheConfig{TTL: time.Minute}, "cache size must be greater than 0"},
		{CacheConfig{Size: -1, TTL: time.Minute}, "cache size must be greater than 0"},
		{CacheConfig{Size: 10}, "cache ttl must be greater than 0"},
		{CacheConfig{}, "cache size must be greater than 0\ncache ttl must be greater than 0"},
	} {
		c, err := NewCache(tc.cfg)
		if err == nil || err.Error() != tc.want || c != nil {
			t.Errorf("NewCache(%+v) = %v, %v; want error %q", tc.cfg, c, err, tc.want)
		}
	}
}

func TestCacheHitServesStoredResultForFree(t *testing.T) {
	c := newGuardCache(t, CacheConfig{Size: 10, TTL: time.Hour})
	s := &guardScorer{name: scoring.Bias}
	cached := c.Wrap(s, "gpt-4o-mini", "threshold=0.5")
	if cached.Name() != scoring.Bias {
		t.Fatalf("Name() = %q, want %q", cached.Name(), scoring.Bias)
	}
	first := cached.Score(t.Context(), cacheTestCase())
	if first.Usage.LLMCalls != 2 {
		t.Fatalf("miss usage = %+v, want the scorer's", first.Usage)
	}
	hit := cached.Score(t.Context(), cacheTestCase())
	if s.Calls() != 1 {
		t.Fatalf("scorer calls = %d, want 1", s.Calls())
	}
	if hit.Usage != (scoring.Usage{}) {
		t.Fatalf("hit usage = %+v, want zero", hit.Usage)
	}
	if hit.Score != first.Score || hit.Label != first.Label || hit.Scorer != first.Scorer {
		t.Fatalf("hit = %+v, want the stored %+v", hit, first)
	}
	if st := c.Stats(); st.Hits != 1 || st.Misses != 1 || st.Entries != 1 {
		t.Fatalf("stats = %+v, want 1 hit, 1 miss, 1 entry", st)
	}
}

func TestCacheKey(t *testing.T) {
	base := cacheTestCase()
	for _, tc := range []struct {
		name    string
		scorer  string
		model   string
		options string
		edit    func(*scoring.Case)
		wantHit bool
	}{
		{name: "identical", wantHit: true},
		{name: "metadata is not sent to the judge", edit: func(c *scoring.Case) { c.Metadata = map[string]string{"trace_id": "b"} }, wantHit: true},
		{name: "input", edit: func(c *scoring.Case) { c.Input += "?" }},
		{name: "output", edit: func(c *scoring.Case) { c.Output = "Lyon." }},
		{name: "context", edit: func(c *scoring.Case) { c.Context = append(c.Context, "more") }},
		{name: "context split differently", edit: func(c *scoring.Case) { c.Context = []string{"France's capital ", "is Paris."} }},
		{name: "context moved to instructions", edit: func(c *scoring.Case) {
			c.Context, c.Instructions = nil, append(c.Instructions, c.Context...)
		}},
		{name: "instructions", edit: func(c *scoring.Case) { c.Instructions = []string{"Answer in French"} }},
		{name: "no trajectory", edit: func(c *scoring.Case) { c.Trajectory = nil }},
		{name: "trajectory without steps", edit: func(c *scoring.Case) { c.Trajectory = &scoring.Trajectory{} }},
		{name: "tool result", edit: func(c *scoring.Case) { c.Trajectory.Steps[1].Result = "Lyon" }},
		{name: "tool result became an error", edit: func(c *scoring.Case) {
			c.Trajectory.Steps[1].Result, c.Trajectory.Steps[1].Error = "", "Paris"
		}},
		{name: "tool call arguments", edit: func(c *scoring.Case) { c.Trajectory.Steps[0].ToolCalls[0].Arguments = `{"country":"Spain"}` }},
		{name: "tool call id", edit: func(c *scoring.Case) { c.Trajectory.Steps[0].ToolCalls[0].ID = "c2" }},
		{name: "tool name", edit: func(c *scoring.Case) { c.Trajectory.Steps[1].Tool = "search" }},
		{name: "omitted count", edit: func(c *scoring.Case) { c.Trajectory.Steps[2].Count = 4 }},
		{name: "step output", edit: func(c *scoring.Case) { c.Trajectory.Steps[3].Output = "Lyon." }},
		{name: "a tool the agent had", edit: func(c *scoring.Case) { c.Trajectory.Tools = []scoring.ToolDefinition{{Name: "search"}} }},
		{name: "steps reordered", edit: func(c *scoring.Case) {
			st := c.Trajectory.Steps
			st[2], st[3] = st[3], st[2]
		}},
		{name: "no turns", edit: func(c *scoring.Case) { c.Turns = nil }},
		{name: "turn content", edit: func(c *scoring.Case) { c.Turns[0].Content = "Hi, I'm in Paris." }},
		{name: "turn role", edit: func(c *scoring.Case) { c.Turns[2].Role = scoring.RoleUser }},
		{name: "omitted turns", edit: func(c *scoring.Case) { c.Turns[1].Count = 3 }},
		{name: "a turn more", edit: func(c *scoring.Case) { c.Turns = append(c.Turns, scoring.Turn{Role: scoring.RoleUser, Content: "ok"}) }},
		{name: "the last input moved into the turns", edit: func(c *scoring.Case) {
			c.Turns = append(c.Turns, scoring.Turn{Role: scoring.RoleUser, Content: c.Input})
			c.Input = ""
		}},
		{name: "scorer", scorer: scoring.Hallucination},
		{name: "model", model: "gpt-4o"},
		{name: "options", options: "threshold=0.7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newGuardCache(t, CacheConfig{Size: 10, TTL: time.Hour})
			s := &guardScorer{name: scoring.Bias}
			c.Wrap(s, "gpt-4o-mini", "threshold=0.5").Score(t.Context(), base)

			name, model, options := scoring.Bias, "gpt-4o-mini", "threshold=0.5"
			if tc.scorer != "" {
				name = tc.scorer
			}
			if tc.model != "" {
				model = tc.model
			}
			if tc.options != "" {
				options = tc.options
			}
			other := &guardScorer{name: name}
			cs := cacheTestCase()
			if tc.edit != nil {
				tc.edit(&cs)
			}
			c.Wrap(other, model, options).Score(t.Context(), cs)
			if hit := other.Calls() == 0; hit != tc.wantHit {
				t.Fatalf("hit = %v, want %v", hit, tc.wantHit)
			}
		})
	}
}

func TestCacheStoresOnlyVerdicts(t *testing.T) {
	for _, tc := range []struct {
		result scoring.Result
		stored bool
	}{
		{scoring.Result{Label: scoring.LabelPass, Score: 0}, true},
		{scoring.Result{Label: scoring.LabelFail, Score: 1}, true},
		{scoring.Result{Label: scoring.LabelNotScorable, Reason: "no context"}, true},
		{scoring.Result{Label: scoring.LabelError, Err: guardTypedErr(scoring.ErrorJudgeUnavailable)}, false},
		{scoring.Result{Label: scoring.LabelError, Err: guardTypedErr(scoring.ErrorJudgeParse)}, false},
		// A verdict whose reason call failed: the next identical case gets
		// another chance at the judge's reason.
		{scoring.Result{Label: scoring.LabelPass, Reason: "summary", ReasonErr: guardTypedErr(scoring.ErrorJudgeRateLimited)}, false},
	} {
		t.Run(string(tc.result.Label), func(t *testing.T) {
			c := newGuardCache(t, CacheConfig{Size: 10, TTL: time.Hour})
			s := &guardScorer{name: scoring.Bias, score: func(context.Context, scoring.Case) scoring.Result { return tc.result }}
			cached := c.Wrap(s, "m", "")
			cached.Score(t.Context(), cacheTestCase())
			r := cached.Score(t.Context(), cacheTestCase())
			if stored := s.Calls() == 1; stored != tc.stored {
				t.Fatalf("stored = %v, want %v", stored, tc.stored)
			}
			if r.Label != tc.result.Label {
				t.Fatalf("label = %s, want %s", r.Label, tc.result.Label)
			}
		})
	}
}

func TestCacheTTL(t *testing.T) {
	clk := newGuardClock()
	c := newGuardCache(t, CacheConfig{Size: 10, TTL: time.Minute, Now: clk.Now})
	s := &guardScorer{name: scoring.Bias}
	cached := c.Wrap(s, "m", "")
	cached.Score(t.Context(), cacheTestCase())
	clk.Advance(time.Minute - time.Nanosecond)
	cached.Score(t.Context(), cacheTestCase())
	if s.Calls() != 1 {
		t.Fatalf("scorer calls before TTL = %d, want 1", s.Calls())
	}
	clk.Advance(time.Nanosecond)
	cached.Score(t.Context(), cacheTestCase())
	if s.Calls() != 2 {
		t.Fatalf("scorer calls after TTL = %d, want 2", s.Calls())
	}
	if st := c.Stats(); st.Expirations != 1 || st.Hits != 1 || st.Misses != 2 || st.Entries != 1 {
		t.Fatalf("stats = %+v, want 1 expiration, 1 hit, 2 misses, 1 entry", st)
	}
}

func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := newGuardCache(t, CacheConfig{Size: 2, TTL: time.Hour})
	s := &guardScorer{name: scoring.Bias}
	cached := c.Wrap(s, "m", "")
	score := func(input string) (hit bool) {
		before := s.Calls()
		cached.Score(t.Context(), scoring.Case{Input: input, Output: "o"})
		return s.Calls() == before
	}
	score("a")
	score("b")
	if !score("a") { // a is now more recent than b
		t.Fatal("a was not cached")
	}
	score("c") // evicts b
	if !score("a") {
		t.Fatal("a was evicted, want b evicted")
	}
	if !score("c") {
		t.Fatal("c was not cached")
	}
	if score("b") {
		t.Fatal("b is still cached, want it evicted")
	}
	if st := c.Stats(); st.Evictions != 2 || st.Entries != 2 {
		t.Fatalf("stats = %+v, want 2 evictions (b, then a), 2 entries", st)
	}
}

// coalesceFixture starts a leader call that blocks in the scorer and n
// followers for the same case that wait for it.
type coalesceFixture struct {
	cache   *Cache
	scorer  *guardScorer
	release chan struct{}
	results chan scoring.Result
}

func newCoalesceFixture(t *testing.T, leaderCtx context.Context, followers int, score func(ctx context.Context) scoring.Result) *coalesceFixture {
	t.Helper()
	f := &coalesceFixture{release: make(chan struct{}), results: make(chan scoring.Result, followers+1)}
	f.cache = newGuardCache(t, CacheConfig{Size: 10, TTL: time.Hour})
	var waiting sync.WaitGroup
	waiting.Add(followers)
	f.cache.m.onWait = waiting.Done
	entered := make(chan struct{}, followers+1)
	f.scorer = &guardScorer{name: scoring.Bias, score: func(ctx context.Context, _ scoring.Case) scoring.Result {
		entered <- struct{}{}
		<-f.release
		return score(ctx)
	}}
	cached := f.cache.Wrap(f.scorer, "m", "")
	go func() { f.results <- cached.Score(leaderCtx, cacheTestCase()) }()
	<-entered
	for range followers {
		go func() { f.results <- cached.Score(context.Background(), cacheTestCase()) }()
	}
	waiting.Wait()
	return f
}

func TestCacheCoalescesIdenticalCallsInFlight(t *testing.T) {
	const followers = 7
	f := newCoalesceFixture(t, context.Background(), followers, func(context.Context) scoring.Result {
		return scoring.Result{Scorer: scoring.Bias, Score: 0.5, Label: scoring.LabelFail, Usage: scoring.Usage{LLMCalls: 3}}
	})
	close(f.release)
	paid := 0
	for range followers + 1 {
		r := <-f.results
		if r.Label != scoring.LabelFail || r.Score != 0.5 {
			t.Fatalf("result = %+v, want the leader's", r)
		}
		paid += r.Usage.LLMCalls
	}
	if f.scorer.Calls() != 1 {
		t.Fatalf("scorer calls = %d, want 1", f.scorer.Calls())
	}
	if paid != 3 {
		t.Fatalf("LLM calls reported in total = %d, want 3 (only the leader's)", paid)
	}
	if st := f.cache.Stats(); st.Misses != 1 || st.Coalesced != followers || st.Hits != 0 {
		t.Fatalf("stats = %+v, want 1 miss, %d coalesced", st, followers)
	}
}

// Errors are shared with calls waiting at the time but never stored.
func TestCacheCoalescedErrorIsNotStored(t *testing.T) {
	f := newCoalesceFixture(t, context.Background(), 2, func(context.Context) scoring.Result {
		return scoring.Result{Scorer: scoring.Bias, Label: scoring.LabelError, Err: guardTypedErr(scoring.ErrorJudgeUnavailable)}
	})
	close(f.release)
	for range 3 {
		if r := <-f.results; guardErrType(r.Err) != scoring.ErrorJudgeUnavailable {
			t.Fatalf("result = %+v, want the leader's error", r)
		}
	}
	if st := f.cache.Stats(); st.Entries != 0 || st.Coalesced != 2 {
		t.Fatalf("stats = %+v, want nothing stored, 2 coalesced", st)
	}
}

// When the leader's own context ends, its error says nothing about the
// case: a waiting call scores the case itself.
func TestCacheFollowerRetriesWhenLeaderGivesUp(t *testing.T) {
	leaderCtx, cancel := context.WithCancel(t.Context())
	f := newCoalesceFixture(t, leaderCtx, 1, func(ctx context.Context) scoring.Result {
		if err := ctx.Err(); err != nil {
			return scoring.Result{Scorer: scoring.Bias, Label: scoring.LabelError, Err: &scoring.Error{Type: scoring.ErrorCanceled, Err: err}}
		}
		return scoring.Result{Scorer: scoring.Bias, Label: scoring.LabelPass}
	})
	cancel()
	go func() {
		f.release <- struct{}{} // the leader returns canceled
		f.release <- struct{}{} // the follower, now leading, scores
	}()
	labels := map[scoring.Label]int{}
	for range 2 {
		labels[(<-f.results).Label]++
	}
	if labels[scoring.LabelError] != 1 || labels[scoring.LabelPass] != 1 {
		t.Fatalf("labels = %v, want one error (leader) and one pass (follower)", labels)
	}
	if st := f.cache.Stats(); st.Misses != 2 || st.Coalesced != 0 || st.Entries != 1 {
		t.Fatalf("stats = %+v, want 2 misses, 1 entry", st)
	}
}

func TestCacheFollowerContextEnds(t *testing.T) {
	c := newGuardCache(t, CacheConfig{Size: 10, TTL: time.Hour})
	release := make(chan struct{})
	entered := make(chan struct{})
	s := &guardScorer{name: scoring.Bias, score: func(context.Context, scoring.Case) scoring.Result {
		close(entered)
		<-release
		return scoring.Result{Scorer: scoring.Bias, Label: scoring.LabelPass}
	}}
	cached := c.Wrap(s, "m", "")
	leader := make(chan scoring.Result)
	go func() { leader <- cached.Score(context.Background(), cacheTestCase()) }()
	<-entered

	ctx, cancel := context.WithCancel(t.Context())
	c.m.onWait = cancel // the follower's context ends as soon as it waits
	r := cached.Score(ctx, cacheTestCase())
	if r.Label != scoring.LabelError || guardErrType(r.Err) != scoring.ErrorCanceled || !errors.Is(r.Err, context.Canceled) {
		t.Fatalf("follower result = %+v, want a canceled error", r)
	}
	if r.Scorer != scoring.Bias {
		t.Fatalf("follower result scorer = %q, want %q", r.Scorer, scoring.Bias)
	}
	close(release)
	if r := <-leader; r.Label != scoring.LabelPass {
		t.Fatalf("leader result = %+v", r)
	}
}

func TestCachePanickingScorerDoesNotStrandWaiters(t *testing.T) {
	c := newGuardCache(t, CacheConfig{Size: 10, TTL: time.Hour})
	s := &guardScorer{name: scoring.Bias, score: func(context.Context, scoring.Case) scoring.Result { panic("boom") }}
	cached := c.Wrap(s, "m", "")
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("panic was swallowed")
			}
		}()
		cached.Score(t.Context(), cacheTestCase())
	}()
	// The in-flight entry is gone: the next call scores rather than waits.
	s.score = func(context.Context, scoring.Case) scoring.Result { return scoring.Result{Label: scoring.LabelPass} }
	if r := cached.Score(t.Context(), cacheTestCase()); r.Label != scoring.LabelPass {
		t.Fatalf("result = %+v", r)
	}
}

func TestCacheConcurrentUse(t *testing.T) {
	clk := newGuardClock()
	c := newGuardCache(t, CacheConfig{Size: 8, TTL: time.Minute, Now: clk.Now})
	s := &guardScorer{name: scoring.Bias}
	cached := c.Wrap(s, "m", "")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				cached.Score(context.Background(), scoring.Case{Input: fmt.Sprint((g + i) % 20), Output: "o"})
				if i%50 == 0 {
					clk.Advance(10 * time.Second)
				}
			}
		})
	}
	wg.Wait()
	st := c.Stats()
	if st.Entries > 8 {
		t.Fatalf("entries = %d, want <= 8", st.Entries)
	}
	if total := st.Hits + st.Misses + st.Coalesced; total != 8*200 {
		t.Fatalf("hits+misses+coalesced = %d, want %d", total, 8*200)
	}
	if uint64(s.Calls()) != st.Misses {
		t.Fatalf("scorer calls = %d, misses = %d", s.Calls(), st.Misses)
	}
}
