//go:build clients

package clients

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/scoring/scoringtest"
	"github.com/llm-eval/llm_eval/test/clients/appmodel"
)

// conversationApp is an app run with the conversation of scenario.json,
// naming it the way its library does.
type conversationApp struct {
	clientApp
	// idKey is the attribute the library writes the conversation id to.
	idKey string
	// history: its generation spans carry the turns before their request,
	// so answer_relevancy of a follow-up sees them.
	history bool
}

var conversationApps = []conversationApp{
	// The thread of the agent's memory option: gen_ai.conversation.id on
	// every span of the run.
	{clientApp: clientApp{name: "mastra-agent", node: 22, scenario: "conversation"}, idKey: "gen_ai.conversation.id"},
	// setSession: session.id on the LLM spans.
	{clientApp: clientApp{name: "openinference-openai", node: 20, scenario: "conversation"}, idKey: "session.id", history: true},
	// propagateAttributes: session.id on each turn's root observation only;
	// its generation takes the id of its trace.
	{clientApp: clientApp{name: "langfuse-openai", node: 20, scenario: "conversation"}, idKey: "session.id", history: true},
	// withAssociationProperties of @traceloop/node-server-sdk, whose span
	// processor writes traceloop.association.properties.session_id.
	{clientApp: clientApp{name: "traceloop-openai", node: 20, scenario: "conversation"}, idKey: "traceloop.association.properties.session_id", history: true},
	// runtimeContext with includeRuntimeContext: ai.settings.context.sessionId.
	{clientApp: clientApp{name: "aisdk-generate", node: 22, scenario: "conversation"}, idKey: "ai.settings.context.sessionId", history: true},
}

// conversationScorers are the default scorers, answer_relevancy (which
// reads a follow-up's history) and the four conversation scorers.
const conversationScorers = defaultScorers + `
      - name: answer_relevancy
      - name: conversation_completeness
      - name: knowledge_retention
      - name: role_adherence
      - name: conversation_relevancy`

// conversationIdle is the test's conversation.idle_timeout: short, so a
// conversation is scored seconds after its last turn.
const conversationIdle = 3 * time.Second

var conversationScorerNames = []string{"conversation_completeness", "knowledge_retention", "role_adherence", "conversation_relevancy"}

// TestConversations runs a three-turn conversation through real libraries
// and the built collector: each conversation yields, after the idle
// timeout, one result per conversation scorer, judged on every turn.
func TestConversations(t *testing.T) {
	sc := loadScenario(t)
	require.Len(t, sc.Conversation.Turns, 3)
	for _, a := range conversationApps {
		t.Run(a.name, func(t *testing.T) { testConversation(t, sc, a) })
	}
}

