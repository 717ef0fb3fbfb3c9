// Package sharedcomponent shares one value between the instances that the
// Collector creates, one per signal, for one component configuration: it
// hands every instance of a configuration the same value, counts the
// instances using it, and forgets it when the last one releases it. The
// llm_eval processor shares its evaluator this way between its traces and
// logs instances, and the llm_eval_metrics connector its series, as
// contrib's internal/sharedcomponent shares a receiver between pipelines.
// The Collector hands every instance of one component the same config
// pointer, which serves as the key.
package sharedcomponent // import "github.com/llm-eval/llm_eval/internal/sharedcomponent"

import "sync"

// Map holds one value per key, counted by its uses. The zero Map is empty
// and ready to use; a Map is safe for concurrent use.
type Map[K, V comparable] struct {
	mu sync.Mutex
	m  map[K]*entry[V]
}

type entry[V comparable] struct {
	value V
	refs  int
}

// Acquire returns the value of key for one more use, creating it with
// create when key has none. When create fails, its error is returned and
// nothing is kept.
func (m *Map[K, V]) Acquire(key K, create func() (V, error)) (V, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.m[key]; ok {
		e.refs++
		return e.value, nil
	}
	v, err := create()
	if err != nil {
		var zero V
		return zero, err
	}
	if m.m == nil {
		m.m = map[K]*entry[V]{}
	}
	m.m[key] = &entry[V]{value: v, refs: 1}
	return v, nil
}

// Release ends one use of v, the value of key, and reports whether it was
// the last: key is forgotten then, and the next Acquire creates a new
// value. Releasing a value that key no longer holds reports false and
// changes nothing.
func (m *Map[K, V]) Release(key K, v V) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.m[key]
	if !ok || e.value != v {
		return false
	}
	e.refs--
	if e.refs > 0 {
		return false
	}
	delete(m.m, key)
	return true
}

// Uses is the number of uses of key's value not released yet; 0 when key
// has no value.
func (m *Map[K, V]) Uses(key K) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.m[key]; ok {
		return e.refs
	}
	return 0
}
