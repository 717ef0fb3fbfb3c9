package conversation

import (
	"container/list"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Limits: why an exchange, or messages of it, were not kept as they came
// (Observer.Limited).
const (
	// LimitMaxTurns: messages left out of the middle of a conversation
	// longer than max_turns.
	LimitMaxTurns = "max_turns"
	// LimitMaxConversationBytes: messages left out of the middle of a
	// conversation whose texts pass max_conversation_bytes.
	LimitMaxConversationBytes = "max_conversation_bytes"
	// LimitMessageCut: a message longer than a quarter of
	// max_conversation_bytes, cut.
	LimitMessageCut = "message_cut"
	// LimitMaxConversations: an exchange that would have opened a
	// conversation beyond max_conversations, refused.
	LimitMaxConversations = "max_conversations"
	// LimitMaxBytes: an exchange that would have held texts beyond
	// max_bytes in all, refused.
	LimitMaxBytes = "max_bytes"
	// LimitLate: an exchange of a conversation that had already ended,
	// refused.
	LimitLate = "late"
	// LimitIDTooLong: a span whose conversation id is longer than
	// genai.MaxConversationIDBytes; it is evaluated on its own. The
	// processor reports it; listed here with the others.
	LimitIDTooLong = "id_too_long"
)

// limitBit is each per-conversation limit's bit in open.limited.
var limitBit = map[string]uint8{LimitMaxTurns: 1, LimitMaxConversationBytes: 2, LimitMessageCut: 4}

// Observer is told what the bounds left out.
type Observer interface {
	// Limited: messages of conversation key were left out, cut or refused
	// by limit; first says that this is the first time limit acted on
	// that conversation.
	Limited(limit string, messages int, key Key, first bool)
}

// Journal keeps the exchanges of open conversations in storage. Its
// methods only queue (they are called with the Keeper's lock held).
type Journal interface {
	// Added queues the record of an exchange of key (ID "" for one
	// waiting for its trace's id) and returns its id, 0 when not stored.
	Added(key Key, ex *Exchange) uint64
	// Marked queues the record of the messages left out of key, in place
	// of record id (0: none yet), and returns its id. It carries the
	// conversation's system prompt, which may have come with an exchange
	// left out.
	Marked(key Key, id uint64, omitted, gapAt int, instructions []string) uint64
	// Removed queues the deletion of records.
	Removed(ids ...uint64)
}

// Config configures a Keeper.
type Config struct {
	IdleTimeout          time.Duration
	MaxTurns             int // messages per conversation, an omitted mark counting as one
	MaxConversationBytes int
	MaxConversations     int
	MaxBytes             int
	// PendingWait is how long an exchange without a conversation id waits
	// for another span of its trace to name one (DefaultPendingWait when 0).
	PendingWait time.Duration
	// Sampled says whether conversation id is scored; nil: all are.
	Sampled func(id string) bool
	// OnEnd takes a conversation that ended and reports whether it did;
	// one it did not take is tried again RetryDelay later.
	OnEnd    func(Ended) bool
	Journal  Journal // nil: held in memory only
	Observer Observer
	Now      func() time.Time
}

// DefaultPendingWait is how long an exchange without a conversation id of
// its own waits for its trace's: the root or agent span that names it
// ends after the generations below it, and a batching exporter sends it
// seconds later.
const DefaultPendingWait = time.Minute

// RetryDelay is how long a conversation that OnEnd could not take waits
// before it is handed on again.
const RetryDelay = time.Second

// Bounds of the bookkeeping beside the conversations.
const (
	// maxIDServices bounds the services remembered as sending ids.
	maxIDServices = 1024
)

// Keeper holds the open conversations of one component. It is safe for
// concurrent use.
type Keeper struct {
	cfg      Config
	headKeep int // exchanges kept at the start of a long conversation

	mu    sync.Mutex
	open  map[Key]*open
	order list.List // of *open, by due
	bytes int       // held by open conversations and pending exchanges
	timer *time.Timer
	// ended remembers conversations that ended, to tell a late exchange
	// from a new conversation under the same id.
	ended      map[Key]*endedNote
	endedOrder list.List // of *endedNote, oldest first
	traces     traceIDs
	pending    pendingExchanges
	// idServices are the services that sent a conversation id: only
	// their exchanges without one wait for their trace's.
	idServices map[string]bool
	stopped    bool
}

// endedNote is what is remembered of a conversation that ended.
type endedNote struct {
	key     Key
	lastEnd time.Time // the latest end of its exchanges (span time)
	at      time.Time // when it ended
	elem    *list.Element
}

// New returns a Keeper; it holds nothing until Offer or Restore.
func New(cfg Config) *Keeper {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.PendingWait <= 0 {
		cfg.PendingWait = DefaultPendingWait
	}
	return &Keeper{
		cfg:        cfg,
		headKeep:   max(1, cfg.MaxTurns/4),
		open:       map[Key]*open{},
		ended:      map[Key]*endedNote{},
		idServices: map[string]bool{},
		traces:     newTraceIDs(2 * cfg.MaxConversations),
		pending:    newPendingExchanges(cfg.MaxConversations),
	}
}

// Offer takes what one span says of its conversation: service is its
// service.name, id its conversation id ("" when it names none), trace its
// trace, and ex the exchange it recorded (nil when it is no turn of a
// conversation: it may still name the conversation of its trace). It
// reports whether it queued a record in the Journal, which the caller
// then commits.
func (k *Keeper) Offer(service, id string, trace pcommon.TraceID, ex *Exchange) (queued bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped {
		return false
	}
	now := k.cfg.Now()
	k.expire(now)
	if id == "" {
		if ex == nil {
			return false
		}
		known, ok := k.traces.get(trace)
		if !ok {
			if !k.idServices[service] {
				return false
			}
			return k.park(service, trace, ex, now)
		}
		id = known
	} else {
		k.traces.note(trace, id, now)
		if !k.idServices[service] && len(k.idServices) < maxIDServices {
			k.idServices[service] = true
		}
		for _, p := range k.pending.take(trace) {
			k.bytes -= p.bytes
			if p.stored != 0 && k.cfg.Journal != nil {
				k.cfg.Journal.Removed(p.stored)
				queued = true
			}
			if k.add(Key{Service: p.service, ID: id}, &p.Exchange, now) {
				queued = true
			}
		}
	}
	if ex != nil && k.add(Key{Service: service, ID: id}, ex, now) {
		queued = true
	}
	return queued
}

// add adds an exchange to conversation key, opening it when needed, and
// reports whether it queued a record. Called with mu held.
func (k *Keeper) add(key Key, ex *Exchange, now time.Time) bool {
	if k.cfg.Sampled != nil && !k.cfg.Sampled(key.ID) {
		return false
	}
	h := &held{Exchange: *ex}
	h.Resource = pcommon.Resource{} // borrowed: never kept
	h.Instructions = nil            // kept once per conversation
	if h.Received.IsZero() {
		h.Received = now
	}
	c := k.open[key]
	if c == nil {
		if note, ok := k.ended[key]; ok && !h.Start.After(note.lastEnd) {
			k.limited(LimitLate, h.messages(), key, nil)
			return false
		}
		if len(k.open) >= k.cfg.MaxConversations {
			k.limited(LimitMaxConversations, h.messages(), key, nil)
			return false
		}
	}
	k.cutTexts(h, key, c)
	h.bytes = exchangeOverhead + h.textBytes()
	newInstructions := len(ex.Instructions) > 0 && (c == nil || !h.Start.Before(c.instructionsAt))
	extra := h.bytes
	if newInstructions {
		extra += instructionBytes(ex.Instructions)
		if c != nil {
			extra -= instructionBytes(c.instructions)
		}
	}
	if c == nil {
		extra += conversationOverhead
	}
	if k.bytes+extra > k.cfg.MaxBytes {
		k.limited(LimitMaxBytes, h.messages(), key, c)
		return false
	}
	if c == nil {
		c = &open{key: key, bytes: conversationOverhead}
		k.bytes += conversationOverhead
		k.open[key] = c
		if note, ok := k.ended[key]; ok {
			k.forgetEnded(note)
		}
	}
	queued := false
	for i := 0; i < len(c.ex); i++ {
		switch compare(c.ex[i], h) {
		case ignore:
			k.touch(c, now)
			return false
		case replace:
			old := c.remove(i)
			k.bytes -= old.bytes
			queued = k.removeRecords(old.stored) || queued
			i--
		}
	}
	before := c.bytes
	c.insert(h)
	if newInstructions {
		c.bytes -= instructionBytes(c.instructions)
		c.instructions = append([]string(nil), ex.Instructions...)
		c.bytes += instructionBytes(c.instructions)
		c.instructionsAt = h.Start
	}
	if !h.Start.Before(c.resourceAt) && ex.Resource != (pcommon.Resource{}) {
		if !c.hasResource {
			c.resource = pcommon.NewResource()
			c.hasResource = true
		}
		c.bytes -= resourceBytes(c.resource)
		ex.Resource.CopyTo(c.resource)
		c.bytes += resourceBytes(c.resource)
		c.resourceAt = h.Start
	}
	if j := k.cfg.Journal; j != nil {
		rec := *ex
		rec.Input, rec.Output, rec.Received = h.Input, h.Output, h.Received
		h.stored = j.Added(key, &rec)
		queued = queued || h.stored != 0
	}
	k.bytes += c.bytes - before
	queued = k.bound(c) || queued
	k.touch(c, now)
	return queued
}

// cutTexts cuts a message longer than a quarter of a conversation's
// bytes. Called with mu held.
func (k *Keeper) cutTexts(h *held, key Key, c *open) {
	limit := k.cfg.MaxConversationBytes / 4
	cutIn, inCut := cut(h.Input, limit)
	cutOut, outCut := cut(h.Output, limit)
	h.Input, h.Output = cutIn, cutOut
	n := 0
	if inCut {
		n++
	}
	if outCut {
		n++
	}
	if n > 0 {
		k.limited(LimitMessageCut, n, key, c)
	}
}

// bound leaves messages out of c until it is within max_turns and
// max_conversation_bytes, and reports whether it queued a record. Called
// with mu held.
func (k *Keeper) bound(c *open) bool {
	dropped := map[string]int{}
	var ids []uint64
	for {
		limit := ""
		switch {
		case c.lines() > k.cfg.MaxTurns:
			limit = LimitMaxTurns
		case c.bytes > k.cfg.MaxConversationBytes:
			limit = LimitMaxConversationBytes
		}
		if limit == "" {
			break
		}
		i := c.dropCandidate(k.headKeep)
		if i < 0 {
			break
		}
		h := c.remove(i)
		k.bytes -= h.bytes
		c.omitted += h.messages()
		dropped[limit] += h.messages()
		if h.stored != 0 {
			ids = append(ids, h.stored)
		}
	}
	if len(dropped) == 0 {
		return false
	}
	for _, limit := range []string{LimitMaxTurns, LimitMaxConversationBytes} {
		if n := dropped[limit]; n > 0 {
			k.limited(limit, n, c.key, c)
		}
	}
	j := k.cfg.Journal
	if j == nil {
		return false
	}
	if len(ids) > 0 {
		j.Removed(ids...)
	}
	c.marker = j.Marked(c.key, c.marker, c.omitted, c.gapAt, c.instructions)
	return true
}

// removeRecords queues the deletion of a record and reports whether it
// did. Called with mu held.
func (k *Keeper) removeRecords(id uint64) bool {
	if id == 0 || k.cfg.Journal == nil {
		return false
	}
	k.cfg.Journal.Removed(id)
	return true
}

// limited reports a limit; c is the conversation it acted on, nil for a
// refused exchange. Called with mu held.
func (k *Keeper) limited(limit string, messages int, key Key, c *open) {
	if k.cfg.Observer == nil || messages == 0 {
		return
	}
	first := true
	if c != nil {
		if bit := limitBit[limit]; bit != 0 {
			first = c.limited&bit == 0
			c.limited |= bit
		}
	}
	k.cfg.Observer.Limited(limit, messages, key, first)
}

// touch makes c end IdleTimeout after now unless an exchange comes.
// Called with mu held.
func (k *Keeper) touch(c *open, now time.Time) {
	c.due = now.Add(k.cfg.IdleTimeout)
	if c.elem != nil {
		k.order.Remove(c.elem)
	}
	k.insertByDue(c)
}

// insertByDue puts c into order by its due time (almost always last) and
// arms the timer when it is first. Called with mu held.
func (k *Keeper) insertByDue(c *open) {
	e := k.order.Back()
	for e != nil && e.Value.(*open).due.After(c.due) {
		e = e.Prev()
	}
	if e == nil {
		c.elem = k.order.PushFront(c)
	} else {
		c.elem = k.order.InsertAfter(c, e)
	}
	if k.order.Front() == c.elem {
		k.arm(c.due.Sub(k.cfg.Now()))
	}
}

// arm makes the timer end what is due after d. Called with mu held.
func (k *Keeper) arm(d time.Duration) {
	if k.stopped {
		return
	}
	d = max(d, 0)
	if k.timer == nil {
		k.timer = time.AfterFunc(d, func() { k.EndIdle(k.cfg.Now()) })
		return
	}
	k.timer.Reset(d)
}

// EndIdle hands on every conversation due at now, the idle timeout having
// passed since its last exchange arrived, and forgets the exchanges
// without an id whose wait has passed. The Keeper's timer calls it.
func (k *Keeper) EndIdle(now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped {
		return
	}
	k.expire(now)
	for e := k.order.Front(); e != nil; e = k.order.Front() {
		c := e.Value.(*open)
		if now.Before(c.due) {
			k.arm(c.due.Sub(now))
			return
		}
		k.order.Remove(e)
		c.elem = nil
		if k.cfg.OnEnd != nil && !k.cfg.OnEnd(c.ended()) {
			c.due = now.Add(RetryDelay)
			k.insertByDue(c)
			return // what is due after it waits as long
		}
		delete(k.open, c.key)
		k.bytes -= c.bytes
		k.noteEnded(c, now)
	}
}

// ended is what is handed on of c. Called with mu held.
func (c *open) ended() Ended {
	e := Ended{Key: c.key, Omitted: c.omitted, OmittedAt: c.gapAt, Instructions: c.instructions, Resource: c.resource}
	if !c.hasResource {
		e.Resource = pcommon.NewResource()
	}
	e.Exchanges = make([]Exchange, len(c.ex))
	for i, h := range c.ex {
		e.Exchanges[i] = h.Exchange
		if h.stored != 0 {
			e.Stored = append(e.Stored, h.stored)
		}
	}
	if c.omitted == 0 {
		e.OmittedAt = 0
	}
	if c.marker != 0 {
		e.Stored = append(e.Stored, c.marker)
	}
	return e
}

// noteEnded remembers that c ended, for late exchanges; at most
// MaxConversations are remembered, each for IdleTimeout. Called with mu
// held.
func (k *Keeper) noteEnded(c *open, now time.Time) {
	n := &endedNote{key: c.key, lastEnd: c.lastEnd(), at: now}
	if old, ok := k.ended[c.key]; ok {
		k.forgetEnded(old)
	}
	for len(k.ended) >= k.cfg.MaxConversations && k.endedOrder.Len() > 0 {
		k.forgetEnded(k.endedOrder.Front().Value.(*endedNote))
	}
	n.elem = k.endedOrder.PushBack(n)
	k.ended[c.key] = n
}

func (k *Keeper) forgetEnded(n *endedNote) {
	k.endedOrder.Remove(n.elem)
	delete(k.ended, n.key)
}

// expire forgets what has waited long enough: ended conversations after
// IdleTimeout, trace ids and exchanges without an id after PendingWait.
// Called with mu held.
func (k *Keeper) expire(now time.Time) {
	for e := k.endedOrder.Front(); e != nil; e = k.endedOrder.Front() {
		n := e.Value.(*endedNote)
		if now.Sub(n.at) < k.cfg.IdleTimeout {
			break
		}
		k.forgetEnded(n)
	}
	k.traces.expire(now.Add(-k.cfg.PendingWait))
	for _, p := range k.pending.expire(now.Add(-k.cfg.PendingWait)) {
		k.bytes -= p.bytes
		k.removeRecords(p.stored)
	}
}

// park keeps an exchange without an id until a span of its trace names
// one, and reports whether it queued a record. Called with mu held.
func (k *Keeper) park(service string, trace pcommon.TraceID, ex *Exchange, now time.Time) bool {
	p := &parked{service: service}
	p.Exchange = *ex
	if ex.Resource != (pcommon.Resource{}) {
		p.Resource = pcommon.NewResource() // borrowed: copied while it is read
		ex.Resource.CopyTo(p.Resource)
	}
	if p.Received.IsZero() {
		p.Received = now
	}
	p.bytes = exchangeOverhead + p.textBytes() + instructionBytes(p.Instructions) + resourceBytes(p.Resource)
	if k.bytes+p.bytes > k.cfg.MaxBytes || p.bytes > k.cfg.MaxConversationBytes || !k.pending.add(trace, p, now) {
		return false // not yet part of any conversation: nothing to count
	}
	k.bytes += p.bytes
	if j := k.cfg.Journal; j != nil {
		rec := *ex
		rec.Received = p.Received
		p.stored = j.Added(Key{Service: service}, &rec)
		return p.stored != 0
	}
	return false
}

// Stats is a snapshot of what a Keeper holds.
type Stats struct {
	Open    int // open conversations
	Bytes   int // held by them and by exchanges waiting for an id
	Pending int // exchanges waiting for their trace's id
}

// Stats counts what the Keeper holds now.
func (k *Keeper) Stats() Stats {
	k.mu.Lock()
	defer k.mu.Unlock()
	return Stats{Open: len(k.open), Bytes: k.bytes, Pending: k.pending.count}
}

// History returns the exchanges of conversation key that started before
// before, oldest first (copies of their texts), for a follow-up turn's
// case; at most limit of the latest.
func (k *Keeper) History(key Key, before time.Time, limit int) []Exchange {
	k.mu.Lock()
	defer k.mu.Unlock()
	c := k.open[key]
	if c == nil {
		return nil
	}
	var out []Exchange
	for _, h := range c.ex {
		if !h.Start.Before(before) {
			break
		}
		out = append(out, Exchange{TraceID: h.TraceID, SpanID: h.SpanID, Start: h.Start, Input: h.Input, Output: h.Output})
	}
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out
}

// Stop stops the timer and returns how many conversations were open, which
// stay in the Journal (when there is one) for the next start. Nothing is
// taken afterwards.
func (k *Keeper) Stop() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.stopped = true
	if k.timer != nil {
		k.timer.Stop()
	}
	return len(k.open)
}

// Wants reports whether an exchange of service without an id of its own,
// in trace, would be kept: its trace named a conversation, or the service
// sends ids and it may wait for one. A caller reads a span's content only
// when it is wanted.
func (k *Keeper) Wants(service string, trace pcommon.TraceID) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped {
		return false
	}
	if _, ok := k.traces.get(trace); ok {
		return true
	}
	return k.idServices[service]
}

// resourceBytes estimates what a copied resource holds: its attributes'
// keys and string values and a fixed cost per attribute.
func resourceBytes(res pcommon.Resource) int {
	if res == (pcommon.Resource{}) {
		return 0
	}
	n := 0
	for k, v := range res.Attributes().All() {
		n += 32 + len(k) + len(v.AsString())
	}
	return n
}
