package persistence

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/conversation"
)

// Op names a kind of write.
type Op string

// Kinds of writes.
const (
	OpAdmit  Op = "admit"
	OpResult Op = "result"
	OpRemove Op = "remove"
	OpJoin   Op = "join" // a log record waiting for the rest of its call
	// OpConversation: a record of an open conversation (an exchange or its mark).
	OpConversation Op = "conversation"
)

// SkipReason says why a stored record was not recovered.
type SkipReason string

// Why records are skipped at start. Skipped records are deleted.
const (
	SkipCorrupt  SkipReason = "corrupt"         // cut short, damaged or misshapen
	SkipTooLarge SkipReason = "too_large"       // over the record bounds
	SkipVersion  SkipReason = "unknown_version" // another release's format
	SkipOrphan   SkipReason = "orphan"          // a result whose item is gone
	SkipKey      SkipReason = "unknown_key"     // a key this release does not write
)

// maxRetryDeletes bounds the keys whose delete failed and that are retried
// with the next write. Beyond it they are given up: such an item is
// recovered (and forwarded) again at the next start.
const maxRetryDeletes = 100_000

// Hooks report what the Journal does; any may be nil.
type Hooks struct {
	// Written reports a record written (or, for OpRemove, an item deleted)
	// and the bytes of its value.
	Written func(op Op, bytes int)
	// Failed reports a write that storage refused; the item stays in
	// memory and is evaluated as without storage.
	Failed func(op Op, err error)
	// Skipped reports a record not recovered at start.
	Skipped func(reason SkipReason, key string, err error)
}

// Recovered is one item found at start with the results recorded for it.
type Recovered struct {
	ID      uint64
	Item    Item
	Results []Result // in key order: by scorer name
}

// Joining is one log record found at start that was waiting for the rest
// of its call.
type Joining struct {
	Key  string // its storage key, for Release
	Call string // the call's trace and span id, as given to Hold
	Item Item
}

// Found is what Open read: items oldest first, joining records by call and
// in the order they were held, the records of open conversations by id.
type Found struct {
	Items         []Recovered
	Joining       []Joining
	Conversations []conversation.Record
}

// Journal writes items and results to one storage client. It is safe for
// concurrent use.
type Journal struct {
	client storage.Client
	hooks  Hooks
	stored atomic.Int64 // bytes of the records of live items

	// write serializes the transactions. It is taken before mu, and mu is
	// released while the client writes: what only queues (Queue, Rewrite,
	// Record) takes mu alone and so never waits for the disk.
	write  sync.Mutex
	mu     sync.Mutex
	next   uint64
	live   map[uint64]*entry
	retry  []string // keys whose delete failed
	closed bool
	// pending are results not written yet. They go with the next write,
	// or after ResultDelay, so a result whose item leaves first costs no
	// write at all and several results share one transaction.
	pending []pendingResult
	// admits are items queued by Queue and not written yet.
	admits     []pendingAdmit
	flush      *time.Timer
	flushArmed bool
	// conv are the records of open conversations (c/<id>); convSets and
	// convDels are their writes and deletes waiting for the next write.
	conv     map[uint64]*convEntry
	convSets []pendingSet
	convDels []uint64
}

// convEntry is what the Journal wrote, or queued, of one conversation
// record.
type convEntry struct {
	bytes     int
	unwritten bool
	// writing: its write is in a batch in flight, so a delete must be
	// queued even though it is not written yet.
	writing bool
}

// pendingSet is a conversation record waiting to be written.
type pendingSet struct {
	id     uint64
	record []byte
}

type pendingAdmit struct {
	id     uint64
	record []byte
	// rewrite: the item is on disk already; this record replaces it.
	rewrite bool
}

// ResultDelay is how long a finished result may wait to be written with
// another write before it is written on its own. A crash in that time
// loses the result, which is then evaluated again.
const ResultDelay = 100 * time.Millisecond

// maxPendingResults bounds the results waiting to be written; beyond it
// the oldest is given up (reported as a failed write).
const maxPendingResults = 100_000

type pendingResult struct {
	id     uint64
	key    string
	record []byte
}

