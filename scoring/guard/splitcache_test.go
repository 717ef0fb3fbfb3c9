package guard

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llm-eval/llm_eval/scoring"
)

// fakeSplitter splits with fn and counts its calls.
type fakeSplitter struct {
	calls atomic.Int64
	fn    func(ctx context.Context, prompt string) (scoring.InstructionSplit, error)
}

func (f *fakeSplitter) Split(ctx context.Context, prompt string) (scoring.InstructionSplit, error) {
	f.calls.Add(1)
	return f.fn(ctx, prompt)
}

// splitsInto answers every prompt with the given instructions at the cost
// of one call.
func splitsInto(instructions ...string) *fakeSplitter {
	return &fakeSplitter{fn: func(context.Context, string) (scoring.InstructionSplit, error) {
		return scoring.InstructionSplit{Instructions: slices.Clone(instructions), Usage: scoring.Usage{LLMCalls: 1, PromptTokens: 700}}, nil
	}}
}

func newSplitCache(t *testing.T, next scoring.Splitter, cfg CacheConfig) *SplitCache {
	t.Helper()
	c, err := NewSplitCache(next, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSplitCache(t *testing.T) {
	failing := func(typ scoring.ErrorType) *fakeSplitter {
		return &fakeSplitter{fn: func(context.Context, string) (scoring.InstructionSplit, error) {
			return scoring.InstructionSplit{Usage: scoring.Usage{LLMCalls: 2}}, &scoring.Error{Type: typ, Step: scoring.StepSplit, Err: errors.New("no")}
		}}
	}
	tests := []struct {
		name      string
		next      *fakeSplitter
		prompts   []string
		wantCalls int64
		wantStats CacheStats
	}{
		{"the same prompt is split once", splitsInto("Be brief.", "Use French."), []string{"p", "p", "p"}, 1,
			CacheStats{Hits: 2, Misses: 1, Entries: 1}},
		{"another prompt is split again", splitsInto("Be brief."), []string{"p", "q", "p"}, 2,
			CacheStats{Hits: 1, Misses: 2, Entries: 2}},
		{"a prompt without instructions is kept", splitsInto(), []string{"You are Quill.", "You are Quill."}, 1,
			CacheStats{Hits: 1, Misses: 1, Entries: 1}},
		{"a parse failure is not kept", failing(scoring.ErrorJudgeParse), []string{"p", "p"}, 2,
			CacheStats{Misses: 2}},
		// Nothing found after an unusable first reply says little about
		// the prompt: it is not kept (issue 36 item 6).
		{"nothing found after a re-ask is not kept", &fakeSplitter{fn: func(context.Context, string) (scoring.InstructionSplit, error) {
			return scoring.InstructionSplit{Reasked: true, Usage: scoring.Usage{LLMCalls: 2}}, nil
		}}, []string{"p", "p"}, 2, CacheStats{Misses: 2}},
		{"instructions found after a re-ask are kept", &fakeSplitter{fn: func(context.Context, string) (scoring.InstructionSplit, error) {
			return scoring.InstructionSplit{Instructions: []string{"Be brief."}, Reasked: true, Usage: scoring.Usage{LLMCalls: 2}}, nil
		}}, []string{"p", "p"}, 1, CacheStats{Hits: 1, Misses: 1, Entries: 1}},
		{"a judge failure is not kept", failing(scoring.ErrorJudgeUnavailable), []string{"p", "p"}, 2,
			CacheStats{Misses: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newSplitCache(t, tt.next, CacheConfig{Size: 10, TTL: time.Hour})
			seen := map[string]bool{}
			for _, p := range tt.prompts {
				got, err := c.Split(t.Context(), p)
				want, wantErr := tt.next.fn(t.Context(), p)
				if !slices.Equal(got.Instructions, want.Instructions) || (err == nil) != (wantErr == nil) {
					t.Fatalf("Split(%q) = %q, %v; want %q, %v", p, got.Instructions, err, want.Instructions, wantErr)
				}
				repeat := seen[p] && wantErr == nil && !(want.Reasked && len(want.Instructions) == 0)
				if got.Cached != repeat || (got.Usage == (scoring.Usage{})) != repeat {
					t.Errorf("Split(%q): cached %v, usage %+v; want cached and free only for a repeat", p, got.Cached, got.Usage)
				}
				seen[p] = true
			}
			if n := tt.next.calls.Load(); n != tt.wantCalls {
				t.Errorf("splitter calls = %d, want %d", n, tt.wantCalls)
			}
			if st := c.Stats(); st != tt.wantStats {
				t.Errorf("stats = %+v, want %+v", st, tt.wantStats)
			}
		})
	}
}

func TestSplitCacheServesCopies(t *testing.T) {
	c := newSplitCache(t, splitsInto("Be brief."), CacheConfig{Size: 10, TTL: time.Hour})
	first, _ := c.Split(t.Context(), "p")
	first.Instructions[0] = "changed by the caller"
	hit, _ := c.Split(t.Context(), "p")
	hit.Instructions[0] = "changed again"
	if again, _ := c.Split(t.Context(), "p"); again.Instructions[0] != "Be brief." {
		t.Fatalf("stored split changed to %q", again.Instructions[0])
	}
}

func TestSplitCacheBounds(t *testing.T) {
	clk := newGuardClock()
	next := splitsInto("Be brief.")
	c := newSplitCache(t, next, CacheConfig{Size: 2, TTL: time.Minute, Now: clk.Now})
	for _, p := range []string{"a", "b", "c"} { // c evicts a
		_, _ = c.Split(t.Context(), p)
	}
	if _, _ = c.Split(t.Context(), "a"); next.calls.Load() != 4 {
		t.Fatalf("calls = %d, want a split again after its eviction", next.calls.Load())
	}
	clk.Advance(time.Minute)
	if s, _ := c.Split(t.Context(), "a"); s.Cached {
		t.Fatal("split served after its TTL")
	}
	if st := c.Stats(); st.Evictions != 2 || st.Expirations != 1 || st.Entries > 2 {
		t.Fatalf("stats = %+v, want 2 evictions, 1 expiration, at most 2 entries", st)
	}
}

// splitFlight starts a leader split that blocks in the splitter and n
// followers for the same prompt that wait for it.
type splitFlight struct {
	cache   *SplitCache
	next    *fakeSplitter
	release chan struct{}
	results chan splitAnswer
}

func newSplitFlight(t *testing.T, leaderCtx context.Context, followers int, answer func(ctx context.Context) (scoring.InstructionSplit, error)) *splitFlight {
	t.Helper()
	f := &splitFlight{release: make(chan struct{}), results: make(chan splitAnswer, followers+1)}
	entered := make(chan struct{}, followers+1)
	f.next = &fakeSplitter{fn: func(ctx context.Context, _ string) (scoring.InstructionSplit, error) {
		entered <- struct{}{}
		<-f.release
		return answer(ctx)
	}}
	f.cache = newSplitCache(t, f.next, CacheConfig{Size: 10, TTL: time.Hour})
	var waiting sync.WaitGroup
	waiting.Add(followers)
	f.cache.m.onWait = waiting.Done
	split := func(ctx context.Context) {
		s, err := f.cache.Split(ctx, "Answer in French. Be brief.")
		f.results <- splitAnswer{split: s, err: err}
	}
	go split(leaderCtx)
	<-entered
	for range followers {
		go split(context.Background())
	}
	waiting.Wait()
	return f
}

func TestSplitCacheSharesCallsInFlight(t *testing.T) {
	const followers = 5
	f := newSplitFlight(t, context.Background(), followers, func(context.Context) (scoring.InstructionSplit, error) {
		return scoring.InstructionSplit{Instructions: []string{"Answer in French.", "Be brief."}, Usage: scoring.Usage{LLMCalls: 1}}, nil
	})
	close(f.release)
	paid, cached := 0, 0
	for range followers + 1 {
		a := <-f.results
		if a.err != nil || len(a.split.Instructions) != 2 {
			t.Fatalf("got %+v, want the leader's split", a)
		}
		paid += a.split.Usage.LLMCalls
		if a.split.Cached {
			cached++
		}
	}
	if f.next.calls.Load() != 1 || paid != 1 || cached != followers {
		t.Fatalf("splitter calls %d, calls paid %d, cached %d; want 1, 1, %d", f.next.calls.Load(), paid, cached, followers)
	}
	if st := f.cache.Stats(); st.Misses != 1 || st.Coalesced != followers || st.Entries != 1 {
		t.Fatalf("stats = %+v", st)
	}
}

// A failure is shared with the calls waiting at the time, never stored.
func TestSplitCacheSharesFailureWithoutStoringIt(t *testing.T) {
	f := newSplitFlight(t, context.Background(), 2, func(context.Context) (scoring.InstructionSplit, error) {
		return scoring.InstructionSplit{Usage: scoring.Usage{LLMCalls: 2}}, &scoring.Error{Type: scoring.ErrorJudgeParse, Step: scoring.StepSplit, Err: errors.New("garbled")}
	})
	close(f.release)
	for range 3 {
		if a := <-f.results; guardErrType(a.err) != scoring.ErrorJudgeParse {
			t.Fatalf("got %+v, want the leader's parse error", a)
		}
	}
	if st := f.cache.Stats(); st.Entries != 0 || st.Coalesced != 2 {
		t.Fatalf("stats = %+v, want nothing stored, 2 coalesced", st)
	}
}

// When the leader's own context ends, a waiting call splits for itself.
func TestSplitCacheFollowerRetriesWhenLeaderGivesUp(t *testing.T) {
	leaderCtx, cancel := context.WithCancel(t.Context())
	f := newSplitFlight(t, leaderCtx, 1, func(ctx context.Context) (scoring.InstructionSplit, error) {
		if err := ctx.Err(); err != nil {
			return scoring.InstructionSplit{}, &scoring.Error{Type: scoring.ErrorCanceled, Step: scoring.StepSplit, Err: err}
		}
		return scoring.InstructionSplit{Instructions: []string{"Be brief."}}, nil
	})
	cancel()
	go func() {
		f.release <- struct{}{} // the leader returns canceled
		f.release <- struct{}{} // the follower, now leading, splits
	}()
	var ok, canceled int
	for range 2 {
		a := <-f.results
		switch {
		case a.err == nil && len(a.split.Instructions) == 1 && !a.split.Cached:
			ok++
		case guardErrType(a.err) == scoring.ErrorCanceled:
			canceled++
		}
	}
	if ok != 1 || canceled != 1 || f.next.calls.Load() != 2 {
		t.Fatalf("%d split, %d canceled, %d calls; want 1, 1, 2", ok, canceled, f.next.calls.Load())
	}
}

func TestSplitCacheFollowerContextEnds(t *testing.T) {
	release, entered := make(chan struct{}), make(chan struct{})
	next := &fakeSplitter{fn: func(context.Context, string) (scoring.InstructionSplit, error) {
		close(entered)
		<-release
		return scoring.InstructionSplit{Instructions: []string{"Be brief."}}, nil
	}}
	c := newSplitCache(t, next, CacheConfig{Size: 10, TTL: time.Hour})
	leader := make(chan error)
	go func() { _, err := c.Split(context.Background(), "p"); leader <- err }()
	<-entered
	ctx, cancel := context.WithCancel(t.Context())
	c.m.onWait = cancel
	_, err := c.Split(ctx, "p")
	var se *scoring.Error
	if !errors.As(err, &se) || se.Type != scoring.ErrorCanceled || se.Step != scoring.StepSplit || !se.NotSent {
		t.Fatalf("follower error = %v, want canceled in step split, not sent", err)
	}
	close(release)
	if err := <-leader; err != nil {
		t.Fatal(err)
	}
	// The follower got no answer, so it is neither a hit nor coalesced.
	if got, want := c.Stats(), (CacheStats{Misses: 1, Entries: 1}); got != want {
		t.Errorf("stats = %+v, want %+v", got, want)
	}
}

func TestNewSplitCacheRejectsBadConfig(t *testing.T) {
	if _, err := NewSplitCache(splitsInto(), CacheConfig{TTL: time.Minute}); err == nil {
		t.Fatal("size 0 accepted")
	}
}
