package guard

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash"
	"time"

	"github.com/llm-eval/llm_eval/scoring"
)

// CacheConfig sizes a Cache or a SplitCache. Size and TTL are required.
type CacheConfig struct {
	// Size is the most results kept; the least recently used goes first.
	Size int
	// TTL is how long a result is reused.
	TTL time.Duration
	// Now is the clock; nil means time.Now. Tests inject a fake one.
	Now func() time.Time
}

// Validate reports a config a cache cannot run with.
func (cfg CacheConfig) Validate() error {
	var errs []error
	if cfg.Size <= 0 {
		errs = append(errs, errors.New("cache size must be greater than 0"))
	}
	if cfg.TTL <= 0 {
		errs = append(errs, errors.New("cache ttl must be greater than 0"))
	}
	return errors.Join(errs...)
}

// CacheStats counts how a Cache or a SplitCache answered. Every Score
// call through a wrapped scorer, and every Split call, is exactly one of a
// hit, a coalesced call or a miss, except a call whose context ended while
// it waited for an identical one: it got no answer and is in none.
type CacheStats struct {
	// Hits were answered from a stored result.
	Hits uint64
	// Coalesced waited for an identical call already in flight and got
	// its result.
	Coalesced uint64
	// Misses called the scorer.
	Misses uint64
	// Evictions dropped the least recently used result to stay in Size;
	// Expirations dropped a result older than TTL.
	Evictions, Expirations uint64
	// Entries is how many results are stored now.
	Entries int
}

// Cache reuses scorer results for identical cases, so that repeated
// generations (retries, replayed traffic, identical answers) are judged
// once. Only pass, fail and not_scorable results are stored, never errors.
// A result served from the cache or shared with a coalesced call has a
// zero Usage (no LLM call was made for it); Stats tells hits apart.
// Stored results are shared: callers must not modify their Steps.
type Cache struct {
	m *memo[scoring.Result]
}

// NewCache returns an empty Cache.
func NewCache(cfg CacheConfig) (*Cache, error) {
	m, err := newMemo[scoring.Result](cfg)
	if err != nil {
		return nil, err
	}
	return &Cache{m: m}, nil
}

// Stats returns the cache's counters.
func (c *Cache) Stats() CacheStats { return c.m.Stats() }

// Wrap returns s with its results cached in c. model is the judge model s
// uses and optionsFingerprint any string that changes when s's options
// change (threshold, scale, strict mode, reason mode, input cap...): both
// are part of the key with s's name, PromptVersion and the case fields
// sent to the judge (Input, Output, Context, Instructions, every field of
// the Trajectory, the Turns; not Metadata).
func (c *Cache) Wrap(s scoring.Scorer, model, optionsFingerprint string) scoring.Scorer {
	return &cachedScorer{cache: c, next: s, model: model, fingerprint: optionsFingerprint}
}

type cachedScorer struct {
	cache       *Cache
	next        scoring.Scorer
	model       string
	fingerprint string
}

func (s *cachedScorer) Name() string { return s.next.Name() }

func (s *cachedScorer) Score(ctx context.Context, cs scoring.Case) scoring.Result {
	r, how, err := s.cache.m.get(ctx, s.key(cs), func() (scoring.Result, bool, bool) {
		r := s.next.Score(ctx, cs)
		// An error after the caller's own context ended says nothing
		// about the case: a waiting call scores it itself.
		return r, cacheableResult(r), r.Label == scoring.LabelError && ctx.Err() != nil
	})
	if err != nil {
		return scoring.Result{Scorer: s.Name(), Label: scoring.LabelError, Err: guardContextError(err)}
	}
	if how != memoComputed {
		r.Usage = scoring.Usage{}
	}
	return r
}

// cacheableResult reports whether a result is kept: verdicts, not errors,
// and not a verdict whose reason call failed, which would otherwise pin the
// fallback reason for the cache's TTL.
func cacheableResult(r scoring.Result) bool {
	switch r.Label {
	case scoring.LabelPass, scoring.LabelFail, scoring.LabelNotScorable:
		return r.Err == nil && r.ReasonErr == nil
	}
	return false
}

// key hashes everything that decides a result. Every field is length
// prefixed so that no two different cases share a key by concatenation.
func (s *cachedScorer) key(cs scoring.Case) cacheKey {
	h := sha256.New()
	cacheWriteField(h, s.next.Name())
	cacheWriteField(h, s.model)
	cacheWriteField(h, scoring.PromptVersion)
	cacheWriteField(h, s.fingerprint)
	cacheWriteField(h, cs.Input)
	cacheWriteField(h, cs.Output)
	for _, list := range [][]string{cs.Context, cs.Instructions} {
		cacheWriteCount(h, len(list))
		for _, v := range list {
			cacheWriteField(h, v)
		}
	}
	cacheWriteTrajectory(h, cs.Trajectory)
	cacheWriteCount(h, len(cs.Turns))
	for _, t := range cs.Turns {
		cacheWriteField(h, string(t.Role))
		cacheWriteField(h, t.Content)
		cacheWriteCount(h, t.Count)
	}
	var k cacheKey
	h.Sum(k[:0])
	return k
}

// cacheWriteTrajectory hashes every field of a trajectory, its step count
// first, then its tools; a nil trajectory and one without steps hash
// differently.
func cacheWriteTrajectory(h hash.Hash, t *scoring.Trajectory) {
	if t == nil {
		h.Write([]byte{0})
		return
	}
	h.Write([]byte{1})
	cacheWriteCount(h, len(t.Steps))
	for _, s := range t.Steps {
		for _, v := range []string{string(s.Kind), s.Output, s.Tool, s.CallID, s.Arguments, s.Result, s.Error} {
			cacheWriteField(h, v)
		}
		cacheWriteCount(h, s.Count)
		cacheWriteCount(h, len(s.ToolCalls))
		for _, tc := range s.ToolCalls {
			cacheWriteField(h, tc.ID)
			cacheWriteField(h, tc.Name)
			cacheWriteField(h, tc.Arguments)
		}
	}
	// The tools the agent had decide tool_use's missing tools.
	cacheWriteCount(h, len(t.Tools))
	for _, d := range t.Tools {
		cacheWriteField(h, d.Name)
		cacheWriteField(h, d.Description)
	}
}

func cacheWriteCount(h hash.Hash, n int) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
}

func cacheWriteField(h hash.Hash, v string) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(v)))
	h.Write(n[:])
	h.Write([]byte(v))
}
