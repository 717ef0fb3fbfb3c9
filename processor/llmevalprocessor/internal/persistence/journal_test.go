package persistence

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

var processorID = component.MustNewID("llm_eval")

// fileClient opens a file_storage client on dir, as the collector would
// for llm_eval.
func fileClient(t testing.TB, dir string) (storage.Client, error) {
	t.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory = dir
	cfg.Compaction.Directory = dir
	cfg.Timeout = 100 * time.Millisecond
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	require.NoError(t, err)
	return ext.(storage.Extension).GetClient(context.Background(), component.KindProcessor, processorID, "")
}

func mustOpenFile(t testing.TB, dir string) storage.Client {
	t.Helper()
	c, err := fileClient(t, dir)
	require.NoError(t, err)
	return c
}

// counts collects what the hooks report.
type counts struct {
	mu      sync.Mutex
	written map[Op]int
	failed  map[Op]int
	skipped map[SkipReason]int
}

func (c *counts) hooks() Hooks {
	c.written, c.failed, c.skipped = map[Op]int{}, map[Op]int{}, map[SkipReason]int{}
	return Hooks{
		Written: func(op Op, _ int) { c.mu.Lock(); c.written[op]++; c.mu.Unlock() },
		Failed:  func(op Op, _ error) { c.mu.Lock(); c.failed[op]++; c.mu.Unlock() },
		Skipped: func(r SkipReason, _ string, _ error) { c.mu.Lock(); c.skipped[r]++; c.mu.Unlock() },
	}
}

func span(name string) ptrace.Traces {
	td := ptrace.NewTraces()
	td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName(name)
	return td
}

func itemRecord(t testing.TB, name string, admitted time.Time) []byte {
	t.Helper()
	b, err := EncodeSpan(span(name), admitted)
	require.NoError(t, err)
	return b
}

func resultRecord(t testing.TB, scorer, label string) []byte {
	t.Helper()
	b, err := EncodeResult(Result{Scorer: scorer, Label: label, Score: 0.5, At: time.Unix(9, 0), Ran: true})
	require.NoError(t, err)
	return b
}

func spanName(r Recovered) string {
	return r.Item.Traces.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Name()
}

// Items and results written in one life come back in the next, in
// admission order; removed items do not; ids keep increasing.
func TestJournalSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var c counts
	j, found, readErr, err := OpenJournal(ctx, mustOpenFile(t, dir), c.hooks())
	require.NoError(t, err)
	require.NoError(t, readErr)
	assert.Empty(t, found.Items)

	base := time.Unix(1_000, 0)
	a, err := j.Admit(ctx, itemRecord(t, "a", base))
	require.NoError(t, err)
	b, err := j.Admit(ctx, itemRecord(t, "b", base.Add(time.Second)))
	require.NoError(t, err)
	gone, err := j.Admit(ctx, itemRecord(t, "gone", base.Add(2*time.Second)))
	require.NoError(t, err)
	j.Record(a, "bias", resultRecord(t, "bias", "pass"))
	j.Record(gone, "bias", resultRecord(t, "bias", "fail"))
	require.NoError(t, j.Remove(ctx, gone)) // its result had not been written: it never is
	// A result of an item already removed is not written.
	j.Record(gone, "hallucination", resultRecord(t, "hallucination", "fail"))
	require.Eventually(t, func() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.written[OpResult] == 1 }, time.Second, time.Millisecond,
		"a waiting result is written within ResultDelay")
	assert.Positive(t, j.StoredBytes())
	require.NoError(t, j.Close(ctx))
	assert.Equal(t, map[Op]int{OpAdmit: 3, OpResult: 1, OpRemove: 1}, c.written)

	j2, found, readErr, err := OpenJournal(ctx, mustOpenFile(t, dir), c.hooks())
	require.NoError(t, err)
	require.NoError(t, readErr)
	require.Len(t, found.Items, 2)
	assert.Equal(t, "a", spanName(found.Items[0]))
	assert.Equal(t, a, found.Items[0].ID)
	require.Len(t, found.Items[0].Results, 1)
	assert.Equal(t, "bias", found.Items[0].Results[0].Scorer)
	assert.Equal(t, "pass", found.Items[0].Results[0].Label)
	assert.Equal(t, "b", spanName(found.Items[1]))
	assert.Equal(t, b, found.Items[1].ID)
	assert.Empty(t, found.Items[1].Results)
	assert.Empty(t, c.skipped)

	next, err := j2.Admit(ctx, itemRecord(t, "c", base.Add(3*time.Second)))
	require.NoError(t, err)
	assert.Greater(t, next, b, "a new id is above every id still stored")
	// Recovered items are live: removing one deletes its results too.
	require.NoError(t, j2.Remove(ctx, a))
	require.NoError(t, j2.Close(ctx))

	_, found, _, err = OpenJournal(ctx, mustOpenFile(t, dir), c.hooks())
	require.NoError(t, err)
	require.Len(t, found.Items, 2)
	assert.Equal(t, []string{"b", "c"}, []string{spanName(found.Items[0]), spanName(found.Items[1])})
	assert.Empty(t, c.skipped, "no orphaned result of a may remain")
}