// entry is what the Journal wrote for one live item.
type entry struct {
	results   []string // result keys written
	bytes     int      // of its item and result records
	itemBytes int      // of its item record
	unwritten bool     // queued by Queue, not written yet
}

// OpenJournal reads every record of client and returns the Journal and the items
// found, oldest first. Corrupt, oversized, unknown-version and orphaned
// records are reported to hooks.Skipped and deleted, so a bad record is
// met once, never at every start. A client that cannot list its keys
// (storage.Walker) is refused. A storage that fails while listing is not:
// Open returns no items and the error in readErr, and the Journal writes as
// usual, so that the collector still starts.
func OpenJournal(ctx context.Context, client storage.Client, hooks Hooks) (j *Journal, found Found, readErr error, err error) {
	walker, ok := client.(storage.Walker)
	if !ok {
		return nil, found, nil, fmt.Errorf("the storage client (%T) cannot list its keys (storage.Walker); use file_storage", client)
	}
	j = &Journal{client: client, hooks: hooks, next: 1, live: map[uint64]*entry{}, conv: map[uint64]*convEntry{}}
	items := map[uint64]*Recovered{}
	results := map[uint64][]resultAt{}
	walkErr := walker.Walk(ctx, func(key string, value []byte) ([]*storage.Operation, error) {
		value = bytes.Clone(value) // only valid inside the walk
		id, scorer, kind := parseKey(key)
		var err error
		switch kind {
		case 'j':
			var it Item
			if it, err = decodeSafely(DecodeItem, value); err == nil && it.Kind != KindLogCall {
				err = fmt.Errorf("%w: a span under a joining key", ErrCorrupt)
			}
			if err == nil {
				found.Joining = append(found.Joining, Joining{Key: key, Call: scorer, Item: it})
				j.stored.Add(int64(len(value)))
			}
		case 'i':
			var it Item
			if it, err = decodeSafely(DecodeItem, value); err == nil {
				items[id] = &Recovered{ID: id, Item: it}
				j.live[id] = &entry{bytes: len(value)}
			}
		case 'c':
			var rec conversation.Record
			if rec, err = decodeSafely(func(b []byte) (conversation.Record, error) { return DecodeConversationRecord(id, b) }, value); err == nil {
				found.Conversations = append(found.Conversations, rec)
				j.conv[id] = &convEntry{bytes: len(value)}
				j.stored.Add(int64(len(value)))
			}
		case 'r':
			var res Result
			if res, err = decodeSafely(DecodeResult, value); err == nil && res.Scorer != scorer {
				err = fmt.Errorf("%w: result of %q under the key of %q", ErrCorrupt, res.Scorer, scorer)
			}
			if err == nil {
				results[id] = append(results[id], resultAt{key: key, res: res, bytes: len(value)})
			}
		default:
			j.skip(SkipKey, key, errors.New("not a key this release writes"))
			return []*storage.Operation{storage.DeleteOperation(key)}, nil
		}
		if err != nil {
			j.skip(skipReason(err), key, err)
			return []*storage.Operation{storage.DeleteOperation(key)}, nil
		}
		j.next = max(j.next, id+1)
		return nil, nil
	})
	if walkErr != nil {
		clear(j.live)
		clear(j.conv)
		j.stored.Store(0)
		return j, Found{}, walkErr, nil
	}

	var orphans []*storage.Operation
	for id, rs := range results {
		it, ok := items[id]
		if !ok {
			for _, r := range rs {
				j.skip(SkipOrphan, r.key, errors.New("its item is not stored"))
				orphans = append(orphans, storage.DeleteOperation(r.key))
			}
			continue
		}
		e := j.live[id]
		for _, r := range rs {
			it.Results = append(it.Results, r.res)
			e.results = append(e.results, r.key)
			e.bytes += r.bytes
		}
	}
	if len(orphans) > 0 {
		if err := client.Batch(ctx, orphans...); err != nil {
			j.failed(OpRemove, err)
		}
	}
	for _, e := range j.live {
		j.stored.Add(int64(e.bytes))
	}
	for _, it := range items {
		found.Items = append(found.Items, *it)
	}
	slices.SortFunc(found.Items, func(a, b Recovered) int { return a.Item.Admitted.Compare(b.Item.Admitted) })
	return j, found, nil, nil
}

