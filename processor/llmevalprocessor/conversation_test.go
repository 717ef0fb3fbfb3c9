package llmevalprocessor

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/persistence"
	"github.com/llm-eval/llm_eval/scoring"
)

// recordedScorer is a fake scorer that passes and keeps the cases it saw.
type recordedScorer struct {
	*fakeScorer
	mu    sync.Mutex
	cases []scoring.Case
}

func caseKeepingScorer(name string) *recordedScorer {
	r := &recordedScorer{}
	r.fakeScorer = &fakeScorer{name: name, fn: func(_ context.Context, c scoring.Case) scoring.Result {
		r.mu.Lock()
		r.cases = append(r.cases, c)
		r.mu.Unlock()
		return scoring.Result{Score: 0.9, Label: scoring.LabelPass, Reason: name + " reason", Usage: scoring.Usage{LLMCalls: 3}}
	}}
	return r
}

func (r *recordedScorer) seen() []scoring.Case {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]scoring.Case(nil), r.cases...)
}

// conversationConfig scores bias per turn and completeness per
// conversation; the tests end conversations by hand (endConversations),
// the idle timeout being an hour.
func conversationConfig() *Config {
	cfg := testConfig(scoring.Bias)
	sc := defaultScorerConfig(scoring.ConversationCompleteness)
	sc.Targets = []string{targetConversation}
	cfg.Scorers = append(cfg.Scorers, sc)
	cfg.Conversation.IdleTimeout = time.Hour
	cfg.Cache.Enabled = false
	return cfg
}

// endConversations ends every open conversation of h now, as its timer
// would once their idle timeout passed.
func endConversations(h *harness) {
	h.t.Helper()
	h.p.convs.keeper.EndIdle(time.Now().Add(48 * time.Hour))
}

// turn is one exchange of a test conversation.
type turn struct {
	service, id string // service.name; the conversation id, "" for none
	history     []string
	in, out     string
	start       time.Time
}

// turnBatch is a batch of one generation span per turn, each in its own
// trace, under its service's resource.
func turnBatch(turns ...turn) (ptrace.Traces, []pcommon.SpanID) {
	td := ptrace.NewTraces()
	var ids []pcommon.SpanID
	for _, tn := range turns {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", tn.service)
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName("opentelemetry.instrumentation.openai_v2")
		s := ss.Spans().AppendEmpty()
		s.SetTraceID(randomTraceID())
		s.SetSpanID(nextSpanID())
		s.SetName("chat gpt-4o-mini")
		start := tn.start
		if start.IsZero() {
			start = time.Now()
		}
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Second)))
		a := s.Attributes()
		a.PutStr("gen_ai.operation.name", "chat")
		a.PutStr("gen_ai.request.model", "gpt-4o-mini")
		if tn.id != "" {
			a.PutStr("gen_ai.conversation.id", tn.id)
		}
		msgs := []map[string]any{}
		for i, h := range tn.history {
			role := "user"
			if i%2 == 1 {
				role = "assistant"
			}
			msgs = append(msgs, map[string]any{"role": role, "parts": []map[string]any{{"type": "text", "content": h}}})
		}
		msgs = append(msgs, map[string]any{"role": "user", "parts": []map[string]any{{"type": "text", "content": tn.in}}})
		in, _ := json.Marshal(msgs)
		out, _ := json.Marshal([]map[string]any{{"role": "assistant", "finish_reason": "stop", "parts": []map[string]any{{"type": "text", "content": tn.out}}}})
		a.PutStr("gen_ai.input.messages", string(in))
		a.PutStr("gen_ai.output.messages", string(out))
		a.PutStr("gen_ai.system_instructions", `[{"type":"text","content":"You are the shop's support assistant."}]`)
		ids = append(ids, s.SpanID())
	}
	return td, ids
}

// conversationSpans are the result spans of conversations in the sink,
// by conversation id and service.
func conversationSpans(h *harness) map[[2]string][]outSpan { return conversationSpansOf(h.sink) }

