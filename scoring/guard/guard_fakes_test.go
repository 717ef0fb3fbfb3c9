package guard

import (
	"context"
	"sync"
	"time"

	"github.com/llm-eval/llm_eval/scoring"
)

// guardClock is a fake clock for the breaker, limiter and cache tests.
// Time moves only when a test calls Advance; goroutines waiting in After
// can be counted so that tests synchronise without sleeping.
type guardClock struct {
	mu     sync.Mutex
	cond   *sync.Cond
	now    time.Time
	timers []guardTimer
	marks  int // test-defined events, see mark
}

type guardTimer struct {
	at time.Time
	ch chan time.Time
}

func newGuardClock() *guardClock {
	c := &guardClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c.cond = sync.NewCond(&c.mu)
	return c
}

func (c *guardClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *guardClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.timers = append(c.timers, guardTimer{at: c.now.Add(d), ch: ch})
	c.cond.Broadcast()
	return ch
}

// Advance moves time on and fires every timer that is due.
func (c *guardClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.timers[:0]
	for _, t := range c.timers {
		if t.at.After(c.now) {
			kept = append(kept, t)
			continue
		}
		t.ch <- c.now
	}
	c.timers = kept
	c.cond.Broadcast()
}

// AdvanceToNextTimer moves time to the earliest pending timer.
func (c *guardClock) AdvanceToNextTimer() {
	c.mu.Lock()
	next := c.timers[0].at
	for _, t := range c.timers[1:] {
		if t.at.Before(next) {
			next = t.at
		}
	}
	d := next.Sub(c.now)
	c.mu.Unlock()
	c.Advance(d)
}

// mark records one test event (a finished call, a waiting follower).
func (c *guardClock) mark() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.marks++
	c.cond.Broadcast()
}

func (c *guardClock) marksNow() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.marks
}

// waitUntil blocks until cond, given pending timers and marks, holds.
func (c *guardClock) waitUntil(cond func(timers, marks int) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for !cond(len(c.timers), c.marks) {
		c.cond.Wait()
	}
}

// guardJudge is a Judge whose replies a test scripts.
type guardJudge struct {
	mu    sync.Mutex
	calls int
	reply func(ctx context.Context, call int, req scoring.Request) (scoring.Response, error)
}

func (j *guardJudge) Complete(ctx context.Context, req scoring.Request) (scoring.Response, error) {
	j.mu.Lock()
	j.calls++
	n := j.calls
	j.mu.Unlock()
	if j.reply == nil {
		return scoring.Response{Content: "{}"}, nil
	}
	return j.reply(ctx, n, req)
}

func (j *guardJudge) Calls() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.calls
}

// guardScorer is a Scorer whose results a test scripts.
type guardScorer struct {
	name  string
	mu    sync.Mutex
	calls int
	score func(ctx context.Context, c scoring.Case) scoring.Result
}

func (s *guardScorer) Name() string { return s.name }

func (s *guardScorer) Score(ctx context.Context, c scoring.Case) scoring.Result {
	s.mu.Lock()
	s.calls++
	s.mu.Unlock()
	if s.score == nil {
		return scoring.Result{Scorer: s.name, Score: 0.25, Label: scoring.LabelPass, Usage: scoring.Usage{LLMCalls: 2, PromptTokens: 100}}
	}
	return s.score(ctx, c)
}

func (s *guardScorer) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}
