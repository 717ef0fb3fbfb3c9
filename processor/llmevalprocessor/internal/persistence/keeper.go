package persistence

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/conversation"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/logjoin"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadata"
	"github.com/llm-eval/llm_eval/scoring"
)

// This file connects the store to storage (the storage setting): the
// store's hooks write through the Journal, and at start the items found
// there go back into the store or are forwarded.

// Stored is a subject that storage can keep: a held span, a log call or a
// call seen on both signals.
type Stored interface {
	Record(admitted time.Time) ([]byte, error)
}

// Keeper is the journal of the store of one llm_eval component: the
// admitting ConsumeTraces or ConsumeLogs writes what it queued (commit)
// before it returns; results are written within ResultDelay. It holds the
// items found at start until the instance of their signal takes them.
// Until Open succeeds, and when llm_eval runs without storage for one run,
// its methods do nothing.
type Keeper struct {
	extension    component.ID // the storage extension
	self         component.ID // this processor, naming its storage client
	checkTimeout time.Duration
	tel          Counters
	redact       func(string) string
	journal      *Journal // set by Open
	opAttrs      map[Op]metric.MeasurementOption

	mu      sync.Mutex
	found   map[Kind][]Recovered
	joining []Joining // log records found waiting for their call
	// storedCalls are the calls found stored as items with their log
	// records (a log call or a pair): joining records of theirs are stale.
	storedCalls map[logjoin.Key]bool
	// held are the stored records of each call being joined; recovering
	// stops holdJoining from writing the records it re-joins at start.
	held       map[logjoin.Key]*heldCall
	recovering bool
	// conversations are the records of open conversations found at start.
	conversations []conversation.Record
}

// heldCall is what is stored of one call being joined.
type heldCall struct {
	keys  []string
	bytes int
}

// NewKeeper returns the storage of the component self in the storage
// extension extension; Open opens it. checkTimeout bounds the check of
// the storage file at start (storage_check_timeout).
func NewKeeper(extension, self component.ID, checkTimeout time.Duration, tel Counters, redact func(string) string) *Keeper {
	st := &Keeper{extension: extension, self: self, checkTimeout: checkTimeout, tel: tel, redact: redact, opAttrs: map[Op]metric.MeasurementOption{}}
	for _, op := range []Op{OpAdmit, OpResult, OpRemove, OpJoin, OpConversation} {
		st.opAttrs[op] = metric.WithAttributeSet(attribute.NewSet(attribute.String("op", string(op))))
	}
	return st
}

// Open gets the storage client from the extension and reads what the last
// run left. It returns false when llm_eval runs without storage until the
// next start, having said why (file.go); errors, which stop the collector,
// name the storage key.
func (st *Keeper) Open(ctx context.Context, host component.Host) (bool, error) {
	ext, ok := host.GetExtensions()[st.extension]
	if !ok {
		return false, fmt.Errorf("storage: extension %q not found: configure it under extensions and list it in service::extensions", st.extension)
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return false, fmt.Errorf("storage: extension %q is not a storage extension (such as file_storage)", st.extension)
	}
	o, q, err := st.openFile(ctx, se)
	var without runWithout
	if errors.As(err, &without) {
		st.tel.Log.Error("storage: llm_eval runs without storage until the next start; held spans and log calls are kept in memory only, as without the storage setting. "+
			"The storage file was left in place: a start that can open it recovers what it holds",
			zap.String("storage", st.extension.String()), zap.String("file", without.file), zap.String("cause", without.cause), zap.String("fix", without.fix))
		return false, st.observeActive(0)
	}
	if err != nil {
		return false, err
	}
	if q != nil {
		st.tel.TB.ProcessorLlmEvalStorageFilesQuarantined.Add(ctx, 1)
		st.tel.Log.Error("storage: the storage file could not be opened: it is damaged, so it was moved aside and llm_eval started on a fresh one; "+
			"the spans and log calls it held when the collector last stopped are not recovered, and neither are their evaluations; "+
			"the damaged file is kept for inspection and can be deleted",
			zap.String("storage", st.extension.String()), zap.String("file", q.Path), zap.String("moved_to", q.MovedTo), zap.String("cause", q.Cause))
	}
	if o.readErr != nil {
		st.tel.Log.Error("storage: could not read the records of the last run; starting without them",
			zap.String("extension", st.extension.String()), zap.Error(o.readErr))
	}
	st.mu.Lock()
	st.journal = o.journal
	st.found = map[Kind][]Recovered{}
	st.storedCalls = map[logjoin.Key]bool{}
	for _, rec := range o.found.Items {
		st.found[rec.Item.Kind] = append(st.found[rec.Item.Kind], rec)
		if rec.Item.Kind == KindLogCall || rec.Item.Kind == KindPair {
			first := rec.Item.Logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
			st.storedCalls[logjoin.Key{TraceID: first.TraceID(), SpanID: first.SpanID()}] = true
		}
	}
	st.joining = o.found.Joining
	st.conversations = o.found.Conversations
	st.held = map[logjoin.Key]*heldCall{}
	st.mu.Unlock()
	j := o.journal
	return true, errors.Join(st.observeActive(1), st.tel.TB.RegisterProcessorLlmEvalStorageBytesCallback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(j.StoredBytes())
		return nil
	}))
}