type resultAt struct {
	key   string
	res   Result
	bytes int
}

// decodeSafely decodes a record, turning a panic of the decoder (a record
// damaged in a way the checksum missed) into ErrCorrupt.
func decodeSafely[T any](decode func([]byte) (T, error), b []byte) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: decoding panicked: %v", ErrCorrupt, r)
		}
	}()
	return decode(b)
}

func skipReason(err error) SkipReason {
	switch {
	case errors.Is(err, ErrTooLarge):
		return SkipTooLarge
	case errors.Is(err, ErrVersion):
		return SkipVersion
	}
	return SkipCorrupt
}

// Admit writes a newly admitted item and returns its id. On failure the
// item is not stored (id 0) and the failure is reported.
func (j *Journal) Admit(ctx context.Context, record []byte) (uint64, error) {
	id := j.Queue(record)
	if id == 0 {
		return 0, errors.New("storage closed")
	}
	if err := j.Commit(ctx); err != nil {
		return 0, err
	}
	return id, nil
}

// Queue takes a newly admitted item and returns its id, 0 once closed. The
// item is written by the next Commit or other write, or within ResultDelay,
// so the items admitted from one batch share a transaction; a caller that
// must have it on disk calls Commit.
func (j *Journal) Queue(record []byte) uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.queue(record)
}

// queue is Queue. Called with mu held.
func (j *Journal) queue(record []byte) uint64 {
	if j.closed {
		return 0
	}
	id := j.next
	j.next++
	j.admits = append(j.admits, pendingAdmit{id: id, record: record})
	j.live[id] = &entry{bytes: len(record), itemBytes: len(record), unwritten: true}
	j.stored.Add(int64(len(record)))
	j.armFlush()
	return id
}

// Rewrite replaces the record of live item id, with the next write or
// within ResultDelay: the item took in more (the other half of its call).
// It does nothing when the item is not stored. Should the write fail, the
// record written before stays and still stands for the item.
func (j *Journal) Rewrite(id uint64, record []byte) {
	j.mu.Lock()
	defer j.mu.Unlock()
	e := j.live[id]
	if e == nil || j.closed {
		return
	}
	delta := len(record) - e.itemBytes
	e.bytes += delta
	e.itemBytes = len(record)
	j.stored.Add(int64(delta))
	for i := range j.admits {
		if j.admits[i].id == id {
			j.admits[i].record = record
			return
		}
	}
	j.admits = append(j.admits, pendingAdmit{id: id, record: record, rewrite: true})
	j.armFlush()
}

// Commit writes every queued item and waiting result. When it returns
// without error, every item queued before it was called is in storage:
// writes are serialized, so a write of another caller that took them has
// finished. On failure the queued items are given up (reported)
// and stay in memory.
func (j *Journal) Commit(ctx context.Context) error {
	j.write.Lock()
	defer j.write.Unlock()
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed || !j.queued() {
		return nil
	}
	return j.batch(ctx)
}

// queued reports whether writes wait for the next batch. Called with mu
// held.
func (j *Journal) queued() bool {
	return len(j.admits) > 0 || len(j.pending) > 0 || len(j.convSets) > 0 || len(j.convDels) > 0
}

// armFlush makes sure what waits is written within ResultDelay. Called
// with mu held.
func (j *Journal) armFlush() {
	if j.flushArmed {
		return
	}
	j.flushArmed = true
	if j.flush == nil {
		j.flush = time.AfterFunc(ResultDelay, j.flushWaiting)
	} else {
		j.flush.Reset(ResultDelay)
	}
}

// Record writes a result of item id with the next write, or within
// ResultDelay. It does nothing when the item is not stored (its admission
// failed, or it has already been removed). A failed write is reported to
// the hooks.
func (j *Journal) Record(id uint64, scorer string, record []byte) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.live[id] == nil || j.closed {
		return
	}
	if len(j.pending) >= maxPendingResults {
		j.failed(OpResult, errors.New("too many results waiting to be written"))
		j.pending = j.pending[1:]
	}
	j.pending = append(j.pending, pendingResult{id: id, key: resultKey(id, scorer), record: record})
	j.armFlush()
}

