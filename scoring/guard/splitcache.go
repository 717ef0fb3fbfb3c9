package guard

import (
	"context"
	"crypto/sha256"
	"slices"

	"github.com/llm-eval/llm_eval/scoring"
)

// SplitCache keeps the instruction splits of system prompts by the
// prompt's hash. System prompts repeat from call to call, so with it a
// prompt is split by the judge once per TTL, and identical splits in
// flight share one judge call. Splits that succeeded are stored, those
// that found no instruction included, unless they found none after the
// judge's first reply had to be re-asked; failures never are. A split
// answered from the cache, or shared with an identical call in flight,
// has Cached set and a zero Usage.
type SplitCache struct {
	next scoring.Splitter
	m    *memo[splitAnswer]
}

var _ scoring.Splitter = (*SplitCache)(nil)

// splitAnswer is what a split call returned, kept for waiting calls.
type splitAnswer struct {
	split scoring.InstructionSplit
	err   error
}

// NewSplitCache returns next with its splits cached. next's options are
// fixed, so the prompt alone decides a split.
func NewSplitCache(next scoring.Splitter, cfg CacheConfig) (*SplitCache, error) {
	m, err := newMemo[splitAnswer](cfg)
	if err != nil {
		return nil, err
	}
	return &SplitCache{next: next, m: m}, nil
}

// Stats returns the cache's counters.
func (c *SplitCache) Stats() CacheStats { return c.m.Stats() }

// Split returns the split of prompt: stored, shared with an identical
// call in flight, or asked of next.
func (c *SplitCache) Split(ctx context.Context, prompt string) (scoring.InstructionSplit, error) {
	a, how, err := c.m.get(ctx, sha256.Sum256([]byte(prompt)), func() (splitAnswer, bool, bool) {
		s, err := c.next.Split(ctx, prompt)
		// A failure after the caller's own context ended says nothing
		// about the prompt: a waiting call splits it itself.
		// Nothing found after an unusable first reply says little about
		// the prompt: it is asked again next time, as a failure is.
		keep := err == nil && !(s.Reasked && len(s.Instructions) == 0)
		return splitAnswer{split: s, err: err}, keep, err != nil && ctx.Err() != nil
	})
	if err != nil { // this call's context ended while it waited: no call made
		ce := guardContextError(err)
		ce.Step = scoring.StepSplit
		return scoring.InstructionSplit{Cached: true}, ce
	}
	s := a.split
	s.Instructions = slices.Clone(s.Instructions) // the stored one is shared
	if how != memoComputed {
		s.Usage, s.Cached = scoring.Usage{}, true
	}
	return s, a.err
}