// observeActive reports in storage_active whether this run keeps its
// items in storage (1) or runs without it until the next start (0): the
// log line that says why is not something an alert can see.
func (st *Keeper) observeActive(v int64) error {
	return st.tel.TB.RegisterProcessorLlmEvalStorageActiveCallback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(v)
		return nil
	})
}

// openedStorage is the journal of a storage client and what was read from
// it at start.
type openedStorage struct {
	journal *Journal
	found   Found
	readErr error
}

// read gets the storage client from se and reads what the last run left.
// Errors name the storage key.
func (st *Keeper) read(ctx context.Context, se storage.Extension) (openedStorage, error) {
	client, err := se.GetClient(ctx, component.KindProcessor, st.self, "")
	if err != nil {
		hint := ""
		switch {
		case strings.Contains(err.Error(), "timeout"):
			// bbolt's file lock: file_storage waits its timeout for it.
			hint = " (is another collector using the same storage directory?)"
		case errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS):
			hint = notWritable(err)
		}
		return openedStorage{}, fmt.Errorf("storage: extension %q could not open storage for %s: %w%s", st.extension, st.self, err, hint)
	}
	defer func() {
		if r := recover(); r != nil {
			closeQuietly(ctx, client)
			panic(r) // openFile moves the file aside
		}
	}()
	j, found, readErr, err := OpenJournal(ctx, client, Hooks{
		Written: st.written,
		Failed:  st.writeFailed,
		Skipped: st.skipped,
	})
	if err != nil {
		_ = client.Close(ctx)
		return openedStorage{}, fmt.Errorf("storage: extension %q: %w", st.extension, err)
	}
	return openedStorage{journal: j, found: found, readErr: readErr}, nil
}

// notWritable says what to do about a storage file or directory the
// collector may not write.
func notWritable(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if _, statErr := os.Stat(pe.Path); statErr == nil {
			return fmt.Sprintf("; the storage file is not damaged and was left in place: make it readable and writable by the user the collector runs as (uid %d), "+
				"and the next start recovers what it holds", os.Geteuid())
		}
	}
	return fmt.Sprintf("; make the storage directory writable by the user the collector runs as (uid %d)", os.Geteuid())
}

// closeQuietly closes a client that a damaged file made panic; closing it
// may panic too.
func closeQuietly(ctx context.Context, client storage.Client) {
	defer func() { _ = recover() }()
	_ = client.Close(ctx)
}

// Take hands over the items of one kind found at start, once.
func (st *Keeper) Take(kind Kind) []Recovered {
	st.mu.Lock()
	defer st.mu.Unlock()
	recs := st.found[kind]
	delete(st.found, kind)
	return recs
}

