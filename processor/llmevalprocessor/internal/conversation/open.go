package conversation

import (
	"container/list"
	"slices"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// held is an exchange of an open conversation with its record id.
type held struct {
	Exchange
	stored uint64 // its record in the Journal; 0 when not stored
	bytes  int    // what it counts against the bounds
}

// open is a conversation still receiving exchanges. Its exchanges are in
// start order; once messages were left out (omitted > 0), they sit before
// ex[gapAt], and further messages are left out next to them, so the
// omitted ones are always one run.
type open struct {
	key     Key
	ex      []*held
	gapAt   int
	omitted int
	marker  uint64 // the record of omitted and gapAt; 0 when none
	bytes   int    // texts and overhead held, the system prompt included
	// The system prompt and resource of the latest exchange that had them,
	// and that exchange's start.
	instructions   []string
	instructionsAt time.Time
	resource       pcommon.Resource
	resourceAt     time.Time
	hasResource    bool
	due            time.Time     // when the conversation ends unless an exchange comes
	elem           *list.Element // in Keeper.order
	limited        uint8         // the limits already reported for it, a bit each
}

// lines are the messages the judge would see, the omitted mark counting
// as one.
func (c *open) lines() int {
	n := 0
	for _, h := range c.ex {
		n += h.messages()
	}
	if c.omitted > 0 {
		n++
	}
	return n
}

// newest is the start of the latest exchange.
func (c *open) newest() time.Time {
	if len(c.ex) == 0 {
		return time.Time{}
	}
	return c.ex[len(c.ex)-1].Start
}

// lastEnd is the latest end of its exchanges.
func (c *open) lastEnd() time.Time {
	var t time.Time
	for _, h := range c.ex {
		if h.End.After(t) {
			t = h.End
		}
	}
	return t
}

// sameTurn is what adding an exchange does with one of its trace already
// held.
type sameTurn int

const (
	distinct sameTurn = iota // another turn of the same trace: both stay
	ignore                   // the held one stands for the new one
	replace                  // the new one stands for the held one
)

// compare says whether the new exchange n and the held one h, of the
// same trace, are one turn and which stands for it: the agent span over
// the generations of its run; of two readings of one request, the one
// that ended last (the final answer).
func compare(h, n *held) sameTurn {
	switch {
	case h.TraceID != n.TraceID:
		return distinct
	case h.Agent && !n.Agent:
		return ignore
	case n.Agent && !h.Agent:
		return replace
	case h.Input != n.Input:
		return distinct
	case n.End.After(h.End):
		return replace
	}
	return ignore
}

// remove takes ex[i] out, keeping the gap in place.
func (c *open) remove(i int) *held {
	h := c.ex[i]
	c.ex = slices.Delete(c.ex, i, i+1)
	if i < c.gapAt {
		c.gapAt--
	}
	c.bytes -= h.bytes
	return h
}

// insert puts h in start order and returns its index.
func (c *open) insert(h *held) int {
	i, _ := slices.BinarySearchFunc(c.ex, h, func(a, b *held) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return -1 // after those that started at the same time
	})
	c.ex = slices.Insert(c.ex, i, h)
	if c.omitted > 0 && i < c.gapAt {
		c.gapAt++
	}
	c.bytes += h.bytes
	return i
}

// dropCandidate is the exchange to leave out next: the oldest after the
// gap, or the newest before it, never the conversation's latest one; -1
// when only the latest is left. headKeep is where the gap opens.
func (c *open) dropCandidate(headKeep int) int {
	if c.omitted == 0 {
		c.gapAt = min(headKeep, len(c.ex)-1)
	}
	last := len(c.ex) - 1
	switch {
	case c.gapAt < last:
		return c.gapAt
	case c.gapAt >= 1:
		c.gapAt--
		return c.gapAt
	}
	return -1
}
