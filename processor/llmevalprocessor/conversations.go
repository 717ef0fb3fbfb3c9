package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/conversation"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadata"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/persistence"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/subject"
)

// conversationScoring is the part of a component for the scorers that
// target whole conversations: the open conversations
// (internal/conversation), the reader of conversation ids, and where a
// conversation's results go. It is nil when no scorer targets
// conversations: then no span is read for one.
type conversationScoring struct {
	keeper *conversation.Keeper
	// leftOut are the conversation scorers whose sampling leaves out a
	// conversation id.
	leftOut func(id string) map[string]bool
	ids     *genai.ConversationIDReader
	tel     *telemetry
	store   *evalstore.Store
	// out is where result spans go: the traces instance's. Set when that
	// instance is created, read when a conversation ends.
	out atomic.Pointer[subject.SpanOut]
}

// newConversationScoring makes the conversation part of cfg, or nil when no
// scorer targets conversations; journal keeps the open conversations in
// storage (nil: memory only).
func newConversationScoring(cfg *Config, tel *telemetry, store *evalstore.Store, sampler traceSampler, sel scorerSelection, journal conversation.Journal) (*conversationScoring, error) {
	targeted := false
	for _, sc := range cfg.Scorers {
		targeted = targeted || sc.hasTarget(targetConversation)
	}
	if !targeted {
		return nil, nil
	}
	cs := &conversationScoring{ids: genai.NewConversationIDReader(cfg.Conversation.IDAttributes), tel: tel, store: store,
		leftOut: func(id string) map[string]bool { return sel.conversationsLeftOut(cfg.Scorers, id) }}
	cc := cfg.Conversation
	cs.keeper = conversation.New(conversation.Config{
		IdleTimeout:          cc.IdleTimeout,
		MaxTurns:             cc.MaxTurns,
		MaxConversationBytes: cc.MaxConversationBytes,
		MaxConversations:     cc.MaxConversations,
		MaxBytes:             cc.MaxBytes,
		Sampled:              sampler.sampledID,
		OnEnd:                cs.ended,
		Journal:              journal,
		Observer:             conversationObserver{tel},
	})
	if err := tel.tb.RegisterProcessorLlmEvalConversationsOpenCallback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(int64(cs.keeper.Stats().Open))
		return nil
	}); err != nil {
		return nil, err
	}
	if err := tel.tb.RegisterProcessorLlmEvalConversationBytesCallback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(int64(cs.keeper.Stats().Bytes))
		return nil
	}); err != nil {
		return nil, err
	}
	return cs, nil
}

// ended admits a conversation that ended for scoring, or reports false
// when the store cannot take it now (it is handed on again a second
// later). It runs with the keeper's lock held, and the store never calls
// the keeper, so the locks are always taken in that order.
func (cs *conversationScoring) ended(e conversation.Ended) bool {
	out := cs.out.Load()
	if out == nil {
		return false // no traces instance: cannot happen, turns come from spans
	}
	ctx := context.Background()
	res := cs.store.Admit(ctx, func() evalstore.Subject {
		return subject.NewConversation(out, metadata.ScopeName, e, cs.leftOut(e.Key.ID))
	})
	if res != evalstore.Admitted {
		if res == evalstore.RejectedFull {
			cs.tel.logFailure("conversation:queue_full", "a conversation that ended waits for room: queue_size items are being evaluated; it is handed on again every second",
				zap.String("service", e.Key.Service), zap.String("conversation_id", e.Key.ID))
		}
		return false
	}
	cs.tel.tb.ProcessorLlmEvalConversationsEnded.Add(ctx, 1, conversationOutcome.scored)
	return true
}

// conversationScan is what the pass over a batch found for the open
// conversations: the spans that name a conversation id or may be a turn of
// one, and the id each trace of the batch names. A trace's root or agent
// span, which names the conversation, often comes after the generations
// below it in the same batch, so turns are offered only once the whole
// batch was scanned.
type conversationScan struct {
	found   []spanOfConversation
	byTrace map[pcommon.TraceID]string
}

// scan looks at one span of a batch, classified as kind, at index
// (resource, scope, span) at. Most spans are neither a turn nor carry an
// id: they cost one look at their attributes' keys and no allocation.
func (cs *conversationScoring) scan(sc *conversationScan, at [3]int, rs ptrace.ResourceSpans, span ptrace.Span, kind genai.Kind) {
	id := cs.ids.Read(span.Attributes())
	if id.TooLong {
		cs.tel.conversationLimited(conversation.LimitIDTooLong, 1)
		cs.tel.logFailure("conversation:id_too_long", "a span's conversation id is longer than 256 bytes: it was not grouped into a conversation and is evaluated on its own",
			zap.String("service", genai.ServiceName(rs.Resource())), zap.String("attribute", id.Key))
	}
	agent := kind == genai.KindAggregate && genai.IsAgent(span)
	if id.ID == "" && kind != genai.KindGeneration && !agent {
		return
	}
	if id.ID != "" {
		if sc.byTrace == nil {
			sc.byTrace = map[pcommon.TraceID]string{}
		}
		if _, ok := sc.byTrace[span.TraceID()]; !ok {
			sc.byTrace[span.TraceID()] = id.ID
		}
	}
	sc.found = append(sc.found, spanOfConversation{at: at, rs: rs, span: span, id: id.ID, agent: agent, turn: kind == genai.KindGeneration || agent})
}