// flushWaiting writes the items and results still waiting.
func (j *Journal) flushWaiting() {
	j.write.Lock()
	defer j.write.Unlock()
	j.mu.Lock()
	defer j.mu.Unlock()
	j.flushArmed = false
	if j.queued() && !j.closed {
		_ = j.batch(context.Background())
	}
}

// Remove deletes item id and its results. A failed delete is retried with
// the next write; until then the item would be recovered again.
func (j *Journal) Remove(ctx context.Context, id uint64) error {
	j.write.Lock() // an item write in progress has finished: its keys are known
	defer j.write.Unlock()
	j.mu.Lock()
	defer j.mu.Unlock()
	e := j.live[id]
	if e == nil {
		return nil
	}
	delete(j.live, id)
	j.stored.Add(-int64(e.bytes))
	j.pending = slices.DeleteFunc(j.pending, func(p pendingResult) bool { return p.id == id }) // never written
	// Its queued write, or a rewrite queued after its write, must not
	// bring it back.
	j.admits = slices.DeleteFunc(j.admits, func(a pendingAdmit) bool { return a.id == id })
	if e.unwritten {
		return nil // it left before it was written: nothing to delete
	}
	if j.closed {
		j.retry = append(j.retry, itemKey(id))
		j.retry = append(j.retry, e.results...)
		return nil
	}
	if err := j.deleteKeys(ctx, append([]string{itemKey(id)}, e.results...)); err != nil {
		return err
	}
	j.written(OpRemove, 0)
	return nil
}

// deleteKeys deletes keys in one transaction. A failed delete is reported
// and kept to be retried with the next write. Called with write and mu
// held.
func (j *Journal) deleteKeys(ctx context.Context, keys []string) error {
	if err := j.batch(ctx, deletes(keys)...); err != nil {
		j.failed(OpRemove, err)
		if len(j.retry)+len(keys) <= maxRetryDeletes {
			j.retry = append(j.retry, keys...)
		}
		return err
	}
	return nil
}

func deletes(keys []string) []*storage.Operation {
	ops := make([]*storage.Operation, len(keys))
	for i, k := range keys {
		ops[i] = storage.DeleteOperation(k)
	}
	return ops
}

// Hold writes a log record of call that waits for the rest of its call and
// returns its key. On failure nothing is stored ("" and the error).
func (j *Journal) Hold(ctx context.Context, call string, record []byte) (string, error) {
	j.write.Lock()
	defer j.write.Unlock()
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return "", errors.New("storage closed")
	}
	key := "j/" + call + "/" + hexID(j.next)
	j.next++
	if err := j.batch(ctx, storage.SetOperation(key, record)); err != nil {
		j.failed(OpJoin, err)
		return "", err
	}
	j.stored.Add(int64(len(record)))
	j.written(OpJoin, len(record))
	return key, nil
}

// Release deletes held log records; bytes is their total size. A failed
// delete is retried with the next write.
func (j *Journal) Release(ctx context.Context, keys []string, bytes int) error {
	if len(keys) == 0 {
		return nil
	}
	j.write.Lock()
	defer j.write.Unlock()
	j.mu.Lock()
	defer j.mu.Unlock()
	j.stored.Add(-int64(bytes))
	if j.closed {
		j.retry = append(j.retry, keys...)
		return nil
	}
	return j.deleteKeys(ctx, keys)
}

