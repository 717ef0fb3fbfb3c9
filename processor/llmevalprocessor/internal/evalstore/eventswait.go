package evalstore // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"

import (
	"context"
)

// Waiting for events is separate from evaluating. A span without content
// whose content may come as GenAI log events waits for them
// (StateWaitingForEvents) in an area of its own, bounded by count and
// bytes: it takes no queue_size slot, so spans with content are never
// refused because content-less ones wait. It takes a slot when its events
// join it. A span that finds the area full leaves at once, not scorable
// (WaitingAreaFull).
//
// The store also learns which services send no events at all (their
// instrumentation's content capture is off): after LearnAfter spans of a
// service in a row waited in vain, its spans without content leave at once
// (NoEventsExpected) instead of waiting, until an event of that service
// arrives (EventsArrived).

// Outcomes of spans that did not wait (Observer.SignalJoined).
const (
	JoinWaitingAreaFull   = "waiting_area_full"   // the waiting area was full: not scorable at once
	JoinContentCaptureOff = "content_capture_off" // its service is known to send no events: not scorable at once
)

// EventWaits bound the area of spans waiting for their log events and set
// when a service is taken to send none.
type EventWaits struct {
	MaxSpans int // spans waiting at once; 0: no bound
	MaxBytes int // their estimated bytes; 0: no bound
	// LearnAfter: spans of one service in a row whose events never came,
	// after which its spans stop waiting; 0: never.
	LearnAfter int
}

// maxSources bounds the services the store remembers; the ones beyond are
// not learned (their spans keep waiting).
const maxSources = 4096

// Half is one half of a call offered to AdmitHalf.
type Half struct {
	Side       Side
	HasContent bool // scorable on its own; a span without it waits for its events
	// Source is the service that sent a span; its spans stop waiting once
	// it is known to send no events.
	Source string
	// Library is the instrumentation library that wrote it, for telemetry.
	Library string
	// Size is the estimated bytes a span without content holds while it
	// waits for its events.
	Size int
	// NoEvents is the not_scorable reason of a span whose events do not
	// come; NotScorableWithoutEvents when empty.
	NoEvents string
}

// eventWaits is the waiting area of a Store, guarded by its mu.
type eventWaits struct {
	limits  EventWaits
	count   int
	bytes   int
	sources map[string]*source
}

// source is what the store knows of one service's log events.
type source struct {
	missed int  // spans in a row whose events did not come
	off    bool // no events expected: its spans do not wait
}

// full reports whether a span of size bytes finds no room.
func (w *eventWaits) full(size int) bool {
	return (w.limits.MaxSpans > 0 && w.count >= w.limits.MaxSpans) ||
		(w.limits.MaxBytes > 0 && w.bytes+size > w.limits.MaxBytes)
}

// captureOff reports whether the service is known to send no events.
func (w *eventWaits) captureOff(service string) bool {
	src := w.sources[service]
	return src != nil && src.off
}

// eventsMissed records that a span of the service waited in vain, and
// reports whether the service has now been learned as sending no events.
// Called with mu held.
func (s *Store) eventsMissed(service string) bool {
	w := &s.eventWaits
	if w.limits.LearnAfter <= 0 {
		return false
	}
	src := w.sources[service]
	if src == nil {
		if len(w.sources) >= maxSources {
			return false
		}
		if w.sources == nil {
			w.sources = make(map[string]*source)
		}
		src = &source{}
		w.sources[service] = src
	}
	src.missed++
	if src.off || src.missed < w.limits.LearnAfter {
		return false
	}
	src.off = true
	return true
}

// eventsCame forgets what the store learned of the service: its events
// do come. Called with mu held.
func (s *Store) eventsCame(service string) {
	delete(s.eventWaits.sources, service)
}

// EventsArrived tells the store that a GenAI log event of the service
// arrived: its spans without content wait for their events again.
func (s *Store) EventsArrived(service string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eventsCame(service)
}

// CaptureOff reports whether the service is taken to send no log events.
func (s *Store) CaptureOff(service string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.eventWaits.captureOff(service)
}

// EventWaitStats is a snapshot of the waiting area.
type EventWaitStats struct {
	Spans       int      // waiting now
	Bytes       int      // their estimated bytes
	CaptureOff  []string // services taken to send no events
	SourcesSeen int      // services remembered
}

// EventWaitStats counts the waiting area now.
func (s *Store) EventWaitStats() EventWaitStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := EventWaitStats{Spans: s.eventWaits.count, Bytes: s.eventWaits.bytes, SourcesSeen: len(s.eventWaits.sources)}
	for name, src := range s.eventWaits.sources {
		if src.off {
			st.CaptureOff = append(st.CaptureOff, name)
		}
	}
	return st
}

// noEventsOutcome tells the observer that a span did not wait.
func (s *Store) noEventsOutcome(ctx context.Context, outcome string) {
	s.obs.SignalJoined(ctx, outcome)
}