func conversationSpansOf(sink *consumertest.TracesSink) map[[2]string][]outSpan {
	byID, _ := sinkSpans(sink)
	out := map[[2]string][]outSpan{}
	for _, s := range byID {
		id, ok := s.span.Attributes().Get(evalconv.AttrConversationID)
		if !ok || s.span.Name() != evalconv.LateSpanName {
			continue // a turn's own span
		}
		svc, _ := s.resource.Attributes().Get("service.name")
		out[[2]string{svc.Str(), id.Str()}] = append(out[[2]string{svc.Str(), id.Str()}], s)
	}
	return out
}

func TestConversationScoredOnceAfterIdleTimeout(t *testing.T) {
	bias := fixedScorer(scoring.Bias, 0.1, scoring.LabelPass)
	comp := caseKeepingScorer(scoring.ConversationCompleteness)
	h := newHarness(t, conversationConfig(), bias, comp.fakeScorer)
	t0 := time.Now()
	var turnIDs []pcommon.SpanID
	for i, tn := range []turn{
		{service: "shop", id: "thread-1", in: "I want to return my bike.", out: "Sure, what is the order number?", start: t0},
		{service: "shop", id: "thread-1", history: []string{"I want to return my bike.", "Sure, what is the order number?"}, in: "It is 1042.", out: "Your return label is on its way.", start: t0.Add(time.Second)},
		{service: "shop", in: "Hi", out: "Hello", start: t0}, // no id: scored per turn only
	} {
		td, ids := turnBatch(tn)
		h.consume(td)
		turnIDs = append(turnIDs, ids...)
		h.waitSpans(i + 1) // each span leaves with its per-turn results; none waits for its conversation
	}
	assert.Empty(t, comp.seen(), "nothing is scored before the idle timeout")
	byID, counts := sinkSpans(h.sink)
	for _, id := range turnIDs {
		assert.Equal(t, 1, counts[id], "every span leaves once")
		assert.Contains(t, evaluationEvents(byID[id].span), scoring.Bias)
		assert.NotContains(t, evaluationEvents(byID[id].span), scoring.ConversationCompleteness)
	}
	assert.Equal(t, int64(1), gaugeOf(t, h.tel, "otelcol_processor_llm_eval_conversations_open"))

	endConversations(h)
	h.waitSpans(4)
	require.Len(t, comp.seen(), 1, "one evaluation per conversation")
	c := comp.seen()[0]
	assert.Equal(t, []scoring.Turn{
		{Role: scoring.RoleUser, Content: "I want to return my bike."},
		{Role: scoring.RoleAssistant, Content: "Sure, what is the order number?"},
		{Role: scoring.RoleUser, Content: "It is 1042."},
		{Role: scoring.RoleAssistant, Content: "Your return label is on its way."},
	}, c.Turns)
	assert.Equal(t, []string{"You are the shop's support assistant."}, c.Instructions)

	spans := conversationSpans(h)
	require.Len(t, spans, 1)
	rs := spans[[2]string{"shop", "thread-1"}]
	require.Len(t, rs, 1)
	s := rs[0].span
	assert.Equal(t, turnIDs[1], s.ParentSpanID(), "a child of the conversation's last turn")
	assert.Equal(t, byID[turnIDs[1]].span.TraceID(), s.TraceID())
	assert.Equal(t, evalconv.LateSpanName, s.Name())
	events := evaluationEvents(s)
	require.Len(t, events, 1)
	ev := events[scoring.ConversationCompleteness]
	id, _ := ev.Get(evalconv.AttrConversationID)
	assert.Equal(t, "thread-1", id.Str(), "the result names its conversation")
	label, _ := ev.Get(evalconv.AttrScoreLabel)
	assert.Equal(t, "pass", label.Str())
	model, _ := s.Attributes().Get(evalconv.AttrRequestModel)
	assert.Equal(t, "gpt-4o-mini", model.Str())
	msgs, _ := s.Attributes().Get(evalconv.AttrConversationMessages)
	assert.Equal(t, int64(4), msgs.Int())
	assert.Equal(t, int64(1), sumOf(t, h.tel, "otelcol_processor_llm_eval_conversations_ended", attribute.String("outcome", "scored")))
	assert.Equal(t, int64(0), gaugeOf(t, h.tel, "otelcol_processor_llm_eval_conversations_open"))
	assert.Equal(t, int64(3), bias.calls.Load(), "bias scored each turn, of the conversation or not")
}

