package guard

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"slices"

	"github.com/llm-eval/llm_eval/scoring"
)

// RequirementCache keeps the task_completion requirements of requests by
// the hash of the whole request, as SplitCache keeps instruction splits:
// the request and the conversation before it, so the same "Yes, go ahead"
// in two conversations is two requests. An agent's requests repeat (the
// same question from many users, a scheduled job), so with it a request is
// split into requirements by the judge once per TTL, every run of it is
// measured against the same list, and identical requests in flight share
// one judge call. Only answers that found requirements are stored: a
// failure, or a split that found none (the judge may have misread the
// request), is asked again next time. An answer from the cache, or shared
// with an identical call in flight, has Cached set and a zero Usage.
type RequirementCache struct {
	next scoring.RequirementLister
	m    *memo[requirementAnswer]
}

var _ scoring.RequirementLister = (*RequirementCache)(nil)

// requirementAnswer is what a lister call returned, kept for waiting calls.
type requirementAnswer struct {
	task scoring.TaskRequirements
	err  error
}

// NewRequirementCache returns next with its answers cached. next must
// decide a request's requirements from the request and its conversation
// alone.
func NewRequirementCache(next scoring.RequirementLister, cfg CacheConfig) (*RequirementCache, error) {
	m, err := newMemo[requirementAnswer](cfg)
	if err != nil {
		return nil, err
	}
	return &RequirementCache{next: next, m: m}, nil
}

// Stats returns the cache's counters.
func (c *RequirementCache) Stats() CacheStats { return c.m.Stats() }

// ListRequirements returns the requirements of req: stored, shared with an
// identical call in flight, or asked of next.
func (c *RequirementCache) ListRequirements(ctx context.Context, req scoring.TaskRequest) (scoring.TaskRequirements, error) {
	a, how, err := c.m.get(ctx, requestKey(req), func() (requirementAnswer, bool, bool) {
		t, err := c.next.ListRequirements(ctx, req)
		// A failure after the caller's own context ended says nothing
		// about the request: a waiting call asks itself.
		return requirementAnswer{task: t, err: err}, err == nil && len(t.Requirements) > 0, err != nil && ctx.Err() != nil
	})
	if err != nil { // this call's context ended while it waited: no call made
		ce := guardContextError(err)
		ce.Step = scoring.StepPreprocess
		return scoring.TaskRequirements{Cached: true}, ce
	}
	t := a.task
	t.Requirements = slices.Clone(t.Requirements) // the stored one is shared
	if how != memoComputed {
		t.Usage, t.Cached = scoring.Usage{}, true
	}
	return t, a.err
}

// requestKey hashes the whole request: each turn's role, text and count
// (that of an omitted turn), then the request, every text prefixed with
// its length so that no two conversations hash alike by where their
// texts split.
func requestKey(req scoring.TaskRequest) cacheKey {
	h := sha256.New()
	var n [8]byte
	write := func(s string) {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	for _, t := range req.History {
		write(string(t.Role))
		write(t.Content)
		binary.BigEndian.PutUint64(n[:], uint64(t.Count)) // an omitted turn: how many it stands for
		h.Write(n[:])
	}
	write(req.Request)
	var k cacheKey
	h.Sum(k[:0])
	return k
}
