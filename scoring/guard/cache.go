package guard

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash"
	"sync"
	"time"

	"github.com/llm-eval/llm_eval/scoring"
)

// CacheConfig sizes a Cache. Size and TTL are required.
type CacheConfig struct {
	// Size is the most results kept; the least recently used goes first.
	Size int
	// TTL is how long a result is reused.
	TTL time.Duration
	// Now is the clock; nil means time.Now. Tests inject a fake one.
	Now func() time.Time
}

// Validate reports a config a Cache cannot run with.
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

// CacheStats counts how a Cache answered. Every Score call through a
// wrapped scorer is exactly one of a hit, a coalesced call or a miss.
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
	cfg CacheConfig

	mu       sync.Mutex
	lru      *list.List // of *cacheEntry, most recently used first
	entries  map[cacheKey]*list.Element
	inflight map[cacheKey]*cacheCall
	stats    CacheStats

	onWait func() // test hook: a call starts waiting for an identical one
}

type cacheKey [sha256.Size]byte

type cacheEntry struct {
	key     cacheKey
	result  scoring.Result
	expires time.Time
}

// cacheCall is a scorer call in flight that identical calls wait for.
type cacheCall struct {
	done   chan struct{}
	result scoring.Result
	// retry tells waiters the leader gave up (its context ended or it
	// panicked), so its result says nothing about the case.
	retry bool
}

// NewCache returns an empty Cache.
func NewCache(cfg CacheConfig) (*Cache, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Cache{
		cfg:      cfg,
		lru:      list.New(),
		entries:  make(map[cacheKey]*list.Element),
		inflight: make(map[cacheKey]*cacheCall),
	}, nil
}

// Stats returns the cache's counters.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Entries = c.lru.Len()
	return s
}

// Wrap returns s with its results cached in c. model is the judge model s
// uses and optionsFingerprint any string that changes when s's options
// change (threshold, scale, strict mode, reason mode, input cap...): both
// are part of the key with s's name, PromptVersion and the case fields
// sent to the judge (Input, Output, Context, Instructions, every field of
// the Trajectory; not Metadata).
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
	key := s.key(cs)
	c := s.cache
	for {
		c.mu.Lock()
		if r, ok := c.lookup(key); ok {
			c.stats.Hits++
			c.mu.Unlock()
			return cacheFree(r)
		}
		call, ok := c.inflight[key]
		if !ok {
			c.stats.Misses++
			call = &cacheCall{done: make(chan struct{})}
			c.inflight[key] = call
			c.mu.Unlock()
			return s.lead(ctx, key, call, cs)
		}
		c.mu.Unlock()
		if c.onWait != nil {
			c.onWait()
		}
		select {
		case <-call.done:
		case <-ctx.Done():
			return scoring.Result{Scorer: s.Name(), Label: scoring.LabelError, Err: guardContextError(ctx.Err())}
		}
		if call.retry {
			continue
		}
		c.mu.Lock()
		c.stats.Coalesced++
		c.mu.Unlock()
		return cacheFree(call.result)
	}
}

// lead scores the case for itself and every identical call waiting on call.
func (s *cachedScorer) lead(ctx context.Context, key cacheKey, call *cacheCall, cs scoring.Case) scoring.Result {
	c := s.cache
	call.retry = true // until the scorer returns
	defer func() {
		c.mu.Lock()
		delete(c.inflight, key)
		if !call.retry && cacheableResult(call.result) {
			c.store(key, call.result)
		}
		c.mu.Unlock()
		close(call.done)
	}()
	r := s.next.Score(ctx, cs)
	call.result = r
	call.retry = r.Label == scoring.LabelError && ctx.Err() != nil
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

// cacheFree returns a shared result with no cost of its own.
func cacheFree(r scoring.Result) scoring.Result {
	r.Usage = scoring.Usage{}
	return r
}

// lookup returns a live stored result and marks it recently used. It
// drops an expired one. c.mu must be held.
func (c *Cache) lookup(key cacheKey) (scoring.Result, bool) {
	el, ok := c.entries[key]
	if !ok {
		return scoring.Result{}, false
	}
	e := el.Value.(*cacheEntry)
	if !c.cfg.Now().Before(e.expires) {
		c.lru.Remove(el)
		delete(c.entries, key)
		c.stats.Expirations++
		return scoring.Result{}, false
	}
	c.lru.MoveToFront(el)
	return e.result, true
}

// store keeps a result, evicting the least recently used beyond Size.
// c.mu must be held.
func (c *Cache) store(key cacheKey, r scoring.Result) {
	expires := c.cfg.Now().Add(c.cfg.TTL)
	if el, ok := c.entries[key]; ok {
		e := el.Value.(*cacheEntry)
		e.result, e.expires = r, expires
		c.lru.MoveToFront(el)
		return
	}
	c.entries[key] = c.lru.PushFront(&cacheEntry{key: key, result: r, expires: expires})
	for c.lru.Len() > c.cfg.Size {
		oldest := c.lru.Back()
		c.lru.Remove(oldest)
		delete(c.entries, oldest.Value.(*cacheEntry).key)
		c.stats.Evictions++
	}
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
	var k cacheKey
	h.Sum(k[:0])
	return k
}

// cacheWriteTrajectory hashes every field of a trajectory, its step count
// first; a nil trajectory and one without steps hash differently.
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