func TestConversationTwoServicesOneID(t *testing.T) {
	comp := caseKeepingScorer(scoring.ConversationCompleteness)
	h := newHarness(t, conversationConfig(), fixedScorer(scoring.Bias, 0.1, scoring.LabelPass), comp.fakeScorer)
	td, _ := turnBatch(
		turn{service: "shop", id: "42", in: "Where is my bike?", out: "It shipped."},
		turn{service: "bank", id: "42", in: "What is my balance?", out: "100 EUR."},
	)
	h.consume(td)
	h.waitSpans(2)
	endConversations(h)
	h.waitSpans(4)
	spans := conversationSpans(h)
	require.Len(t, spans, 2, "kept apart by service")
	for _, svc := range []string{"shop", "bank"} {
		require.Len(t, spans[[2]string{svc, "42"}], 1)
	}
	for _, c := range comp.seen() {
		assert.Len(t, c.Turns, 2)
	}
}

func TestConversationIDOfOneMegabyteIsRefused(t *testing.T) {
	comp := caseKeepingScorer(scoring.ConversationCompleteness)
	bias := fixedScorer(scoring.Bias, 0.1, scoring.LabelPass)
	h := newHarness(t, conversationConfig(), bias, comp.fakeScorer)
	td, ids := turnBatch(turn{service: "shop", id: strings.Repeat("x", 1<<20), in: "q", out: "a"})
	h.consume(td)
	h.waitSpans(1)
	byID, _ := sinkSpans(h.sink)
	assert.Contains(t, evaluationEvents(byID[ids[0]].span), scoring.Bias, "the span is scored per turn as without an id")
	assert.Equal(t, int64(1), sumOf(t, h.tel, "otelcol_processor_llm_eval_conversation_messages_limited", attribute.String("limit", "id_too_long")))
	endConversations(h)
	h.waitIdle()
	assert.Empty(t, comp.seen())
	assert.Empty(t, conversationSpans(h))
	assert.Equal(t, int64(0), gaugeOf(t, h.tel, "otelcol_processor_llm_eval_conversations_open"))
}

func TestConversationOfTenThousandTurnsIsBoundedAndSaid(t *testing.T) {
	comp := caseKeepingScorer(scoring.ConversationCompleteness)
	cfg := conversationConfig()
	cfg.Scorers = cfg.Scorers[1:] // conversations only: spans pass at once
	h := newHarness(t, cfg, comp.fakeScorer)
	const n = 10_000
	t0 := time.Now().Add(-time.Hour)
	for b := range n / 500 {
		var turns []turn
		for i := range 500 {
			k := b*500 + i
			turns = append(turns, turn{service: "shop", id: "long", in: fmt.Sprint("question ", k), out: fmt.Sprint("answer ", k), start: t0.Add(time.Duration(k) * time.Millisecond)})
		}
		td, _ := turnBatch(turns...)
		h.consume(td)
	}
	h.waitSpans(n)
	endConversations(h)
	h.waitSpans(n + 1)
	_, counts := sinkSpans(h.sink)
	assert.Len(t, counts, n+1, "every span left once, and one result span")
	require.Len(t, comp.seen(), 1)
	c := comp.seen()[0]
	assert.LessOrEqual(t, len(c.Turns), scoring.DefaultMaxTurns, "bounded to max_turns lines")
	assert.Equal(t, 2*n, scoring.TurnCount(c.Turns), "the judge is told of every message")
	omitted := 0
	for _, tn := range c.Turns {
		if tn.Role == scoring.RoleOmitted {
			omitted += tn.Count
		}
	}
	assert.Equal(t, "question 0", c.Turns[0].Content)
	assert.Equal(t, fmt.Sprint("answer ", n-1), c.Turns[len(c.Turns)-1].Content)
	assert.Equal(t, int64(omitted), sumOf(t, h.tel, "otelcol_processor_llm_eval_conversation_messages_limited", attribute.String("limit", "max_turns")),
		"what was left out is counted")
	spans := conversationSpans(h)[[2]string{"shop", "long"}]
	require.Len(t, spans, 1)
	om, _ := spans[0].span.Attributes().Get(evalconv.AttrConversationOmitted)
	assert.Equal(t, int64(omitted), om.Int(), "and said on the result span")
}

