package guard

import (
	"container/list"
	"context"
	"crypto/sha256"
	"sync"
	"time"
)

// cacheKey identifies what a memo stores: a hash of everything that
// decides the value.
type cacheKey [sha256.Size]byte

// memo is the store behind Cache and SplitCache: values by key, at most
// Size of them, each for TTL, the least recently used dropped first; a
// call for a key already being computed waits for that computation
// instead of repeating it.
type memo[V any] struct {
	cfg CacheConfig

	mu       sync.Mutex
	lru      *list.List // of *memoEntry[V], most recently used first
	entries  map[cacheKey]*list.Element
	inflight map[cacheKey]*memoCall[V]
	stats    CacheStats

	onWait func() // test hook: a call starts waiting for an identical one
}

type memoEntry[V any] struct {
	key     cacheKey
	value   V
	expires time.Time
}

// memoCall is a computation in flight that identical calls wait for.
type memoCall[V any] struct {
	done  chan struct{}
	value V
	// retry tells waiters the leader gave up (its context ended or it
	// panicked), so its value says nothing about the key.
	retry bool
}

// memoAnswer says how a memo answered a call.
type memoAnswer int

const (
	memoComputed memoAnswer = iota // this call computed the value
	memoStored                     // a stored value
	memoShared                     // the value of an identical call in flight
)

func newMemo[V any](cfg CacheConfig) (*memo[V], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &memo[V]{
		cfg:      cfg,
		lru:      list.New(),
		entries:  make(map[cacheKey]*list.Element),
		inflight: make(map[cacheKey]*memoCall[V]),
	}, nil
}

// Stats returns the memo's counters.
func (m *memo[V]) Stats() CacheStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.stats
	s.Entries = m.lru.Len()
	return s
}

// get returns the value of key: a stored one, the one of an identical call
// in flight, or the one compute returns. compute reports whether its value
// may be stored (keep) and whether it says nothing about the key because
// the caller's context ended (retry: waiting calls compute for
// themselves). A waiting call whose context ends returns its error. Every
// call is exactly one of a hit, a coalesced call or a miss in Stats.
func (m *memo[V]) get(ctx context.Context, key cacheKey, compute func() (v V, keep, retry bool)) (V, memoAnswer, error) {
	for {
		m.mu.Lock()
		if v, ok := m.lookup(key); ok {
			m.stats.Hits++
			m.mu.Unlock()
			return v, memoStored, nil
		}
		call, ok := m.inflight[key]
		if !ok {
			m.stats.Misses++
			call = &memoCall[V]{done: make(chan struct{})}
			m.inflight[key] = call
			m.mu.Unlock()
			return m.lead(key, call, compute), memoComputed, nil
		}
		m.mu.Unlock()
		if m.onWait != nil {
			m.onWait()
		}
		select {
		case <-call.done:
		case <-ctx.Done():
			var zero V
			return zero, memoShared, ctx.Err()
		}
		if call.retry {
			continue
		}
		m.mu.Lock()
		m.stats.Coalesced++
		m.mu.Unlock()
		return call.value, memoShared, nil
	}
}

// lead computes the value for itself and every identical call waiting on
// call. A panic in compute leaves the waiters to retry and goes on up.
func (m *memo[V]) lead(key cacheKey, call *memoCall[V], compute func() (V, bool, bool)) V {
	call.retry = true // until compute returns
	keep := false
	defer func() {
		m.mu.Lock()
		delete(m.inflight, key)
		if !call.retry && keep {
			m.store(key, call.value)
		}
		m.mu.Unlock()
		close(call.done)
	}()
	call.value, keep, call.retry = compute()
	return call.value
}

// lookup returns a live stored value and marks it recently used. It drops
// an expired one. m.mu must be held.
func (m *memo[V]) lookup(key cacheKey) (V, bool) {
	var zero V
	el, ok := m.entries[key]
	if !ok {
		return zero, false
	}
	e := el.Value.(*memoEntry[V])
	if !m.cfg.Now().Before(e.expires) {
		m.lru.Remove(el)
		delete(m.entries, key)
		m.stats.Expirations++
		return zero, false
	}
	m.lru.MoveToFront(el)
	return e.value, true
}

// store keeps a value, evicting the least recently used beyond Size. m.mu
// must be held.
func (m *memo[V]) store(key cacheKey, v V) {
	expires := m.cfg.Now().Add(m.cfg.TTL)
	if el, ok := m.entries[key]; ok {
		e := el.Value.(*memoEntry[V])
		e.value, e.expires = v, expires
		m.lru.MoveToFront(el)
		return
	}
	m.entries[key] = m.lru.PushFront(&memoEntry[V]{key: key, value: v, expires: expires})
	for m.lru.Len() > m.cfg.Size {
		oldest := m.lru.Back()
		m.lru.Remove(oldest)
		delete(m.entries, oldest.Value.(*memoEntry[V]).key)
		m.stats.Evictions++
	}
}