// Close closes the storage client.
func (st *Keeper) Close(ctx context.Context) error {
	if st.journal == nil {
		return nil
	}
	if err := st.journal.Close(ctx); err != nil {
		return fmt.Errorf("llm_eval: storage: %w", err)
	}
	return nil
}

// Admitted queues the record of a subject just admitted and returns its
// id, 0 when it is not stored (see evalstore.Journal).
func (st *Keeper) Admitted(s Stored, admitted time.Time) uint64 {
	if st.journal == nil {
		return 0
	}
	rec, err := s.Record(admitted)
	if err != nil { // too large: held in memory only
		st.writeFailed(OpAdmit, err)
		return 0
	}
	if r, ok := s.(Replacing); ok {
		return st.journal.QueueReplacing(rec, r.Replaces())
	}
	return st.journal.Queue(rec)
}

// Replacing is a subject stored in place of records it replaces: a
// conversation that ended, whose exchanges were stored as it went.
type Replacing interface {
	Replaces() []uint64
}

// TakeConversations hands over the records of open conversations found
// at start, once.
func (st *Keeper) TakeConversations() []conversation.Record {
	st.mu.Lock()
	defer st.mu.Unlock()
	recs := st.conversations
	st.conversations = nil
	return recs
}

// Added queues the record of an exchange of an open conversation
// (conversation.Journal).
func (st *Keeper) Added(key conversation.Key, ex *conversation.Exchange) uint64 {
	if st.journal == nil {
		return 0
	}
	rec, err := EncodeConversationRecord(key, ex, 0, 0, nil)
	if err != nil {
		st.writeFailed(OpConversation, err)
		return 0
	}
	return st.journal.PutConversation(rec)
}

// Marked queues the record of the messages left out of an open
// conversation (conversation.Journal).
func (st *Keeper) Marked(key conversation.Key, id uint64, omitted, gapAt int, instructions []string) uint64 {
	if st.journal == nil {
		return 0
	}
	rec, err := EncodeConversationRecord(key, nil, omitted, gapAt, instructions)
	if err != nil {
		st.writeFailed(OpConversation, err)
		return id
	}
	if id == 0 {
		return st.journal.PutConversation(rec)
	}
	st.journal.ReplaceConversation(id, rec)
	return id
}

// Removed queues the deletion of records of open conversations
// (conversation.Journal).
func (st *Keeper) Removed(ids ...uint64) {
	if st.journal == nil {
		return
	}
	st.journal.DropConversation(ids...)
}

// Rewritten queues the record of a stored item that took in more in place
// of the one before (see evalstore.Journal).
func (st *Keeper) Rewritten(id uint64, s Stored, admitted time.Time) uint64 {
	if id == 0 || st.journal == nil {
		return st.Admitted(s, admitted)
	}
	rec, err := s.Record(admitted)
	if err != nil { // too large: the record before stands for the item
		st.writeFailed(OpAdmit, err)
		return id
	}
	st.journal.Rewrite(id, rec)
	return id
}

// Commit writes the items admitted so far: ConsumeTraces and the logs
// instance's evaluate call it before they return, so that the items of one
// batch share a transaction.
func (st *Keeper) Commit() {
	if st.journal == nil {
		return
	}
	_ = st.journal.Commit(context.Background()) // a failure is counted; the items stay in memory
}

// Finished queues a result of a stored item (see evalstore.Journal).
func (st *Keeper) Finished(id uint64, r evalstore.Result) {
	if st.journal == nil {
		return
	}
	rec, err := EncodeResult(st.resultRecord(r))
	if err != nil {
		st.writeFailed(OpResult, err)
		return
	}
	st.journal.Record(id, r.Scorer, rec)
}

// Left removes an item that has been sent on (see evalstore.Journal).
func (st *Keeper) Left(id uint64) {
	if st.journal == nil {
		return
	}
	_ = st.journal.Remove(context.Background(), id)
}

