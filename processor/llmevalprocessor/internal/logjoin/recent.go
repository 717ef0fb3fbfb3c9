package logjoin

// This file remembers keys for a while, at most a fixed number of them:
// the LLM calls that already left, so that a part of one arriving late is
// recognised instead of being taken for a new call. The Joiner remembers
// the calls it handed back; the evaluation store the halves of calls
// that left.

import "time"

// RecentSet holds keys until a time each, at most Size of them; when full, the
// oldest is forgotten first. Keys should be added in order of their time,
// as they are when every key is kept for the same duration. The zero value
// remembers nothing. A RecentSet is not safe for concurrent use.
type RecentSet[K comparable] struct {
	until map[K]time.Time
	ring  []entry[K] // oldest at head
	head  int
	n     int
}

type entry[K comparable] struct {
	key   K
	until time.Time
}

// NewRecentSet returns a RecentSet of at most size keys.
func NewRecentSet[K comparable](size int) RecentSet[K] {
	return RecentSet[K]{until: make(map[K]time.Time, size), ring: make([]entry[K], size)}
}

// Has reports whether k is remembered.
func (s *RecentSet[K]) Has(k K) bool {
	_, ok := s.until[k]
	return ok
}

// Add remembers k until the given time, forgetting the oldest key when
// the RecentSet is full.
func (s *RecentSet[K]) Add(k K, until time.Time) {
	if len(s.ring) == 0 {
		return
	}
	if s.n == len(s.ring) {
		s.pop()
	}
	s.ring[(s.head+s.n)%len(s.ring)] = entry[K]{key: k, until: until}
	s.n++
	s.until[k] = until
}

// Forget drops the keys remembered until now or earlier.
func (s *RecentSet[K]) Forget(now time.Time) {
	for s.n > 0 && !now.Before(s.ring[s.head].until) {
		s.pop()
	}
}

// Len is the number of keys remembered.
func (s *RecentSet[K]) Len() int { return len(s.until) }

func (s *RecentSet[K]) pop() {
	e := s.ring[s.head]
	s.ring[s.head] = entry[K]{}
	s.head = (s.head + 1) % len(s.ring)
	s.n--
	// A key added again later has a later time: keep that one.
	if t, ok := s.until[e.key]; ok && t.Equal(e.until) {
		delete(s.until, e.key)
	}
}