// Bad records are reported once, deleted, and never stop the others from
// being recovered.
func TestJournalSkipsBadRecordsOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	client := mustOpenFile(t, dir)
	good := itemRecord(t, "good", time.Unix(1, 0))
	cut := itemRecord(t, "cut", time.Unix(2, 0))
	old := itemRecord(t, "old", time.Unix(3, 0))
	old[2] = 0 // format version 0: an older release
	require.NoError(t, client.Batch(ctx,
		storage.SetOperation(itemKey(1), good),
		storage.SetOperation(itemKey(2), cut[:len(cut)/2]),
		storage.SetOperation(itemKey(3), old),
		storage.SetOperation(itemKey(4), []byte("not a record")),
		storage.SetOperation(itemKey(5), make([]byte, MaxItemBytes+1)),
		storage.SetOperation(resultKey(1, "bias"), resultRecord(t, "bias", "pass")),
		storage.SetOperation(resultKey(1, "hallucination"), resultRecord(t, "bias", "pass")), // under another scorer's key
		storage.SetOperation(resultKey(9, "bias"), resultRecord(t, "bias", "pass")),          // no item 9
		storage.SetOperation("x/other", []byte("?")),
	))
	require.NoError(t, client.Close(ctx))

	var c counts
	j, found, readErr, err := OpenJournal(ctx, mustOpenFile(t, dir), c.hooks())
	require.NoError(t, err)
	require.NoError(t, readErr)
	require.Len(t, found.Items, 1)
	assert.Equal(t, "good", spanName(found.Items[0]))
	require.Len(t, found.Items[0].Results, 1)
	assert.Equal(t, map[SkipReason]int{SkipCorrupt: 3, SkipVersion: 1, SkipTooLarge: 1, SkipOrphan: 1, SkipKey: 1}, c.skipped)
	next, err := j.Admit(ctx, itemRecord(t, "next", time.Unix(4, 0)))
	require.NoError(t, err)
	assert.Equal(t, uint64(10), next, "ids continue above every id seen, in bad records too")
	require.NoError(t, j.Close(ctx))

	_, found, _, err = OpenJournal(ctx, mustOpenFile(t, dir), c.hooks())
	require.NoError(t, err)
	assert.Len(t, found.Items, 2)
	assert.Empty(t, c.skipped, "bad records are deleted when first met")
}

// failingClient is storage that refuses writes while full is set.
type failingClient struct {
	storage.Client
	mu      sync.Mutex
	full    bool
	kv      map[string][]byte
	batches int // transactions committed
}

func newFailingClient() *failingClient { return &failingClient{kv: map[string][]byte{}} }