// offer hands what the scan found to the open conversations: a span that
// names a conversation id, and a generation or agent span that is a turn
// of one (its own id, or its trace's). candidates are the batch's sampled
// generations, whose content is read once for both uses; offer notes each
// one's conversation for its case's history. It reports whether records
// were queued in storage.
func (cs *conversationScoring) offer(sc *conversationScan, candidates []generationAt, filter spanFilter) (queued bool) {
	if len(sc.found) == 0 {
		return false
	}
	at := make(map[[3]int]int, len(candidates))
	for i, c := range candidates {
		at[[3]int{c.resource, c.scope, c.span}] = i
	}
	for _, f := range sc.found {
		var cand *generationAt
		if c, ok := at[f.at]; ok {
			cand = &candidates[c]
		}
		if f.id == "" {
			f.id = sc.byTrace[f.span.TraceID()]
		}
		if cs.offerSpan(f, cand, filter) {
			queued = true
		}
	}
	return queued
}

// spanOfConversation is a span of a batch that names a conversation id or
// may be a turn of one: a generation or an agent span.
type spanOfConversation struct {
	at    [3]int // resource, scope and span index in the batch
	rs    ptrace.ResourceSpans
	span  ptrace.Span
	id    string // its conversation id, its own or its trace's in the batch
	agent bool
	turn  bool
}

// offerSpan offers one span (see offer).
func (cs *conversationScoring) offerSpan(f spanOfConversation, cand *generationAt, filter spanFilter) bool {
	rs, span, id, agent := f.rs, f.span, f.id, f.agent
	service := genai.ServiceName(rs.Resource())
	turn := f.turn && filter.passes(rs.Resource().Attributes(), span.Attributes())
	if id == "" && (!turn || !cs.keeper.Wants(service, span.TraceID())) {
		return false
	}
	var ex *conversation.Exchange
	if turn {
		gen := readTurn(span, agent, cand)
		if gen.Missing == "" && strings.TrimSpace(gen.Input) != "" && strings.TrimSpace(gen.Output) != "" {
			ex = &conversation.Exchange{
				TraceID: span.TraceID(), SpanID: span.SpanID(),
				Start: span.StartTimestamp().AsTime(), End: span.EndTimestamp().AsTime(),
				Agent: agent, Model: gen.Model, AgentName: subject.AgentName(span),
				Input: gen.Input, Output: gen.Output, Instructions: gen.SystemInstructions,
				Resource: rs.Resource(),
			}
		}
	}
	if cand != nil && id != "" {
		cand.conversation = conversation.Key{Service: service, ID: id}
	}
	return cs.keeper.Offer(service, id, span.TraceID(), ex)
}

// readTurn reads a span as a turn, reusing what the candidate read, or
// leaving what it read for the candidate's admission.
func readTurn(span ptrace.Span, agent bool, cand *generationAt) genai.Generation {
	if cand != nil && cand.gen != nil && cand.agent == agent {
		return *cand.gen
	}
	var gen genai.Generation
	if agent {
		gen = genai.ReadAgent(span)
	} else {
		gen = genai.Read(span)
	}
	if cand != nil && cand.agent == agent {
		cand.gen = &gen
	}
	return gen
}

// historyOf gives a follow-up turn without history of its own (a library
// that sends each call only its new message) the conversation so far: the
// turns of its conversation that started before it, at most
// genai.MaxHistoryTurns messages, as the genai readers give the history a
// call's own input holds. cs may be nil (no conversations).
func (cs *conversationScoring) historyOf(gen *genai.Generation, at generationAt, span ptrace.Span) {
	if cs == nil || at.conversation.ID == "" || len(gen.History) > 0 {
		return
	}
	for _, ex := range cs.keeper.History(at.conversation, span.StartTimestamp().AsTime(), genai.MaxHistoryTurns/2) {
		gen.History = append(gen.History,
			genai.Turn{Role: genai.RoleUser, Content: ex.Input}, genai.Turn{Role: genai.RoleAssistant, Content: ex.Output})
	}
}

