package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/durable"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/heldrecord"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/logjoin"
	"github.com/llm-eval/llm_eval/scoring"
)

// This file connects the store to storage (the storage setting): the
// store's hooks write through internal/durable, and at start the items
// found there go back into the store or are forwarded.

// itemJournal is what the store tells storage. A failed write is counted
// and leaves the item in memory.
type itemJournal interface {
	// admitted queues an item just admitted, before its evaluations are
	// dispatched; the admitting ConsumeTraces or ConsumeLogs writes it
	// (commit) before it returns. Called with the store's lock held: it
	// only queues, never waiting for a write in progress.
	admitted(item *admittedItem, now time.Time)
	// rewritten queues the record of an item that took in the other half
	// of its call in place of the one before, written by the joining
	// ConsumeTraces or ConsumeLogs before it returns. Called with the
	// store's lock held; it only queues.
	rewritten(item *admittedItem)
	// finished queues a result of a held item that still waits for
	// others, written within durable.ResultDelay.
	finished(item *admittedItem, r evalResult)
	// left removes an item that has been sent on; it returns after the
	// delete.
	left(item *admittedItem)
}

// storedSubject is a subject that storage can keep: a held span or a log
// call.
type storedSubject interface {
	record(admitted time.Time) ([]byte, error)
}

// itemStorage is the itemJournal of one llm_eval component. It holds the
// items found at start until the instance of their signal takes them.
type itemStorage struct {
	extension component.ID // the storage extension
	self      component.ID // this processor, naming its storage client
	tel       *telemetry
	redact    func(string) string
	journal   *durable.Journal // set by open
	opAttrs   map[durable.Op]metric.MeasurementOption

	mu      sync.Mutex
	found   map[heldrecord.Kind][]durable.Recovered
	joining []durable.Joining // log records found waiting for their call
	// storedCalls are the calls found stored as items with their log
	// records (a log call or a pair): joining records of theirs are stale.
	storedCalls map[logjoin.Key]bool
	// held are the stored records of each call being joined; recovering
	// stops holdJoining from writing the records it re-joins at start.
	held       map[logjoin.Key]*heldCall
	recovering bool
}

// heldCall is what is stored of one call being joined.
type heldCall struct {
	keys  []string
	bytes int
}

func newItemStorage(extension, self component.ID, tel *telemetry, redact func(string) string) *itemStorage {
	st := &itemStorage{extension: extension, self: self, tel: tel, redact: redact, opAttrs: map[durable.Op]metric.MeasurementOption{}}
	for _, op := range []durable.Op{durable.OpAdmit, durable.OpResult, durable.OpRemove, durable.OpJoin} {
		st.opAttrs[op] = metric.WithAttributeSet(attribute.NewSet(attribute.String("op", string(op))))
	}
	return st
}

// open gets the storage client from the extension and reads what the last
// run left. Errors name the storage key.
func (st *itemStorage) open(ctx context.Context, host component.Host) error {
	ext, ok := host.GetExtensions()[st.extension]
	if !ok {
		return fmt.Errorf("storage: extension %q not found: configure it under extensions and list it in service::extensions", st.extension)
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return fmt.Errorf("storage: extension %q is not a storage extension (such as file_storage)", st.extension)
	}
	client, err := se.GetClient(ctx, component.KindProcessor, st.self, "")
	if err != nil {
		hint := ""
		if strings.Contains(err.Error(), "timeout") {
			// bbolt's file lock: file_storage waits its timeout for it.
			hint = " (is another collector using the same storage directory?)"
		}
		return fmt.Errorf("storage: extension %q could not open storage for %s: %w%s", st.extension, st.self, err, hint)
	}
	j, found, readErr, err := durable.Open(ctx, client, durable.Hooks{
		Written: st.written,
		Failed:  st.failed,
		Skipped: st.skipped,
	})
	if err != nil {
		_ = client.Close(ctx)
		return fmt.Errorf("storage: extension %q: %w", st.extension, err)
	}
	if readErr != nil {
		st.tel.logger.Error("storage: could not read the records of the last run; starting without them",
			zap.String("extension", st.extension.String()), zap.Error(readErr))
	}
	st.journal = j
	st.found = map[heldrecord.Kind][]durable.Recovered{}
	st.storedCalls = map[logjoin.Key]bool{}
	for _, rec := range found.Items {
		st.found[rec.Item.Kind] = append(st.found[rec.Item.Kind], rec)
		if rec.Item.Kind == heldrecord.KindLogCall || rec.Item.Kind == heldrecord.KindPair {
			first := rec.Item.Logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
			st.storedCalls[logjoin.Key{TraceID: first.TraceID(), SpanID: first.SpanID()}] = true
		}
	}
	st.joining = found.Joining
	st.held = map[logjoin.Key]*heldCall{}
	return st.tel.tb.RegisterProcessorLlmEvalStorageBytesCallback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(j.StoredBytes())
		return nil
	})
}

// take hands over the items of one kind found at start, once.
func (st *itemStorage) take(kind heldrecord.Kind) []durable.Recovered {
	st.mu.Lock()
	defer st.mu.Unlock()
	recs := st.found[kind]
	delete(st.found, kind)
	return recs
}