func (f *failingClient) Batch(_ context.Context, ops ...*storage.Operation) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.full {
		return storage.ErrStorageFull
	}
	f.batches++
	for _, op := range ops {
		switch op.Type {
		case storage.Set:
			f.kv[op.Key] = op.Value
		case storage.Delete:
			delete(f.kv, op.Key)
		case storage.Get:
			op.Value = f.kv[op.Key]
		}
	}
	return nil
}

func (f *failingClient) Walk(ctx context.Context, fn storage.WalkFunc) error {
	f.mu.Lock()
	var ops []*storage.Operation
	for k, v := range f.kv {
		o, err := fn(k, v)
		if err != nil {
			f.mu.Unlock()
			return err
		}
		ops = append(ops, o...)
	}
	f.mu.Unlock()
	return f.Batch(ctx, ops...)
}

func (*failingClient) Close(context.Context) error { return nil }

func (f *failingClient) setFull(v bool) { f.mu.Lock(); f.full = v; f.mu.Unlock() }

func (f *failingClient) keys() int { f.mu.Lock(); defer f.mu.Unlock(); return len(f.kv) }

// A full storage fails writes without losing the Journal's state: an item
// whose admission failed is not stored, and a delete that failed is
// retried with the next write.
func TestJournalFullStorage(t *testing.T) {
	ctx := context.Background()
	fc := newFailingClient()
	var c counts
	j, _, _, err := OpenJournal(ctx, fc, c.hooks())
	require.NoError(t, err)

	kept, err := j.Admit(ctx, itemRecord(t, "kept", time.Unix(1, 0)))
	require.NoError(t, err)
	fc.setFull(true)
	id, err := j.Admit(ctx, itemRecord(t, "refused", time.Unix(2, 0)))
	require.ErrorIs(t, err, storage.ErrStorageFull)
	assert.Zero(t, id)
	j.Record(kept, "bias", resultRecord(t, "bias", "pass"))
	require.Eventually(t, func() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.failed[OpResult] == 1 }, time.Second, time.Millisecond)
	require.Error(t, j.Remove(ctx, kept))
	assert.Equal(t, map[Op]int{OpAdmit: 1, OpResult: 1, OpRemove: 1}, c.failed)
	assert.Equal(t, 1, fc.keys(), "the removed item's key is still stored")

	fc.setFull(false)
	_, err = j.Admit(ctx, itemRecord(t, "later", time.Unix(3, 0)))
	require.NoError(t, err)
	assert.Equal(t, 1, fc.keys(), "the failed delete went with the next write")
}

// A storage client that cannot list its keys is refused at Open.
func TestJournalNeedsWalker(t *testing.T) {
	_, _, _, err := OpenJournal(context.Background(), struct{ storage.Client }{}, Hooks{})
	require.ErrorContains(t, err, "storage.Walker")
}

// A storage that fails while listing does not stop the start: nothing is
// recovered and writes go on.
func TestJournalListingFails(t *testing.T) {
	fc := newFailingClient()
	fc.kv[itemKey(1)] = itemRecord(t, "a", time.Unix(1, 0))
	walkFails := &walkErrClient{failingClient: fc}
	j, found, readErr, err := OpenJournal(context.Background(), walkFails, Hooks{})
	require.NoError(t, err)
	require.Error(t, readErr)
	assert.Empty(t, found.Items)
	_, err = j.Admit(context.Background(), itemRecord(t, "b", time.Unix(2, 0)))
	require.NoError(t, err)
}

type walkErrClient struct{ *failingClient }

func (*walkErrClient) Walk(context.Context, storage.WalkFunc) error {
	return errors.New("disk read error")
}

