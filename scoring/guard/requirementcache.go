package guard

import (
	"context"
	"crypto/sha256"
	"slices"

	"github.com/llm-eval/llm_eval/scoring"
)

// RequirementCache keeps the task_completion requirements of requests by
// the request's hash, as SplitCache keeps instruction splits. An agent's
// requests repeat (the same question from many users, a scheduled job), so
// with it a request is split into requirements by the judge once per TTL,
// every run of it is measured against the same list, and identical
// requests in flight share one judge call. Successful answers are stored,
// those with no requirement included; failures never are. An answer from
// the cache, or shared with an identical call in flight, has Cached set
// and a zero Usage.
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
// decide a request's requirements from the request alone.
func NewRequirementCache(next scoring.RequirementLister, cfg CacheConfig) (*RequirementCache, error) {
	m, err := newMemo[requirementAnswer](cfg)
	if err != nil {
		return nil, err
	}
	return &RequirementCache{next: next, m: m}, nil
}

// Stats returns the cache's counters.
func (c *RequirementCache) Stats() CacheStats { return c.m.Stats() }

// ListRequirements returns the requirements of request: stored, shared
// with an identical call in flight, or asked of next.
func (c *RequirementCache) ListRequirements(ctx context.Context, request string) (scoring.TaskRequirements, error) {
	a, how, err := c.m.get(ctx, sha256.Sum256([]byte(request)), func() (requirementAnswer, bool, bool) {
		t, err := c.next.ListRequirements(ctx, request)
		// A failure after the caller's own context ended says nothing
		// about the request: a waiting call asks itself.
		return requirementAnswer{task: t, err: err}, err == nil, err != nil && ctx.Err() != nil
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
