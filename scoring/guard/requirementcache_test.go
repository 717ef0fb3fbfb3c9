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

// fakeLister lists requirements with fn and counts its calls.
type fakeLister struct {
	calls atomic.Int64
	fn    func(ctx context.Context, request string) (scoring.TaskRequirements, error)
}

func (f *fakeLister) ListRequirements(ctx context.Context, req scoring.TaskRequest) (scoring.TaskRequirements, error) {
	f.calls.Add(1)
	return f.fn(ctx, req.Request)
}

// listsInto answers every request with the given requirements at the cost
// of one call.
func listsInto(requirements ...string) *fakeLister {
	return &fakeLister{fn: func(_ context.Context, request string) (scoring.TaskRequirements, error) {
		return scoring.TaskRequirements{Task: request, Requirements: slices.Clone(requirements), Usage: scoring.Usage{LLMCalls: 1, PromptTokens: 300}}, nil
	}}
}

func TestRequirementCache(t *testing.T) {
	failing := &fakeLister{fn: func(context.Context, string) (scoring.TaskRequirements, error) {
		return scoring.TaskRequirements{Usage: scoring.Usage{LLMCalls: 2}}, &scoring.Error{Type: scoring.ErrorJudgeParse, Step: scoring.StepPreprocess, Err: errors.New("no")}
	}}
	tests := []struct {
		name      string
		next      *fakeLister
		requests  []string
		wantCalls int64
		wantStats CacheStats
	}{
		{"the same request is listed once", listsInto("a table is booked", "for two"), []string{"r", "r", "r"}, 1, CacheStats{Hits: 2, Misses: 1, Entries: 1}},
		{"another request is listed again", listsInto("x"), []string{"r", "s", "r"}, 2, CacheStats{Hits: 1, Misses: 2, Entries: 2}},
		// A split that yields no requirement is not kept (issue 36 item
		// 3): the judge may have misread the request, and a kept empty
		// list would make every run of it not scorable for the TTL.
		{"a request asking for nothing is not kept", listsInto(), []string{"hi", "hi"}, 2, CacheStats{Misses: 2}},
		{"a failure is not kept", failing, []string{"r", "r"}, 2, CacheStats{Misses: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewRequirementCache(tt.next, CacheConfig{Size: 10, TTL: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, r := range tt.requests {
				got, err := c.ListRequirements(t.Context(), scoring.TaskRequest{Request: r})
				want, wantErr := tt.next.fn(t.Context(), r) // the answer, without counting a call
				if !slices.Equal(got.Requirements, want.Requirements) || got.Task != want.Task || (err == nil) != (wantErr == nil) {
					t.Fatalf("ListRequirements(%q) = %+v, %v; want %+v, %v", r, got, err, want, wantErr)
				}
				repeat := seen[r] && wantErr == nil && len(want.Requirements) > 0
				if got.Cached != repeat || (got.Usage == (scoring.Usage{})) != repeat {
					t.Errorf("ListRequirements(%q): cached %v, usage %+v; want cached and free only for a repeat", r, got.Cached, got.Usage)
				}
				seen[r] = true
				if len(got.Requirements) > 0 {
					got.Requirements[0] = "changed by the caller"
				}
			}
			if n := tt.next.calls.Load(); n != tt.wantCalls {
				t.Errorf("lister calls = %d, want %d", n, tt.wantCalls)
			}
			if s := c.Stats(); s != tt.wantStats {
				t.Errorf("stats = %+v, want %+v", s, tt.wantStats)
			}
		})
	}
}

// TestRequirementCacheSharesCallsInFlight checks that identical requests
// in flight make one call, and that the scorer measures every run of a
// request against the one stored list.
func TestRequirementCacheSharesCallsInFlight(t *testing.T) {
	release := make(chan struct{})
	next := &fakeLister{fn: func(context.Context, string) (scoring.TaskRequirements, error) {
		<-release
		return scoring.TaskRequirements{Requirements: []string{"done"}, Usage: scoring.Usage{LLMCalls: 1}}, nil
	}}
	c, err := NewRequirementCache(next, CacheConfig{Size: 10, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var cached atomic.Int64
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := c.ListRequirements(context.Background(), scoring.TaskRequest{Request: "same request"})
			if err != nil || !slices.Equal(got.Requirements, []string{"done"}) {
				t.Errorf("got %+v, %v", got, err)
			}
			if got.Cached {
				cached.Add(1)
			}
		}()
	}
	time.Sleep(10 * time.Millisecond) // let the callers line up; correctness does not depend on it
	close(release)
	wg.Wait()
	if n := next.calls.Load(); n < 1 || cached.Load() != 4-n {
		t.Errorf("lister calls = %d with %d cached answers; want every answer not computed marked cached", n, cached.Load())
	}
}

// TestRequirementCacheKeysTheWholeConversation checks the requirements
// are cached by the whole request: the same last message in another
// conversation is another request, the same conversation is one
// (issue 36 item 3).
func TestRequirementCacheKeysTheWholeConversation(t *testing.T) {
	next := listsInto("the flight is booked")
	c, err := NewRequirementCache(next, CacheConfig{Size: 10, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	lisbon := []scoring.Turn{{Role: "user", Content: "Find a flight to Lisbon."}, {Role: "assistant", Content: "TAP at 9:40. Book it?"}}
	oslo := []scoring.Turn{{Role: "user", Content: "Find a flight to Oslo."}, {Role: "assistant", Content: "SAS at 7:10. Book it?"}}
	// Texts that only split differently between turns are different too.
	split := []scoring.Turn{{Role: "user", Content: "Find a flight to Lisbon.TAP at 9:40."}, {Role: "assistant", Content: " Book it?"}}
	for _, req := range []scoring.TaskRequest{
		{History: lisbon, Request: "Yes, go ahead."},
		{History: oslo, Request: "Yes, go ahead."},
		{History: split, Request: "Yes, go ahead."},
		{Request: "Yes, go ahead."},
		{History: lisbon, Request: "Yes, go ahead."},
	} {
		if _, err := c.ListRequirements(t.Context(), req); err != nil {
			t.Fatal(err)
		}
	}
	if n := next.calls.Load(); n != 4 {
		t.Errorf("lister calls = %d, want 4: one per distinct conversation", n)
	}
}