// batch runs ops in one transaction together with the deletes that failed
// before, the queued items and the results waiting to be written. When
// that fails, the queued items and waiting results are given up (reported;
// the items stay in memory only) and ops are tried on their own, so that a
// retried delete that keeps failing does not fail every write. Called with
// write and mu held; mu is released while the client writes, so items and
// results queued meanwhile wait for the next write.
func (j *Journal) batch(ctx context.Context, ops ...*storage.Operation) error {
	if len(j.retry) == 0 && !j.queued() {
		return j.unlocked(func() error { return j.client.Batch(ctx, ops...) })
	}
	all := deletes(j.retry)
	for _, id := range j.convDels {
		all = append(all, storage.DeleteOperation(conversationKey(id)))
	}
	for _, a := range j.admits {
		all = append(all, storage.SetOperation(itemKey(a.id), a.record))
	}
	for _, p := range j.pending {
		all = append(all, storage.SetOperation(p.key, p.record))
	}
	for _, c := range j.convSets {
		all = append(all, storage.SetOperation(conversationKey(c.id), c.record))
		if e := j.conv[c.id]; e != nil {
			e.writing = true
		}
	}
	all = append(all, ops...)
	admits, pending, convSets, convDels := j.admits, j.pending, j.convSets, j.convDels
	j.admits, j.pending, j.convSets, j.convDels = nil, nil, nil, nil
	if err := j.unlocked(func() error { return j.client.Batch(ctx, all...) }); err != nil {
		j.convFailed(convSets, convDels, err)
		gone := map[uint64]bool{}
		for _, a := range admits {
			j.failed(OpAdmit, err)
			if e := j.live[a.id]; e != nil && !a.rewrite {
				delete(j.live, a.id)
				j.stored.Add(-int64(e.bytes))
				gone[a.id] = true
			}
		}
		for range pending {
			j.failed(OpResult, err)
		}
		if len(gone) > 0 {
			// What was queued for them meanwhile is not stored either.
			j.admits = slices.DeleteFunc(j.admits, func(a pendingAdmit) bool { return gone[a.id] })
			j.pending = slices.DeleteFunc(j.pending, func(p pendingResult) bool { return gone[p.id] })
		}
		if len(ops) == 0 {
			return err
		}
		return j.unlocked(func() error { return j.client.Batch(ctx, ops...) })
	}
	j.retry = j.retry[:0]
	for _, c := range convSets {
		if e := j.conv[c.id]; e != nil {
			e.unwritten, e.writing = false, false
		}
		j.written(OpConversation, len(c.record))
	}
	for _, a := range admits {
		if e := j.live[a.id]; e != nil {
			e.unwritten = false
		}
		j.written(OpAdmit, len(a.record))
	}
	for _, p := range pending {
		e := j.live[p.id]
		if e == nil {
			continue
		}
		if !slices.Contains(e.results, p.key) {
			e.results = append(e.results, p.key)
		}
		e.bytes += len(p.record)
		j.stored.Add(int64(len(p.record)))
		j.written(OpResult, len(p.record))
	}
	return nil
}

// unlocked runs write, the client's I/O, without mu. Called with write and
// mu held.
func (j *Journal) unlocked(write func() error) error {
	j.mu.Unlock()
	defer j.mu.Lock()
	return write()
}

// StoredBytes is the size of the records of the items stored now.
func (j *Journal) StoredBytes() int64 { return j.stored.Load() }

// Close retries the failed deletes once and closes the client.
func (j *Journal) Close(ctx context.Context) error {
	j.write.Lock()
	defer j.write.Unlock()
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil
	}
	j.closed = true
	if j.flush != nil {
		j.flush.Stop()
	}
	j.pending, j.admits = nil, nil // their items left, or a crash would have lost them too
	j.convSets = nil               // as a crash would have lost them
	for _, id := range j.convDels {
		j.retry = append(j.retry, conversationKey(id))
	}
	j.convDels = nil
	var errs []error
	if len(j.retry) > 0 {
		if err := j.client.Batch(ctx, deletes(j.retry)...); err != nil {
			errs = append(errs, fmt.Errorf("deleting records of items that left: %w", err))
		}
	}
	if err := j.client.Close(ctx); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (j *Journal) written(op Op, n int) {
	if j.hooks.Written != nil {
		j.hooks.Written(op, n)
	}
}

func (j *Journal) failed(op Op, err error) {
	if j.hooks.Failed != nil {
		j.hooks.Failed(op, err)
	}
}

func (j *Journal) skip(reason SkipReason, key string, err error) {
	if j.hooks.Skipped != nil {
		j.hooks.Skipped(reason, key, err)
	}
}

func itemKey(id uint64) string { return "i/" + hexID(id) }

func conversationKey(id uint64) string { return "c/" + hexID(id) }

func resultKey(id uint64, scorer string) string { return "r/" + hexID(id) + "/" + scorer }

func hexID(id uint64) string {
	s := strconv.FormatUint(id, 16)
	return strings.Repeat("0", 16-len(s)) + s
}