// Two collectors on one directory: file_storage's lock makes the second
// client fail after file_storage's timeout, naming the file; the first
// keeps working.
func TestTwoCollectorsOneDirectory(t *testing.T) {
	dir := t.TempDir()
	first := mustOpenFile(t, dir)
	_, err := fileClient(t, dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "timeout")
	j, _, _, err := OpenJournal(context.Background(), first, Hooks{})
	require.NoError(t, err)
	_, err = j.Admit(context.Background(), itemRecord(t, "a", time.Unix(1, 0)))
	require.NoError(t, err)
	require.NoError(t, j.Close(context.Background()))
	second, err := fileClient(t, dir)
	require.NoError(t, err, "the lock is released when the first closes")
	require.NoError(t, second.Close(context.Background()))
}

// Log records held while their call is joined come back at start by
// call, in the order they were held, until released.
func TestJournalJoining(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	j, _, _, err := OpenJournal(ctx, mustOpenFile(t, dir), Hooks{})
	require.NoError(t, err)
	callA := strings.Repeat("a", 48)
	callB := strings.Repeat("b", 48)
	rec := func(body string) []byte {
		ld := plog.NewLogs()
		ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr(body)
		b, err := EncodeLogCall(ld, time.Unix(1, 0))
		require.NoError(t, err)
		return b
	}
	a1, err := j.Hold(ctx, callA, rec("a1"))
	require.NoError(t, err)
	b1, err := j.Hold(ctx, callB, rec("b1"))
	require.NoError(t, err)
	a2, err := j.Hold(ctx, callA, rec("a2"))
	require.NoError(t, err)
	require.NoError(t, j.Release(ctx, []string{b1}, len(rec("b1"))))
	require.NoError(t, j.Close(ctx))

	j2, found, _, err := OpenJournal(ctx, mustOpenFile(t, dir), Hooks{})
	require.NoError(t, err)
	require.Len(t, found.Joining, 2)
	for i, want := range []struct{ key, body string }{{a1, "a1"}, {a2, "a2"}} {
		assert.Equal(t, want.key, found.Joining[i].Key)
		assert.Equal(t, callA, found.Joining[i].Call)
		assert.Equal(t, want.body, found.Joining[i].Item.Logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().Str())
	}
	next, err := j2.Admit(ctx, itemRecord(t, "x", time.Unix(1, 0)))
	require.NoError(t, err)
	assert.Greater(t, next, uint64(3), "ids continue above the joining records' too")
	require.NoError(t, j2.Close(ctx))
}

// Waiting results go with the next write, in the same transaction.
func TestJournalResultsGoWithTheNextWrite(t *testing.T) {
	ctx := context.Background()
	fc := newFailingClient()
	var c counts
	j, _, _, err := OpenJournal(ctx, fc, c.hooks())
	require.NoError(t, err)
	a, err := j.Admit(ctx, itemRecord(t, "a", time.Unix(1, 0)))
	require.NoError(t, err)
	j.Record(a, "bias", resultRecord(t, "bias", "pass"))
	j.Record(a, "hallucination", resultRecord(t, "hallucination", "pass"))
	assert.Equal(t, 1, fc.keys(), "not written yet")
	_, err = j.Admit(ctx, itemRecord(t, "b", time.Unix(2, 0)))
	require.NoError(t, err)
	assert.Equal(t, 4, fc.keys(), "both results went with the next admission")
	c.mu.Lock()
	assert.Equal(t, 2, c.written[OpResult])
	c.mu.Unlock()
	require.NoError(t, j.Remove(ctx, a))
	assert.Equal(t, 1, fc.keys(), "the item went with its results")
}