func TestConversationLateTurnIsRefusedAndCounted(t *testing.T) {
	comp := caseKeepingScorer(scoring.ConversationCompleteness)
	h := newHarness(t, conversationConfig(), fixedScorer(scoring.Bias, 0.1, scoring.LabelPass), comp.fakeScorer)
	t0 := time.Now()
	td, _ := turnBatch(turn{service: "shop", id: "c", in: "second", out: "b", start: t0.Add(time.Second)})
	h.consume(td)
	h.waitSpans(1)
	endConversations(h)
	require.Eventually(t, func() bool { return len(comp.seen()) == 1 }, 10*time.Second, 5*time.Millisecond)
	td, ids := turnBatch(turn{service: "shop", id: "c", in: "first", out: "a", start: t0}) // exported after its conversation ended
	h.consume(td)
	h.waitSpans(3)
	byID, _ := sinkSpans(h.sink)
	assert.Contains(t, evaluationEvents(byID[ids[0]].span), scoring.Bias, "still scored per turn")
	assert.Equal(t, int64(2), sumOf(t, h.tel, "otelcol_processor_llm_eval_conversation_messages_limited", attribute.String("limit", "late")))
	endConversations(h)
	h.waitIdle()
	assert.Len(t, comp.seen(), 1, "no second conversation of one late turn")
}

// Langfuse and Mastra put the id on the run's root or agent span, which
// arrives after the generation below it.
func TestConversationIDFromTheTracesRootSpan(t *testing.T) {
	comp := caseKeepingScorer(scoring.ConversationCompleteness)
	h := newHarness(t, conversationConfig(), fixedScorer(scoring.Bias, 0.1, scoring.LabelPass), comp.fakeScorer)
	// The service once named an id: its turns without one wait for their trace's.
	td, _ := turnBatch(turn{service: "shop", id: "s-1", in: "first", out: "a1"})
	h.consume(td)
	gen, _ := turnBatch(turn{service: "shop", in: "second", out: "a2", start: time.Now().Add(time.Second)})
	trace := gen.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID()
	h.consume(gen)
	root := ptrace.NewTraces()
	rs := root.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "shop")
	addRootSpan(rs.ScopeSpans().AppendEmpty().Spans(), trace, "s-1")
	h.consume(root)
	h.waitSpans(3)
	endConversations(h)
	h.waitSpans(4)
	require.Len(t, comp.seen(), 1)
	assert.Equal(t, 4, scoring.TurnCount(comp.seen()[0].Turns))
	assert.Equal(t, "second", comp.seen()[0].Turns[2].Content)
}