// parseKey splits a key into its id and its scorer (for a result) or call
// (for a joining record); kind is 'i', 'r', 'j', 'c', or 0 for a key this
// release does not write.
func parseKey(key string) (id uint64, name string, kind byte) {
	const callLen = 48
	if len(key) < 2+16 || key[1] != '/' {
		return 0, "", 0
	}
	if key[0] == 'j' {
		if len(key) != 2+callLen+1+16 || key[2+callLen] != '/' || !isHex(key[2:2+callLen]) {
			return 0, "", 0
		}
		id, err := strconv.ParseUint(key[2+callLen+1:], 16, 64)
		if err != nil || id == 0 {
			return 0, "", 0
		}
		return id, key[2 : 2+callLen], 'j'
	}
	id, err := strconv.ParseUint(key[2:18], 16, 64)
	if err != nil || id == 0 {
		return 0, "", 0
	}
	switch {
	case key[0] == 'i' && len(key) == 18:
		return id, "", 'i'
	case key[0] == 'c' && len(key) == 18:
		return id, "", 'c'
	case key[0] == 'r' && len(key) > 19 && key[18] == '/':
		return id, key[19:], 'r'
	}
	return 0, "", 0
}

func isHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// PutConversation queues a new record of an open conversation and returns
// its id, 0 once closed. It is written with the next write, or within
// ResultDelay.
func (j *Journal) PutConversation(record []byte) uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return 0
	}
	id := j.next
	j.next++
	j.convSets = append(j.convSets, pendingSet{id: id, record: record})
	j.conv[id] = &convEntry{bytes: len(record), unwritten: true}
	j.stored.Add(int64(len(record)))
	j.armFlush()
	return id
}

// ReplaceConversation queues record in place of conversation record id;
// it does nothing when id is not stored.
func (j *Journal) ReplaceConversation(id uint64, record []byte) {
	j.mu.Lock()
	defer j.mu.Unlock()
	e := j.conv[id]
	if e == nil || j.closed {
		return
	}
	j.stored.Add(int64(len(record) - e.bytes))
	e.bytes = len(record)
	for i := range j.convSets {
		if j.convSets[i].id == id {
			j.convSets[i].record = record
			return
		}
	}
	j.convSets = append(j.convSets, pendingSet{id: id, record: record})
	j.armFlush()
}

// DropConversation queues the deletion of conversation records.
func (j *Journal) DropConversation(ids ...uint64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.dropConversation(ids)
}

// dropConversation forgets conversation records: a queued write is
// dropped, a written record is queued for deletion. Called with mu held.
func (j *Journal) dropConversation(ids []uint64) {
	for _, id := range ids {
		e := j.conv[id]
		if e == nil {
			continue
		}
		delete(j.conv, id)
		j.stored.Add(-int64(e.bytes))
		j.convSets = slices.DeleteFunc(j.convSets, func(c pendingSet) bool { return c.id == id })
		if !e.unwritten || e.writing {
			j.convDels = append(j.convDels, id)
		}
	}
	if len(j.convDels) > 0 {
		j.armFlush()
	}
}

// QueueReplacing queues a newly admitted item, as Queue does, together
// with the deletion of the conversation records it replaces: both are in
// the same write, so storage holds either the records or the item.
func (j *Journal) QueueReplacing(record []byte, conversations []uint64) uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	id := j.queue(record)
	if id != 0 {
		j.dropConversation(conversations)
	}
	return id
}

// convFailed reports the conversation writes of a failed batch: the
// records are not stored (the conversations stay in memory) and the
// deletes are retried with the next write. Called with write and mu held.
func (j *Journal) convFailed(sets []pendingSet, dels []uint64, err error) {
	for _, c := range sets {
		j.failed(OpConversation, err)
		e := j.conv[c.id]
		if e == nil {
			continue
		}
		e.writing = false
		if e.unwritten {
			delete(j.conv, c.id)
			j.stored.Add(-int64(e.bytes))
		}
	}
	for _, id := range dels {
		if len(j.retry) < maxRetryDeletes {
			j.retry = append(j.retry, conversationKey(id))
		}
	}
}