// Queued items share the transaction of the next Commit; an item that
// leaves before it is never written.
func TestJournalQueueAndCommit(t *testing.T) {
	ctx := context.Background()
	fc := newFailingClient()
	var c counts
	j, _, _, err := OpenJournal(ctx, fc, c.hooks())
	require.NoError(t, err)
	before := fc.batches
	a := j.Queue(itemRecord(t, "a", time.Unix(1, 0)))
	b := j.Queue(itemRecord(t, "b", time.Unix(2, 0)))
	gone := j.Queue(itemRecord(t, "gone", time.Unix(3, 0)))
	require.NoError(t, j.Remove(ctx, gone))
	assert.Zero(t, fc.keys(), "nothing is written before Commit")
	require.NoError(t, j.Commit(ctx))
	assert.Equal(t, 2, fc.keys())
	assert.Equal(t, before+1, fc.batches, "one transaction for the batch")
	require.NoError(t, j.Commit(ctx))
	assert.Equal(t, before+1, fc.batches, "nothing waiting: no transaction")
	c.mu.Lock()
	assert.Equal(t, 2, c.written[OpAdmit])
	assert.Zero(t, c.written[OpRemove], "the item that left unwritten needs no delete")
	c.mu.Unlock()

	fc.setFull(true)
	refused := j.Queue(itemRecord(t, "refused", time.Unix(4, 0)))
	require.Error(t, j.Commit(ctx))
	require.NoError(t, j.Remove(ctx, refused), "an item whose write failed is not stored")
	fc.setFull(false)
	require.NoError(t, j.Remove(ctx, a))
	require.NoError(t, j.Remove(ctx, b))
	assert.Zero(t, fc.keys())
	assert.Zero(t, j.StoredBytes())
}

// A rewritten item comes back as rewritten, before or after its first
// write; a rewrite that fails leaves the record written before standing for
// the item, and Remove still deletes it.
func TestJournalRewrite(t *testing.T) {
	ctx := context.Background()
	fc := newFailingClient()
	j, _, _, err := OpenJournal(ctx, fc, Hooks{})
	require.NoError(t, err)
	early := j.Queue(itemRecord(t, "early", time.Unix(1, 0)))
	j.Rewrite(early, itemRecord(t, "early, rewritten before its write", time.Unix(1, 0)))
	late, err := j.Admit(ctx, itemRecord(t, "late", time.Unix(2, 0)))
	require.NoError(t, err)
	j.Rewrite(late, itemRecord(t, "late, rewritten after its write", time.Unix(2, 0)))
	require.NoError(t, j.Commit(ctx))
	assert.Equal(t, 2, fc.keys())
	assert.Equal(t, int64(len(itemRecord(t, "early, rewritten before its write", time.Unix(1, 0)))+
		len(itemRecord(t, "late, rewritten after its write", time.Unix(2, 0)))), j.StoredBytes(),
		"stored bytes follow the rewritten records")

	fc.setFull(true)
	j.Rewrite(late, itemRecord(t, "late, third version", time.Unix(2, 0)))
	require.Error(t, j.Commit(ctx))
	fc.setFull(false)

	_, found, _, err := OpenJournal(ctx, fc, Hooks{})
	require.NoError(t, err)
	require.Len(t, found.Items, 2)
	assert.Equal(t, "early, rewritten before its write", spanName(found.Items[0]))
	assert.Equal(t, "late, rewritten after its write", spanName(found.Items[1]), "the failed rewrite left the record before it")

	require.NoError(t, j.Remove(ctx, early))
	require.NoError(t, j.Remove(ctx, late), "an item whose rewrite failed is still stored")
	assert.Zero(t, fc.keys())
	j.Rewrite(late, itemRecord(t, "gone", time.Unix(2, 0)))
	require.NoError(t, j.Commit(ctx))
	assert.Zero(t, fc.keys(), "a rewrite of an item that left writes nothing")
}