func (st *Keeper) written(op Op, n int) {
	ctx := context.Background()
	st.tel.TB.ProcessorLlmEvalStorageWrites.Add(ctx, 1, st.opAttrs[op])
	if n > 0 {
		st.tel.TB.ProcessorLlmEvalStorageWrittenBytes.Add(ctx, int64(n))
	}
}

func (st *Keeper) writeFailed(op Op, err error) {
	st.tel.TB.ProcessorLlmEvalStorageWriteFailures.Add(context.Background(), 1, st.opAttrs[op])
	st.tel.LogFailure("storage:"+string(op), "storage write failed; the item is kept in memory and evaluated as without storage",
		zap.String("op", string(op)), zap.String("extension", st.extension.String()), zap.Error(err))
}

func (st *Keeper) skipped(reason SkipReason, key string, err error) {
	st.tel.TB.ProcessorLlmEvalStorageRecordsSkipped.Add(context.Background(), 1,
		metric.WithAttributes(attribute.String("reason", string(reason))))
	st.tel.LogFailure("storage-skip:"+string(reason), "storage: record of the last run skipped and deleted",
		zap.String("reason", string(reason)), zap.String("key", key), zap.Error(err))
}

// resultRecord is what is stored of a result: what leave writes, with the
// texts already scrubbed of the judge's secrets. Of a failure it keeps the
// scoring error type, if any, and the error's text.
func (st *Keeper) resultRecord(r evalstore.Result) Result {
	rec := Result{
		Scorer: r.Scorer,
		Label:  string(r.Label()),
		Score:  r.Result.Score,
		Reason: st.redact(r.Result.Reason),
		At:     r.At,
		Ran:    r.Ran,
	}
	if r.Label() == scoring.LabelError && r.Result.Err != nil {
		rec.Failed = true
		var se *scoring.Error
		if errors.As(r.Result.Err, &se) {
			rec.ErrorType = string(se.Type)
		}
		rec.ErrorMessage = st.redact(r.Result.Err.Error())
	}
	return rec
}

// HoldJoining writes a log record the joiner keeps for a call still being
// joined (logjoin.Config.Hold). A failed write is counted; the record stays
// in memory.
func (st *Keeper) HoldJoining(key logjoin.Key, rec plog.LogRecord, rl plog.ResourceLogs, sl plog.ScopeLogs) {
	st.mu.Lock()
	recovering := st.recovering
	st.mu.Unlock()
	if recovering || st.journal == nil {
		return
	}
	ld, recs := logjoin.NewLogsUnder(rl, sl)
	rec.CopyTo(recs.AppendEmpty())
	b, err := EncodeLogCall(ld, time.Now())
	if err != nil {
		st.writeFailed(OpJoin, err)
		return
	}
	k, err := st.journal.Hold(context.Background(), key.TraceID.String()+key.SpanID.String(), b)
	if err == nil {
		st.track(key, k, len(b))
	}
}

func (st *Keeper) track(key logjoin.Key, storageKey string, bytes int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	hc := st.held[key]
	if hc == nil {
		hc = &heldCall{}
		st.held[key] = hc
	}
	hc.keys = append(hc.keys, storageKey)
	hc.bytes += bytes
}

// Evaluated writes the calls just admitted, then deletes the held records
// of the calls that have been read (admitted or refused): from then on
// their item record, if any, stands for them. Without calls it does not
// wait for storage.
func (st *Keeper) Evaluated(groups []logjoin.Group) {
	if len(groups) == 0 || st.journal == nil {
		return
	}
	st.Commit()
	var keys []string
	bytes := 0
	st.mu.Lock()
	for _, g := range groups {
		if hc := st.held[g.Key]; hc != nil {
			keys, bytes = append(keys, hc.keys...), bytes+hc.bytes
			delete(st.held, g.Key)
		}
	}
	st.mu.Unlock()
	_ = st.journal.Release(context.Background(), keys, bytes)
}

