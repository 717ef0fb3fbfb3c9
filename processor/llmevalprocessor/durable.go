package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/durable"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/heldrecord"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/logjoin"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/pairing"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/storagefile"
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
	// A file the storage library cannot open or read is moved aside and
	// replaced by a fresh one, so that it never stops the collector.
	o, q, err := storagefile.Open(ctx, ext, st.self, time.Now(), func() (openedStorage, error) {
		return st.read(ctx, se)
	})
	if q != nil {
		st.tel.tb.ProcessorLlmEvalStorageFilesQuarantined.Add(ctx, 1)
		st.tel.logger.Error("storage: the storage file could not be opened, so it was moved aside and llm_eval started on a fresh one; "+
			"the spans and log calls it held when the collector last stopped are not recovered, and neither are their evaluations; "+
			"the damaged file is kept for inspection and can be deleted",
			zap.String("storage", st.extension.String()), zap.String("file", q.Path), zap.String("moved_to", q.MovedTo), zap.String("cause", q.Cause))
	}
	if err != nil {
		return err
	}
	j, found, readErr := o.journal, o.found, o.readErr
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

// openedStorage is the journal of a storage client and what was read from
// it at start.
type openedStorage struct {
	journal *durable.Journal
	found   durable.Found
	readErr error
}

// read gets the storage client from se and reads what the last run left.
// Errors name the storage key.
func (st *itemStorage) read(ctx context.Context, se storage.Extension) (openedStorage, error) {
	client, err := se.GetClient(ctx, component.KindProcessor, st.self, "")
	if err != nil {
		hint := ""
		if strings.Contains(err.Error(), "timeout") {
			// bbolt's file lock: file_storage waits its timeout for it.
			hint = " (is another collector using the same storage directory?)"
		}
		return openedStorage{}, fmt.Errorf("storage: extension %q could not open storage for %s: %w%s", st.extension, st.self, err, hint)
	}
	defer func() {
		if r := recover(); r != nil {
			closeQuietly(ctx, client)
			panic(r) // storagefile.Open moves the file aside
		}
	}()
	j, found, readErr, err := durable.Open(ctx, client, durable.Hooks{
		Written: st.written,
		Failed:  st.failed,
		Skipped: st.skipped,
	})
	if err != nil {
		_ = client.Close(ctx)
		return openedStorage{}, fmt.Errorf("storage: extension %q: %w", st.extension, err)
	}
	return openedStorage{journal: j, found: found, readErr: readErr}, nil
}