// An item that leaves while its rewrite waits for the next write (the
// second half of a call joined an item being evaluated, and the
// evaluation finished before the joining ConsumeLogs committed) is
// deleted, and its rewrite is never written: it would bring the item back
// after a restart, to be sent a second time.
func TestJournalRemoveDropsWaitingRewrite(t *testing.T) {
	ctx := context.Background()
	fc := newFailingClient()
	var c counts
	j, _, _, err := OpenJournal(ctx, fc, c.hooks())
	require.NoError(t, err)
	id, err := j.Admit(ctx, itemRecord(t, "span", time.Unix(1, 0)))
	require.NoError(t, err)
	j.Rewrite(id, itemRecord(t, "span and events", time.Unix(1, 0)))
	require.NoError(t, j.Remove(ctx, id))
	require.NoError(t, j.Commit(ctx))
	assert.Zero(t, fc.keys(), "the item that left stays deleted")
	assert.Zero(t, j.StoredBytes())

	_, found, _, err := OpenJournal(ctx, fc, Hooks{})
	require.NoError(t, err)
	assert.Empty(t, found.Items)
	c.mu.Lock()
	defer c.mu.Unlock()
	assert.Equal(t, 1, c.written[OpAdmit], "only the first write")
}

// stallingClient is a failingClient whose next write, once stall is set,
// says so on entered and waits for proceed.
type stallingClient struct {
	*failingClient
	stall   chan struct{} // closed: the next write stalls
	entered chan struct{}
	proceed chan struct{}
	once    sync.Once
}

func (c *stallingClient) Batch(ctx context.Context, ops ...*storage.Operation) error {
	select {
	case <-c.stall:
		c.once.Do(func() {
			c.entered <- struct{}{}
			<-c.proceed
		})
	default:
	}
	return c.failingClient.Batch(ctx, ops...)
}

// Queue, Rewrite and Record do not wait for a write in progress; what
// they queue for an item whose write then fails is given up with it,
// never written on its own later.
func TestJournalQueuesDuringAWrite(t *testing.T) {
	ctx := context.Background()
	sc := &stallingClient{failingClient: newFailingClient(), stall: make(chan struct{}),
		entered: make(chan struct{}), proceed: make(chan struct{})}
	var c counts
	j, _, _, err := OpenJournal(ctx, sc, c.hooks())
	require.NoError(t, err)
	failed := j.Queue(itemRecord(t, "its write fails", time.Unix(1, 0)))
	close(sc.stall)
	committed := make(chan error, 1)
	go func() { committed <- j.Commit(ctx) }()
	<-sc.entered

	other := j.Queue(itemRecord(t, "queued meanwhile", time.Unix(2, 0)))
	j.Rewrite(failed, itemRecord(t, "its write fails, rewritten", time.Unix(1, 0)))
	j.Record(failed, "bias", resultRecord(t, "bias", "pass"))
	sc.setFull(true)
	close(sc.proceed)
	require.Error(t, <-committed)
	sc.setFull(false)

	require.NoError(t, j.Commit(ctx))
	_, found, _, err := OpenJournal(ctx, sc.failingClient, Hooks{})
	require.NoError(t, err)
	require.Len(t, found.Items, 1, "only the item queued meanwhile")
	assert.Equal(t, "queued meanwhile", spanName(found.Items[0]))
	assert.Empty(t, found.Items[0].Results)
	require.NoError(t, j.Remove(ctx, failed), "not stored: nothing to delete")
	require.NoError(t, j.Remove(ctx, other))
	assert.Zero(t, sc.keys())
	assert.Zero(t, j.StoredBytes())
}

// BenchmarkJournalHeldSpan is the storage work of one held span on
// file_storage, as three transactions: its admission, two results written
// together, and its removal. One op is one span.
func BenchmarkJournalHeldSpan(b *testing.B) {
	ctx := context.Background()
	j, _, _, err := OpenJournal(ctx, mustOpenFile(b, b.TempDir()), Hooks{})
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close(ctx)
	item := itemRecord(b, "chat gpt-4o-mini", time.Unix(1, 0))
	result := resultRecord(b, "bias", "pass")
	b.ReportAllocs()
	for b.Loop() {
		id, err := j.Admit(ctx, item)
		if err != nil {
			b.Fatal(err)
		}
		j.Record(id, "bias", result)
		j.Record(id, "hallucination", result)
		if err := j.Commit(ctx); err != nil {
			b.Fatal(err)
		}
		if err := j.Remove(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
}