func (st *itemStorage) close(ctx context.Context) error {
	if st.journal == nil {
		return nil
	}
	if err := st.journal.Close(ctx); err != nil {
		return fmt.Errorf("llm_eval: storage: %w", err)
	}
	return nil
}

func (st *itemStorage) admitted(item *admittedItem, now time.Time) {
	ss, ok := item.subject.(storedSubject)
	if !ok {
		return
	}
	rec, err := ss.record(now)
	if err != nil { // too large: held in memory only
		st.failed(durable.OpAdmit, err)
		return
	}
	item.stored = st.journal.Queue(rec)
}

func (st *itemStorage) rewritten(item *admittedItem) {
	if item.stored == 0 {
		st.admitted(item, item.admitted)
		return
	}
	ss, ok := item.subject.(storedSubject)
	if !ok {
		return
	}
	rec, err := ss.record(item.admitted)
	if err != nil { // too large: the record before stands for the item
		st.failed(durable.OpAdmit, err)
		return
	}
	st.journal.Rewrite(item.stored, rec)
}

// commit writes the items admitted so far: ConsumeTraces and the logs
// instance's evaluate call it before they return, so that the items of one
// batch share a transaction.
func (st *itemStorage) commit() {
	_ = st.journal.Commit(context.Background()) // a failure is counted; the items stay in memory
}

func (st *itemStorage) finished(item *admittedItem, r evalResult) {
	if item.stored == 0 {
		return
	}
	rec, err := heldrecord.EncodeResult(st.resultRecord(r))
	if err != nil {
		st.failed(durable.OpResult, err)
		return
	}
	st.journal.Record(item.stored, r.scorer, rec)
}

func (st *itemStorage) left(item *admittedItem) {
	if item.stored != 0 {
		_ = st.journal.Remove(context.Background(), item.stored)
	}
}

func (st *itemStorage) written(op durable.Op, n int) {
	ctx := context.Background()
	st.tel.tb.ProcessorLlmEvalStorageWrites.Add(ctx, 1, st.opAttrs[op])
	if n > 0 {
		st.tel.tb.ProcessorLlmEvalStorageWrittenBytes.Add(ctx, int64(n))
	}
}

func (st *itemStorage) failed(op durable.Op, err error) {
	st.tel.tb.ProcessorLlmEvalStorageWriteFailures.Add(context.Background(), 1, st.opAttrs[op])
	st.tel.logFailure("storage:"+string(op), "storage write failed; the item is kept in memory and evaluated as without storage",
		zap.String("op", string(op)), zap.String("extension", st.extension.String()), zap.Error(err))
}

func (st *itemStorage) skipped(reason durable.SkipReason, key string, err error) {
	st.tel.tb.ProcessorLlmEvalStorageRecordsSkipped.Add(context.Background(), 1,
		metric.WithAttributes(attribute.String("reason", string(reason))))
	st.tel.logFailure("storage-skip:"+string(reason), "storage: record of the last run skipped and deleted",
		zap.String("reason", string(reason)), zap.String("key", key), zap.Error(err))
}

// resultRecord is what is stored of a result: what leave writes, with the
// texts already scrubbed of the judge's secrets.
func (st *itemStorage) resultRecord(r evalResult) heldrecord.Result {
	rec := heldrecord.Result{
		Scorer: r.scorer,
		Label:  string(r.label()),
		Score:  r.result.Score,
		Reason: st.redact(r.result.Reason),
		At:     r.at,
		Ran:    r.ran,
	}
	if r.label() == scoring.LabelError {
		rec.ErrorType = r.errorType()
		rec.ErrorMessage = r.explanation(st.redact)
	}
	return rec
}

// holdJoining writes a log record the joiner keeps for a call still being
// joined (logjoin.Config.Hold). A failed write is counted; the record stays
// in memory.
func (st *itemStorage) holdJoining(key logjoin.Key, rec plog.LogRecord, rl plog.ResourceLogs, sl plog.ScopeLogs) {
	st.mu.Lock()
	recovering := st.recovering
	st.mu.Unlock()
	if recovering {
		return
	}
	ld, recs := logjoin.NewLogsUnder(rl, sl)
	rec.CopyTo(recs.AppendEmpty())
	b, err := heldrecord.EncodeLogCall(ld, time.Now())
	if err != nil {
		st.failed(durable.OpJoin, err)
		return
	}
	k, err := st.journal.Hold(context.Background(), key.TraceID.String()+key.SpanID.String(), b)
	if err == nil {
		st.track(key, k, len(b))
	}
}

func (st *itemStorage) track(key logjoin.Key, storageKey string, bytes int) {
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

// evaluated writes the calls just admitted, then deletes the held records
// of the calls that have been read (admitted or refused): from then on
// their item record, if any, stands for them. Without calls it does not
// wait for storage.
func (st *itemStorage) evaluated(groups []logjoin.Group) {
	if len(groups) == 0 {
		return
	}
	st.commit()
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