// A follow-up turn's answer relevancy and prompt alignment read the
// conversation before it: from the span's own messages, or, when the span
// carries only the last one, from its conversation (issue 40 item 5).
func TestFollowUpTurnsSeeTheirHistory(t *testing.T) {
	rel := caseKeepingScorer(scoring.AnswerRelevancy)
	align := caseKeepingScorer(scoring.PromptAlignment)
	cfg := conversationConfig()
	cfg.Scorers[0] = defaultScorerConfig(scoring.PromptAlignment)
	cfg.Scorers = append(cfg.Scorers, defaultScorerConfig(scoring.AnswerRelevancy))
	h := newHarness(t, cfg, align.fakeScorer, caseKeepingScorer(scoring.ConversationCompleteness).fakeScorer, rel.fakeScorer)
	t0 := time.Now()
	td, _ := turnBatch(turn{service: "shop", id: "t", in: "My order is 1042.", out: "Noted.", start: t0})
	h.consume(td)
	td, _ = turnBatch(turn{service: "shop", id: "t", history: []string{"My order is 1042.", "Noted."}, in: "Where is it?", out: "It shipped.", start: t0.Add(time.Second)})
	h.consume(td)
	td, _ = turnBatch(turn{service: "shop", id: "t", in: "And when does it arrive?", out: "Monday.", start: t0.Add(2 * time.Second)})
	h.consume(td)
	h.waitSpans(3)
	h.waitIdle()
	for _, sc := range []*recordedScorer{rel, align} {
		byInput := map[string]scoring.Case{}
		for _, c := range sc.seen() {
			byInput[c.Input] = c
		}
		require.Len(t, byInput, 3, sc.name)
		assert.Empty(t, byInput["My order is 1042."].Turns, sc.name)
		assert.Equal(t, []scoring.Turn{{Role: scoring.RoleUser, Content: "My order is 1042."}, {Role: scoring.RoleAssistant, Content: "Noted."}},
			byInput["Where is it?"].Turns, "%s: from the span's own messages", sc.name)
		assert.Equal(t, []scoring.Turn{
			{Role: scoring.RoleUser, Content: "My order is 1042."}, {Role: scoring.RoleAssistant, Content: "Noted."},
			{Role: scoring.RoleUser, Content: "Where is it?"}, {Role: scoring.RoleAssistant, Content: "It shipped."},
		}, byInput["And when does it arrive?"].Turns, "%s: from its conversation, the span carrying only the last message", sc.name)
	}
}

func TestConversationsLostAtShutdownWithoutStorageAreCounted(t *testing.T) {
	h := newHarness(t, conversationConfig(), fixedScorer(scoring.Bias, 0.1, scoring.LabelPass), caseKeepingScorer(scoring.ConversationCompleteness).fakeScorer)
	td, _ := turnBatch(turn{service: "shop", id: "open", in: "q", out: "a"})
	h.consume(td)
	h.waitSpans(1)
	h.shutdown()
	assert.Equal(t, int64(1), sumOf(t, h.tel, "otelcol_processor_llm_eval_conversations_ended", attribute.String("outcome", "lost")))
}

func TestConversationConfig(t *testing.T) {
	cfg := testConfig(scoring.Bias)
	cfg.Conversation.MaxTurns = 2
	cfg.Conversation.IdleTimeout = 300 // a duration without a unit
	cfg.Conversation.MaxBytes = 10
	cfg.Conversation.IDAttributes = []string{"app.chat", "app.chat", ""}
	err := cfg.Conversation.Validate()
	require.Error(t, err)
	for _, want := range []string{"max_turns: must be between 5 and 10000, got 2", "idle_timeout:", "max_bytes: must be at least max_conversation_bytes",
		`id_attributes::1: duplicate attribute "app.chat"`, "id_attributes::2: must not be empty"} {
		assert.ErrorContains(t, err, want)
	}

	sc := defaultScorerConfig(scoring.RoleAdherence)
	sc.Targets = []string{targetGeneration}
	assert.ErrorContains(t, sc.Validate(), "targets: role_adherence judges whole conversations, so its targets must be [conversation]")
	sc = defaultScorerConfig(scoring.Bias)
	sc.Targets = []string{targetConversation}
	assert.ErrorContains(t, sc.Validate(), "targets: only the conversation scorers")
	sc = defaultScorerConfig(scoring.KnowledgeRetention)
	sc.Targets = []string{targetConversation}
	sc.Include = []AttributeMatchConfig{{Resource: map[string]ValueMatchConfig{"service.name": {Equals: "shop"}}}}
	assert.ErrorContains(t, sc.Validate(), "include: a conversation scorer judges no single span")
}