func testConversation(t *testing.T, sc scenario, a conversationApp) {
	model := appmodel.New(sc.script())
	t.Cleanup(model.Close)
	judge := scoringtest.New(t)
	var col *collector
	forward := ""
	if !*updateSamples {
		col = startCollectorWith(t, judge.URL, conversationScorers, "\n    conversation:\n      idle_timeout: "+conversationIdle.String())
		forward = col.otlpURL
	}
	rec := newRecorder(t, forward)
	stdout := runApp(t, a.clientApp, model.URL, rec.url)
	for _, turn := range sc.Conversation.Turns {
		require.Contains(t, stdout, turn.Answer, "the app did not print the fake model's answer to %q", turn.Question)
	}
	sentTraces, sentLogs, recErrs := rec.sent()
	require.Empty(t, recErrs, "OTLP requests the recorder or collector refused")
	sent := index(sentTraces, sentLogs)
	require.NotEmpty(t, sent.spans, "the app sent no spans")
	assert.Positive(t, countAttr(sentTraces, a.idKey, sc.Conversation.ID), "the library wrote the conversation id to %s", a.idKey)
	if *updateSamples {
		rec.writeSamples(t, filepath.Join("..", "..", "testdata", "otlp", "clients", a.name, "conversation"))
		return
	}

	waitSettled(t, col, judge, sent)
	// The conversation ends idle_timeout after its last turn arrived; its
	// results come a few judge calls later.
	require.Eventually(t, func() bool {
		traces, _ := col.output(t)
		return len(conversationResults(traces)) > 0
	}, 60*time.Second, 250*time.Millisecond, "no conversation results after the idle timeout")
	waitSettled(t, col, judge, sent)
	col.stop()
	outTraces, outLogs := col.output(t)
	out := index(outTraces, outLogs)

	t.Run("every_span_passes_once", func(t *testing.T) {
		for id, s := range sent.spans {
			assert.Len(t, out.spansByID[id], 1, "span %s %q", id, s.Name())
		}
	})
	results := conversationResults(outTraces)
	t.Run("one_result_per_conversation_scorer", func(t *testing.T) {
		require.Len(t, results, 1, "one result span: one conversation")
		r := results[0]
		assert.Equal(t, sc.Conversation.ID, r.id)
		assert.Equal(t, a.name, r.service, "under the app's service")
		assert.Equal(t, int64(2*len(sc.Conversation.Turns)), r.messages, "every message of the conversation")
		for _, name := range conversationScorerNames {
			require.Contains(t, r.labels, name)
			assert.Contains(t, []string{"pass", "fail"}, r.labels[name], "%s: %s", name, r.explanations[name])
		}
		assert.Len(t, r.labels, len(conversationScorerNames), "nothing but the conversation scorers")
		_, ok := out.spansByID[r.parent.String()]
		assert.True(t, ok, "the result span is a child of a span of the conversation")
	})
	calls := judge.Calls()
	t.Run("judge_sees_the_whole_conversation", func(t *testing.T) {
		found := false
		for _, c := range calls {
			if c.Step != "conversation_completeness_intentions" {
				continue
			}
			found = true
			text, at := c.Text(), 0
			for _, turn := range sc.Conversation.Turns {
				for _, msg := range []string{turn.Question, turn.Answer} {
					i := strings.Index(text[at:], jsonText(msg))
					require.GreaterOrEqual(t, i, 0, "the judge did not see %q after what came before it", msg)
					at += i
				}
			}
		}
		assert.True(t, found, "no conversation_completeness call")
		assert.True(t, anyCall(calls, "role_adherence_verdicts", func(c scoringtest.Call) bool {
			return strings.Contains(c.Text(), jsonText(sc.System)) || strings.Contains(c.Text(), sc.Instructions[0])
		}), "role_adherence did not see the system prompt")
	})
	if a.history {
		t.Run("follow_up_sees_its_history", func(t *testing.T) {
			last, first := sc.Conversation.Turns[2].Question, sc.Conversation.Turns[0].Question
			assert.True(t, anyCallPrefix(calls, "answer_relevancy", func(c scoringtest.Call) bool {
				return strings.Contains(c.Text(), jsonText(last)) && strings.Contains(c.Text(), jsonText(first))
			}), "answer_relevancy of the last turn did not see the first")
		})
	}
}

// conversationResult is one result span of a conversation.
type conversationResult struct {
	id, service  string
	parent       pcommon.SpanID
	messages     int64
	labels       map[string]string
	explanations map[string]string
}

// conversationResults are the result spans of conversations in traces.
func conversationResults(traces []ptrace.Traces) []conversationResult {
	var out []conversationResult
	for _, td := range traces {
		for _, rs := range td.ResourceSpans().All() {
			svc, _ := rs.Resource().Attributes().Get("service.name")
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					id, ok := s.Attributes().Get("gen_ai.conversation.id")
					if !ok || s.Name() != "gen_ai.evaluation" {
						continue
					}
					r := conversationResult{id: id.Str(), service: svc.Str(), parent: s.ParentSpanID(),
						labels: map[string]string{}, explanations: map[string]string{}}
					if m, ok := s.Attributes().Get("llm_eval.conversation.messages"); ok {
						r.messages = m.Int()
					}
					for _, ev := range s.Events().All() {
						name, _ := ev.Attributes().Get("gen_ai.evaluation.name")
						label, ok := ev.Attributes().Get("gen_ai.evaluation.score.label")
						if !ok {
							label = pcommon.NewValueStr("error")
						}
						r.labels[name.Str()] = label.Str()
						expl, _ := ev.Attributes().Get("gen_ai.evaluation.explanation")
						r.explanations[name.Str()] = expl.Str()
					}
					out = append(out, r)
				}
			}
		}
	}
	return out
}

// countAttr counts the spans of traces whose attribute key is value.
func countAttr(traces []ptrace.Traces, key, value string) int {
	n := 0
	for _, td := range traces {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					if v, ok := s.Attributes().Get(key); ok && v.AsString() == value {
						n++
					}
				}
			}
		}
	}
	return n
}

// jsonText is s as it appears inside a JSON string of a judge prompt.
func jsonText(s string) string {
	return strings.NewReplacer(`"`, `\"`).Replace(s)
}

// anyCallPrefix is anyCall for the steps whose name starts with prefix.
func anyCallPrefix(calls []scoringtest.Call, prefix string, ok func(scoringtest.Call) bool) bool {
	for _, c := range calls {
		if strings.HasPrefix(c.Step, prefix) && ok(c) {
			return true
		}
	}
	return false
}