// closeQuietly closes a client that a damaged file made panic; closing it
// may panic too.
func closeQuietly(ctx context.Context, client storage.Client) {
	defer func() { _ = recover() }()
	_ = client.Close(ctx)
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

// recoveredResult turns a stored result back into the one it was.
func recoveredResult(rec heldrecord.Result) evalResult {
	r := evalResult{scorer: rec.Scorer, at: rec.At, ran: rec.Ran, result: scoring.Result{
		Scorer: rec.Scorer, Score: rec.Score, Label: scoring.Label(rec.Label), Reason: rec.Reason,
	}}
	if r.result.Label == scoring.LabelError {
		r.result.Err = storedError{typ: scoring.ErrorType(rec.ErrorType), text: rec.ErrorMessage}
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

// record implements storedSubject for a held span.
func (h *heldSpan) record(admitted time.Time) ([]byte, error) {
	return heldrecord.EncodeSpan(h.td, admitted)
}

// record implements storedSubject for a log call.
func (c *logCall) record(admitted time.Time) ([]byte, error) {
	return heldrecord.EncodeLogCall(c.group.Logs, admitted)
}

// record implements storedSubject for a call in the call table: the
// halves it has.
func (c *pairedCall) record(admitted time.Time) ([]byte, error) {
	switch {
	case c.span != nil && c.events != nil:
		return heldrecord.EncodePair(c.span.td, c.events.group.Logs, admitted)
	case c.span != nil:
		return c.span.record(admitted)
	}
	return c.events.record(admitted)
}

// recoverSpans puts the spans found in storage at start back into the
// store, or forwards them (recover). It runs in Start, after the consumers
// downstream have started: the collector starts components in reverse
// pipeline order.
//
// With the component in a traces and a logs pipeline, a span goes back into
// the call table (signaljoin.go): a span without content waits for its log
// events again.
func (p *llmEvalProcessor) recoverSpans() {
	if p.storage == nil {
		return
	}
	joining := p.store.joining.Load()
	for _, rec := range p.storage.take(heldrecord.KindSpan) {
		h := p.recoveredSpan(rec.Item.Traces)
		if joining && !h.agent {
			p.store.recover(&pairedCall{span: h}, rec)
			continue
		}
		if h.missing == "" && h.gen.Missing != "" {
			// A span stored waiting for its log events, recovered where
			// spans and events are no longer joined: nothing to judge.
			h.missing = h.gen.Missing
		}
		p.store.recover(h, rec)
	}
}

// recoverPairs puts the calls stored with both halves back into the store
// as one item, or forwards them, like recoverSpans; p is the traces
// instance. Such a call leaves through the consumers of both instances (its
// span, its result records): it runs in the Start of the last instance to
// start, once both have started.
func (p *llmEvalProcessor) recoverPairs() {
	if p.storage == nil {
		return
	}
	var logs *logsProcessor
	if p.shared != nil {
		logs = p.shared.logsInstance()
	}
	for _, rec := range p.storage.take(heldrecord.KindPair) {
		call := &pairedCall{}
		call.add(p.recoveredSpan(rec.Item.Traces))
		if logs != nil {
			call.add(logs.recoveredCall(rec.Item.Logs))
		} else {
			call.span.takeContent(genai.ReadLogs(rec.Item.Logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()))
		}
		p.store.recover(call, rec)
	}
}

// recoveredSpan is a held span read back from storage, read and filtered
// as it was at admission.
func (p *llmEvalProcessor) recoveredSpan(td ptrace.Traces) *heldSpan {
	rs := td.ResourceSpans().At(0)
	ss := rs.ScopeSpans().At(0)
	span := ss.Spans().At(0)
	agent := p.agents && genai.Classify(rs.Resource(), span) == genai.KindAggregate && genai.IsAgent(span)
	gen := genai.Read(span)
	if agent {
		gen = genai.ReadAgent(span)
	}
	return newHeldSpan(p.out, p.join, rs, ss, span, p.reading(rs, span, gen, agent))
}

// recoverCalls does for the log calls found in storage what recoverSpans
// does for spans, then gives the joiner back the log records that were
// waiting for the rest of their call; the call's window starts again.
// Records of a call that was admitted before the crash (stored as a log
// call or, with its span, as a pair) are dropped.
func (p *logsProcessor) recoverCalls() {
	st := p.core.storage
	if st == nil {
		return
	}
	joinsSignals := p.core.store.joining.Load()
	for _, rec := range st.take(heldrecord.KindLogCall) {
		call := p.recoveredCall(rec.Item.Logs)
		if joinsSignals {
			p.core.store.recover(&pairedCall{events: call}, rec)
			continue
		}
		p.core.store.recover(call, rec)
	}
	st.mu.Lock()
	joining, admitted := st.joining, st.storedCalls
	st.joining, st.storedCalls = nil, nil
	st.recovering = true
	st.mu.Unlock()
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
		groups = append(groups, p.joiner.Add(rec, r.Item.Logs.ResourceLogs().At(0), sl)...)
		p.core.tel.tb.ProcessorLlmEvalStorageRecovered.Add(context.Background(), 1,
			metric.WithAttributes(attribute.String("outcome", "rejoined")))
	}
	st.mu.Lock()
	st.recovering = false
	st.mu.Unlock()
	_ = st.journal.Release(context.Background(), stale, staleBytes)
	p.evaluate(context.Background(), groups)
}

// recordBytes is the stored size of a joining record, for StoredBytes.
func recordBytes(ld plog.Logs) int {
	b, err := heldrecord.EncodeLogCall(ld, time.Time{})
	if err != nil {
		return 0
	}
	return len(b)
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

func (p *logsProcessor) recoveredCall(ld plog.Logs) *logCall {
	rl := ld.ResourceLogs().At(0)
	recs := rl.ScopeLogs().At(0).LogRecords()
	first := recs.At(0)
	g := logjoin.Group{Key: logjoin.Key{TraceID: first.TraceID(), SpanID: first.SpanID()}, Logs: ld}
	gen := genai.ReadLogs(recs)
	return &logCall{
		p: p, gen: gen, group: g,
		excluded: p.core.scorerSel.excluded(rl.Resource().Attributes(), callAttributes(recs)),
		of:       evaluatedSpan{traceID: g.Key.TraceID, spanID: g.Key.SpanID, model: gen.Model, responseID: gen.ResponseID},
	}
}

// recover takes an item found in storage at start. While its max_wait
// (counted from its first admission) has not passed and the store has
// room, it goes back into the store with its recorded results and the
// missing evaluations are dispatched; it keeps its place in storage.
// Otherwise it is forwarded with the results it has and a restarted
// marker for each scorer that applies and has none, from a goroutine, so
// Start does not wait for the consumers.
func (s *evalStore) recover(subject evalSubject, rec durable.Recovered) {
	recorded := make(map[string]evalResult, len(rec.Results))
	for _, r := range rec.Results {
		recorded[r.Scorer] = recoveredResult(r)
	}
	ctx := context.Background() // the request's client.Info is not stored
	s.mu.Lock()
	now := time.Now()
	item := &admittedItem{
		subject:   subject,
		ctx:       ctx,
		admitted:  rec.Item.Admitted,
		expiresAt: rec.Item.Admitted.Add(s.maxWait),
		deadline:  rec.Item.Admitted.Add(s.maxWait + s.evalTimeout),
		results:   make([]*evalResult, len(s.scorers)),
		stored:    rec.ID,
	}
	for i, sc := range s.scorers {
		if r, ok := recorded[sc.cfg.Name]; ok {
			item.results[i] = &r
		} else {
			item.pending++
		}
	}
	resume := s.phase == phaseRunning && now.Before(item.expiresAt) && s.unfinished < s.capacity && item.pending > 0
	if resume {
		s.insertHeld(item)
		s.unfinished++
		if !s.recoverCall(item, now) {
			s.dispatch(item) // the scorers without a recorded result
		}
	} else {
		s.skipUnapplied(item, now) // scorers that do not apply get no marker
		s.workers.Add(1)           // shutdown waits for it to be forwarded
	}
	s.mu.Unlock()

	outcome := "resumed"
	if !resume {
		outcome = "forwarded"
		go func() {
			defer s.workers.Done()
			s.leave(item, leftRestarted)
		}()
	}
	s.tel.tb.ProcessorLlmEvalStorageRecovered.Add(ctx, 1, metric.WithAttributes(attribute.String("outcome", outcome)))
}

// recoverCall puts a recovered call back into the call table: a half
// waits for its other half again (its wait starts anew) and is not
// dispatched; a pair is tracked, so a late half is recognised. It reports
// whether the item waits. Called with mu held.
func (s *evalStore) recoverCall(item *admittedItem, now time.Time) bool {
	call, ok := item.subject.(*pairedCall)
	if !ok || s.calls == nil {
		return false
	}
	var key pairing.Key
	var side pairing.Side
	switch {
	case call.span != nil:
		key, side = pairing.Key{TraceID: call.span.of.traceID, SpanID: call.span.of.spanID}, pairing.Span
	default:
		key, side = pairing.Key{TraceID: call.events.of.traceID, SpanID: call.events.of.spanID}, pairing.Events
	}
	if st, _, _ := s.calls.State(key, now); !key.Valid() || st != pairing.Unknown {
		return false
	}
	item.call = key
	if call.span != nil && call.events != nil {
		s.calls.Track(key, pairing.Span, item)
		s.calls.Join(key, pairing.Events)
		return false
	}
	if side == pairing.Span && call.span.gen.Missing == "" {
		s.calls.Track(key, side, item) // a span with content is evaluated at once
		return false
	}
	s.calls.Wait(key, side, item, now)
	s.armCallTimer()
	return true
}

// insertHeld puts a recovered item into held in expiry order and re-arms
// the expiry timer when it expires first. Called with mu held.
func (s *evalStore) insertHeld(item *admittedItem) {
	e := s.held.Back()
	for e != nil && e.Value.(*admittedItem).expiresAt.After(item.expiresAt) {
		e = e.Prev()
	}
	if e == nil {
		item.elem = s.held.PushFront(item)
	} else {
		item.elem = s.held.InsertAfter(item, e)
	}
	if s.held.Front() == item.elem {
		s.armExpiry(max(time.Until(item.expiresAt), 0))
	}
}
