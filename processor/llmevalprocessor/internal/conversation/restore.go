package conversation

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Record is one record of an open conversation read back from storage at
// start: an exchange, or the mark of the messages left out.
type Record struct {
	ID  uint64 // its id in the Journal
	Key Key    // Key.ID is "" for an exchange that waited for its trace's id
	// Exchange is set for an exchange (its Resource decoded, its own).
	Exchange *Exchange
	// Omitted, GapAt and Instructions are a mark's.
	Omitted, GapAt int
	Instructions   []string
}

// Restore puts back the open conversations found in storage at start.
// Each ends the idle timeout after its last exchange arrived, which may
// be at once; one beyond max_conversations or max_bytes ends at once, so
// it is scored rather than lost. Exchanges that waited for their trace's
// id wait again, until the pending wait after they arrived. It reports
// how many conversations it restored.
func (k *Keeper) Restore(recs []Record) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.cfg.Now()
	byKey := map[Key]*open{}
	marks := map[Key]Record{}
	var keys []Key
	for _, r := range recs {
		if r.Key.ID == "" {
			if r.Exchange != nil {
				k.restoreParked(r, now)
			}
			continue
		}
		c := byKey[r.Key]
		if c == nil {
			c = &open{key: r.Key, bytes: conversationOverhead}
			byKey[r.Key] = c
			keys = append(keys, r.Key)
		}
		if r.Exchange == nil {
			marks[r.Key] = r // applied once the exchanges are in place
			continue
		}
		h := &held{Exchange: *r.Exchange, stored: r.ID}
		h.Instructions, h.Resource = nil, pcommon.Resource{}
		h.bytes = exchangeOverhead + h.textBytes()
		c.insert(h)
		if len(r.Exchange.Instructions) > 0 && (c.instructionsAt.IsZero() || !h.Start.Before(c.instructionsAt)) {
			c.bytes -= instructionBytes(c.instructions)
			c.instructions, c.instructionsAt = r.Exchange.Instructions, h.Start
			c.bytes += instructionBytes(c.instructions)
		}
		if r.Exchange.Resource != (pcommon.Resource{}) && !h.Start.Before(c.resourceAt) {
			c.bytes -= resourceBytes(c.resource)
			c.resource, c.resourceAt, c.hasResource = r.Exchange.Resource, h.Start, true
			c.bytes += resourceBytes(c.resource)
		}
	}
	restored := 0
	for _, key := range keys {
		c := byKey[key]
		if m, ok := marks[key]; ok {
			c.marker, c.omitted, c.gapAt = m.ID, m.Omitted, m.GapAt
			if len(c.instructions) == 0 { // an exchange's, when one has them, win
				c.instructions = m.Instructions
				c.bytes += instructionBytes(c.instructions)
			}
		}
		if len(c.ex) == 0 {
			// Only its mark was stored: its exchanges were written with
			// the ended conversation that replaced them, or lost.
			k.removeRecords(c.marker)
			continue
		}
		c.gapAt = min(max(c.gapAt, 0), len(c.ex))
		last := time.Time{}
		for _, h := range c.ex {
			last = maxTime(last, h.Received)
		}
		c.due = last.Add(k.cfg.IdleTimeout)
		if old := k.open[key]; old != nil {
			continue // cannot happen: Restore runs once, before any Offer
		}
		k.bound(c)
		if len(k.open) >= k.cfg.MaxConversations || k.bytes+c.bytes > k.cfg.MaxBytes {
			c.due = now // over today's bounds: scored now rather than lost
		}
		k.open[key] = c
		k.bytes += c.bytes
		k.insertByDue(c)
		restored++
	}
	return restored
}

// restoreParked parks again an exchange that waited for its trace's id.
// Called with mu held.
func (k *Keeper) restoreParked(r Record, now time.Time) {
	p := &parked{service: r.Key.Service, stored: r.ID}
	p.Exchange = *r.Exchange // its resource was decoded for it: its own
	p.bytes = exchangeOverhead + p.textBytes() + instructionBytes(p.Instructions) + resourceBytes(p.Resource)
	since := p.Received
	if since.IsZero() || since.After(now) {
		since = now
	}
	if !k.pending.add(p.TraceID, p, since) {
		k.removeRecords(r.ID)
		return
	}
	k.bytes += p.bytes
	k.idServices[r.Key.Service] = true
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