// A conversation scorer's sampling decides by the conversation id, as a
// span scorer's does by the trace id.
func TestConversationScorerSampling(t *testing.T) {
	cfg := conversationConfig()
	never := defaultScorerConfig(scoring.RoleAdherence)
	never.Targets = []string{targetConversation}
	never.Sampling = &SamplingConfig{Percentage: 0}
	cfg.Scorers = append(cfg.Scorers, never)
	comp, role := caseKeepingScorer(scoring.ConversationCompleteness), caseKeepingScorer(scoring.RoleAdherence)
	h := newHarness(t, cfg, fixedScorer(scoring.Bias, 0.1, scoring.LabelPass), comp.fakeScorer, role.fakeScorer)
	td, _ := turnBatch(turn{service: "shop", id: "s", in: "q", out: "a"})
	h.consume(td)
	h.waitSpans(1)
	endConversations(h)
	h.waitSpans(2)
	assert.Len(t, comp.seen(), 1)
	assert.Empty(t, role.seen(), "outside its sample: no call")
	events := evaluationEvents(conversationSpans(h)[[2]string{"shop", "s"}][0].span)
	assert.Contains(t, events, scoring.ConversationCompleteness)
	assert.NotContains(t, events, scoring.RoleAdherence, "and no result or marker")
}

func TestConversationScorerTargetsConversationsByDefault(t *testing.T) {
	cfg := loadConfig(t, map[string]any{
		"judge":   map[string]any{"endpoint": "http://127.0.0.1:1/v1", "model": "m"},
		"scorers": []any{map[string]any{"name": "knowledge_retention"}},
		"conversation": map[string]any{
			"idle_timeout": "30s",
		},
	})
	require.NoError(t, cfg.Validate())
	assert.Equal(t, []string{targetConversation}, cfg.Scorers[0].Targets)
	assert.Equal(t, 30*time.Second, cfg.Conversation.IdleTimeout)
	assert.Equal(t, scoring.DefaultMaxTurns, cfg.Conversation.MaxTurns)
}

// gaugeOf is the value of the int64 gauge name (summed over its points).
func gaugeOf(t *testing.T, tel *componenttest.Telemetry, name string) int64 {
	t.Helper()
	m, err := tel.GetMetric(name)
	if err != nil {
		return 0
	}
	g, ok := m.Data.(metricdata.Gauge[int64])
	require.True(t, ok, "%s is an int64 gauge", name)
	var total int64
	for _, dp := range g.DataPoints {
		total += dp.Value
	}
	return total
}

// loadConfig decodes m onto the default configuration, as the collector
// does.
func loadConfig(t *testing.T, m map[string]any) *Config {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, confmap.NewFromStringMap(m).Unmarshal(cfg))
	return cfg
}

// storedConversationConfig is conversationConfig with file_storage.
func storedConversationConfig() *Config {
	cfg := conversationConfig()
	cfg.Storage = &fileStorageID
	return cfg
}