// restoreFrom puts back what storage held of conversations: the
// open ones into the keeper, the ended ones being scored into store.
// Without a conversation scorer (cs nil) they are dropped from storage.
func (cs *conversationScoring) restoreFrom(storage *persistence.Keeper, store *evalstore.Store, logger *zap.Logger) {
	open := storage.TakeConversations()
	ended := storage.Take(persistence.KindConversation)
	if cs == nil || cs.out.Load() == nil {
		var ids []uint64
		for _, r := range open {
			ids = append(ids, r.ID)
		}
		storage.Removed(ids...)
		for _, rec := range ended {
			storage.Left(rec.ID)
		}
		if len(open)+len(ended) > 0 {
			logger.Warn("storage held conversations, but no scorer targets conversations now: they were dropped",
				zap.Int("records", len(open)), zap.Int("ended", len(ended)))
		}
		return
	}
	for _, rec := range ended {
		conv := rec.Item.Conversation
		store.Recover(subject.NewConversation(cs.out.Load(), metadata.ScopeName, conv, cs.leftOut(conv.Key.ID)), persistence.ForStore(rec))
	}
	if n := cs.keeper.Restore(open); n > 0 {
		logger.Info("open conversations recovered from storage; each ends conversation.idle_timeout after its last turn arrived",
			zap.Int("conversations", n))
	}
}

// stopEnding stops ending conversations at shutdown. Those open stay in
// storage for the next start (kept), or are lost without storage. cs may
// be nil.
func (cs *conversationScoring) stopEnding(kept bool) {
	if cs == nil {
		return
	}
	n := cs.keeper.Stop()
	if n == 0 {
		return
	}
	if kept {
		cs.tel.logger.Info("open conversations are kept in storage and scored after the next start", zap.Int("conversations", n))
		return
	}
	cs.tel.tb.ProcessorLlmEvalConversationsEnded.Add(context.Background(), int64(n), conversationOutcome.lost)
	cs.tel.logger.Warn("open conversations were not scored: the collector shut down before their idle timeout passed, and without storage they are not kept",
		zap.Int("conversations", n))
}

// conversationObserver counts and says what the conversation bounds did.
type conversationObserver struct{ t *telemetry }

func (o conversationObserver) Limited(limit string, messages int, key conversation.Key, first bool) {
	o.t.conversationLimited(limit, messages)
	if !first {
		return
	}
	msg := conversationLimitMessages[limit]
	o.t.logFailure("conversation:"+limit, msg, zap.String("service", key.Service), zap.String("conversation_id", key.ID), zap.Int("messages", messages))
}

// conversationLimitMessages say what each bound did, in its log line.
var conversationLimitMessages = map[string]string{
	conversation.LimitMaxTurns: "a conversation passed conversation.max_turns: its first and latest messages are kept, " +
		"those between are left out, and the judge is told how many",
	conversation.LimitMaxConversationBytes: "a conversation's texts passed conversation.max_conversation_bytes: messages between its first and latest ones are left out, " +
		"and the judge is told how many",
	conversation.LimitMessageCut: "a message longer than a quarter of conversation.max_conversation_bytes was cut",
	conversation.LimitMaxConversations: "conversation.max_conversations conversations are open: the turns of a new one are refused, " +
		"and its spans are still evaluated on their own",
	conversation.LimitMaxBytes: "the open conversations hold conversation.max_bytes: a turn was refused, and its span is still evaluated on its own",
	conversation.LimitLate: "a turn arrived after its conversation had ended and been scored without it: refused " +
		"(its span is still evaluated on its own)",
}

// conversationLimited counts messages a conversation bound acted on.
func (t *telemetry) conversationLimited(limit string, messages int) {
	t.tb.ProcessorLlmEvalConversationMessagesLimited.Add(context.Background(), int64(messages),
		metric.WithAttributes(attribute.String("limit", limit)))
}

// conversationOutcome are the attribute sets of conversations_ended.
var conversationOutcome = struct{ scored, lost metric.MeasurementOption }{
	scored: metric.WithAttributeSet(attribute.NewSet(attribute.String("outcome", "scored"))),
	lost:   metric.WithAttributeSet(attribute.NewSet(attribute.String("outcome", "lost"))),
}

// conversationsLeftOut are the conversation scorers whose sampling leaves
// out the conversation id: their sample is decided by the id with the
// processor's hash, as a span scorer's is by the trace id.
func (s scorerSelection) conversationsLeftOut(scorers []ScorerConfig, id string) map[string]bool {
	var out map[string]bool
	for _, sc := range scorers {
		sm, ok := s.samplers[sc.Name]
		if !ok || !sc.conversationScorer() || sm.sampledID(id) {
			continue
		}
		if out == nil {
			out = map[string]bool{}
		}
		out[sc.Name] = true
	}
	return out
}