func recoveredResult(rec Result) evalstore.Result {
	r := evalstore.Result{Scorer: rec.Scorer, At: rec.At, Ran: rec.Ran, Result: scoring.Result{
		Scorer: rec.Scorer, Score: rec.Score, Label: scoring.Label(rec.Label), Reason: rec.Reason,
	}}
	// A record of an earlier release has no Failed flag: its error type
	// (_OTHER at least) says that an error was recorded.
	if r.Result.Label == scoring.LabelError && (rec.Failed || rec.ErrorType != "") {
		r.Result.Err = storedError{typ: scoring.ErrorType(rec.ErrorType), text: rec.ErrorMessage}
	}
	return r
}

// storedError is a recorded evaluation failure: its type for error.type,
// its message as it was written before.
type storedError struct {
	typ  scoring.ErrorType
	text string
}

func (e storedError) Error() string { return e.text }

// As lets errors.As find the scoring error type.
func (e storedError) As(target any) bool {
	if t, ok := target.(**scoring.Error); ok {
		*t = &scoring.Error{Type: e.typ, Err: errors.New(e.text)}
		return true
	}
	return false
}

// ForStore is what the store needs of an item found in storage.
func ForStore(rec Recovered) evalstore.Recovered {
	r := evalstore.Recovered{ID: rec.ID, Admitted: rec.Item.Admitted, Results: make([]evalstore.Result, len(rec.Results))}
	for i, res := range rec.Results {
		r.Results[i] = recoveredResult(res)
	}
	return r
}

// recordBytes is the stored size of a joining record, for StoredBytes.
func recordBytes(ld plog.Logs) int {
	b, err := EncodeLogCall(ld, time.Time{})
	if err != nil {
		return 0
	}
	return len(b)
}

// Counters is what the storage counts and logs through.
type Counters struct {
	TB  *metadata.TelemetryBuilder
	Log *zap.Logger
	// LogFailure logs a failure of kind, rate-limited per kind.
	LogFailure func(kind, msg string, fields ...zap.Field)
}

// Journal is the journal opened by Open, for tests that stop it as a
// crash would.
func (st *Keeper) Journal() *Journal { return st.journal }

// Rejoin gives back the log records found at start waiting for the rest of
// their call: add hands each to the joiner, which returns the calls it
// completes. Records of a call stored as an item (a log call or a pair)
// are stale and deleted; the journal does not write again what it
// re-adds.
func (st *Keeper) Rejoin(add func(rec plog.LogRecord, rl plog.ResourceLogs, sl plog.ScopeLogs) []logjoin.Group) []logjoin.Group {
	st.mu.Lock()
	joining, admitted := st.joining, st.storedCalls
	st.joining, st.storedCalls = nil, nil
	st.recovering = true
	st.mu.Unlock()
	if st.journal == nil {
		return nil
	}
	var groups []logjoin.Group
	var stale []string
	staleBytes := 0
	for _, r := range joining {
		sl := r.Item.Logs.ResourceLogs().At(0).ScopeLogs().At(0)
		rec := sl.LogRecords().At(0)
		key := logjoin.Key{TraceID: rec.TraceID(), SpanID: rec.SpanID()}
		size := recordBytes(r.Item.Logs)
		if admitted[key] {
			stale, staleBytes = append(stale, r.Key), staleBytes+size
			continue
		}
		st.track(key, r.Key, size)
		groups = append(groups, add(rec, r.Item.Logs.ResourceLogs().At(0), sl)...)
		st.tel.TB.ProcessorLlmEvalStorageRecovered.Add(context.Background(), 1,
			metric.WithAttributes(attribute.String("outcome", "rejoined")))
	}
	st.mu.Lock()
	st.recovering = false
	st.mu.Unlock()
	_ = st.journal.Release(context.Background(), stale, staleBytes)
	return groups
}