// An open conversation whose collector is killed goes on after the
// restart with every turn it had, and is scored once it ends.
func TestOpenConversationSurvivesACrash(t *testing.T) {
	dir := t.TempDir()
	l := mustStartLife(t, storedConversationConfig(), fileStorageOn(t, dir),
		fixedScorer(scoring.Bias, 0.1, scoring.LabelPass), caseKeepingScorer(scoring.ConversationCompleteness).fakeScorer)
	t0 := time.Now()
	for i, tn := range []turn{
		{service: "shop", id: "kept", in: "I want to return my bike.", out: "What is the order number?", start: t0},
		{service: "shop", id: "kept", in: "1042.", out: "Your label is on its way.", start: t0.Add(time.Second)},
	} {
		td, _ := turnBatch(tn)
		require.NoError(t, l.p.ConsumeTraces(context.Background(), td))
		require.Eventually(t, func() bool { return l.sink.SpanCount() == i+1 }, 10*time.Second, 5*time.Millisecond)
		// The span's record goes after the span has left: wait for it, or
		// the crash below may keep it for the next life to send again.
		require.Eventually(t, func() bool { return l.storageWrites(persistence.OpRemove) >= int64(i+1) }, 10*time.Second, 5*time.Millisecond)
	}
	assert.Positive(t, l.storageWrites(persistence.OpConversation), "the turns were written before ConsumeTraces returned")
	l.crash()

	comp := caseKeepingScorer(scoring.ConversationCompleteness)
	l2 := mustStartLife(t, storedConversationConfig(), fileStorageOn(t, dir), fixedScorer(scoring.Bias, 0.1, scoring.LabelPass), comp.fakeScorer)
	assert.Equal(t, int64(1), gaugeOf(t, l2.tel, "otelcol_processor_llm_eval_conversations_open"), "restored")
	l2.p.convs.keeper.EndIdle(time.Now().Add(48 * time.Hour))
	require.Eventually(t, func() bool { return l2.sink.SpanCount() == 1 }, 10*time.Second, 5*time.Millisecond)
	require.Len(t, comp.seen(), 1)
	assert.Equal(t, []scoring.Turn{
		{Role: scoring.RoleUser, Content: "I want to return my bike."}, {Role: scoring.RoleAssistant, Content: "What is the order number?"},
		{Role: scoring.RoleUser, Content: "1042."}, {Role: scoring.RoleAssistant, Content: "Your label is on its way."},
	}, comp.seen()[0].Turns)
	require.Eventually(t, func() bool { return storedBytes(l2) == 0 }, 10*time.Second, 5*time.Millisecond,
		"once scored, nothing of the conversation stays in storage")
}

// A conversation that ended and was being scored when the collector was
// killed is scored after the restart, once: its turns' records went in
// the write that stored it.
func TestEndedConversationSurvivesACrash(t *testing.T) {
	dir := t.TempDir()
	gate := make(chan struct{})
	defer close(gate)
	l := mustStartLife(t, storedConversationConfig(), fileStorageOn(t, dir),
		fixedScorer(scoring.Bias, 0.1, scoring.LabelPass), gatedScorer(scoring.ConversationCompleteness, gate, false))
	td, _ := turnBatch(turn{service: "shop", id: "ending", in: "Hi", out: "Hello, how can I help?"})
	require.NoError(t, l.p.ConsumeTraces(context.Background(), td))
	require.Eventually(t, func() bool { return l.sink.SpanCount() == 1 }, 10*time.Second, 5*time.Millisecond)
	l.p.convs.keeper.EndIdle(time.Now().Add(48 * time.Hour))
	assert.Equal(t, 1, l.p.store.HeldCount(), "the ended conversation is held while it is scored")
	l.p.storage.Commit() // what EndIdle queued is written within 100 ms anyway
	l.crash()

	comp := caseKeepingScorer(scoring.ConversationCompleteness)
	l2 := mustStartLife(t, storedConversationConfig(), fileStorageOn(t, dir), fixedScorer(scoring.Bias, 0.1, scoring.LabelPass), comp.fakeScorer)
	assert.Equal(t, int64(0), gaugeOf(t, l2.tel, "otelcol_processor_llm_eval_conversations_open"), "it is not open again")
	require.Eventually(t, func() bool { return len(comp.seen()) == 1 }, 10*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool { return len(conversationSpansOf(l2.sink)) == 1 }, 10*time.Second, 5*time.Millisecond)
	assert.Equal(t, []scoring.Turn{{Role: scoring.RoleUser, Content: "Hi"}, {Role: scoring.RoleAssistant, Content: "Hello, how can I help?"}}, comp.seen()[0].Turns)
}

func storedBytes(l *life) int64 { return l.p.storage.Journal().StoredBytes() }

// A batch that holds a generation before the root span naming its
// conversation (a batching exporter sends a finished trace together, the
// root last) groups the generation, even for a service never seen with an
// id before; the result goes under the generation's resource.
func TestConversationIDFromTheRootSpanInTheSameBatch(t *testing.T) {
	comp := caseKeepingScorer(scoring.ConversationCompleteness)
	h := newHarness(t, conversationConfig(), fixedScorer(scoring.Bias, 0.1, scoring.LabelPass), comp.fakeScorer)
	td, _ := turnBatch(turn{service: "langfuse-app", in: "first", out: "a1"})
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	addRootSpan(spans, spans.At(0).TraceID(), "s-9")
	h.consume(td)
	h.waitSpans(2)
	endConversations(h)
	h.waitSpans(3)
	require.Len(t, comp.seen(), 1)
	assert.Equal(t, "first", comp.seen()[0].Turns[0].Content)
	require.Len(t, conversationSpans(h)[[2]string{"langfuse-app", "s-9"}], 1, "under the generation's service")
}

// addRootSpan adds to spans the root span of trace that names its
// conversation session (as Langfuse's root observation does), and no
// turn.
func addRootSpan(spans ptrace.SpanSlice, trace pcommon.TraceID, session string) {
	s := spans.AppendEmpty()
	s.SetTraceID(trace)
	s.SetSpanID(nextSpanID())
	s.SetName("support-turn")
	s.Attributes().PutStr("session.id", session)
}

// TestConversationScorerRefusesPerSpanSettings: a setting that only a
// span's scorer applies fails at start on a conversation scorer, naming
// the key, instead of being silently ignored; the settings the
// conversation path honours stay valid.
func TestConversationScorerRefusesPerSpanSettings(t *testing.T) {
	tests := []struct {
		name   string
		scorer map[string]any
		want   string // "" when valid
	}{
		{name: "when", scorer: map[string]any{"name": "conversation_completeness", "when": map[string]any{"context_present": true}},
			want: "scorers::0: when: conversation_completeness judges whole conversations, which have no retrieved context; when::context_present applies to spans only"},
		{name: "when_typed", scorer: map[string]any{"type": "knowledge_retention", "name": "memory", "when": map[string]any{"context_present": true}},
			want: "scorers::0: when: knowledge_retention judges whole conversations"},
		{name: "when_false", scorer: map[string]any{"name": "conversation_completeness", "when": map[string]any{"context_present": false}}},
		{name: "context_sources", scorer: map[string]any{"name": "role_adherence", "context_sources": []any{"system"}},
			want: "scorers::0: context_sources: role_adherence judges whole conversations, which have no retrieved context"},
		{name: "context_sources_default", scorer: map[string]any{"name": "role_adherence", "context_sources": []any{"trace", "tool_messages"}}},
		{name: "include", scorer: map[string]any{"name": "conversation_relevancy", "include": []any{map[string]any{"span": map[string]any{"a": "b"}}}},
			want: "scorers::0: include: a conversation scorer judges no single span"},
		{name: "targets_generation", scorer: map[string]any{"name": "conversation_relevancy", "targets": []any{"generation"}},
			want: "scorers::0: targets: conversation_relevancy judges whole conversations"},
		// What the conversation path honours.
		{name: "honoured", scorer: map[string]any{
			"name": "role_adherence", "threshold": 0.6, "scale": 10, "strict_mode": true, "reason_mode": "summary",
			"instructions": []any{"You are a travel agent."}, "sampling": map[string]any{"percentage": 50},
			"judge": map[string]any{"model": "other"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertConfigError(t, loadRawConfig(rawConfig(tt.scorer)), tt.want)
		})
	}
}
