package subject

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/logjoin"
	"github.com/llm-eval/llm_eval/scoring"
)

var (
	traceID = pcommon.TraceID{1, 2, 3}
	spanID  = pcommon.SpanID{4, 5, 6}
)

// sinks collects what subjects send on and what they count.
type sinks struct {
	spans   []ptrace.Traces
	logs    []plog.Logs
	late    []string
	dropped []string
}

func (s *sinks) ForwardLater(_ context.Context, td ptrace.Traces) { s.spans = append(s.spans, td) }
func (s *sinks) Emit(_ context.Context, ld plog.Logs)             { s.logs = append(s.logs, ld) }
func (s *sinks) LateResult(_ context.Context, scorer string)      { s.late = append(s.late, scorer) }
func (s *sinks) LateResultDropped(_ context.Context, scorer string) {
	s.dropped = append(s.dropped, scorer)
}
func (*sinks) RecordResult(context.Context, evalstore.Result) {}
func (*sinks) SpanUnscored(context.Context, string)           {}
func (*sinks) ContextJoined(string)                           {}

// verdictsOnly writes texts as they are and emits late verdicts, not errors.
type verdictsOnly struct{}

func (verdictsOnly) Redact(s string) string         { return s }
func (verdictsOnly) EmitsLate(l scoring.Label) bool { return l != scoring.LabelError }

// heldSpan is a held generation span with gen as what admission read.
func heldSpan(s *sinks, gen genai.Generation) *HeldSpan {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	ss := rs.ScopeSpans().AppendEmpty()
	span := ss.Spans().AppendEmpty()
	span.SetTraceID(traceID)
	span.SetSpanID(spanID)
	out := &SpanOut{Sink: s, Tel: s, Policy: verdictsOnly{}}
	return NewHeldSpan(out, nil, rs, ss, span, Reading{Gen: gen})
}

// logCall is the call read from one log record of the same span.
func logCall(s *sinks, gen genai.Generation, scorers []evalstore.Scorer) *LogCall {
	ld := plog.NewLogs()
	ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	g := logjoin.Group{Key: logjoin.Key{TraceID: traceID, SpanID: spanID}, Logs: ld}
	out := &LogOut{Sink: s, Tel: s, Policy: verdictsOnly{}, Scorers: scorers}
	return NewLogCall(out, g, gen, nil)
}

func TestPairJoinsHalvesInEitherOrder(t *testing.T) {
	bias := evalstore.Scorer{Name: scoring.Bias, Generation: true}
	answered := genai.Generation{Input: "question", Output: "answer from the events"}
	tests := []struct {
		name      string
		spanFirst bool
	}{
		{name: "span first", spanFirst: true},
		{name: "events first"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &sinks{}
			span := heldSpan(s, genai.Generation{Missing: genai.MissingOutput, Model: "span-model"})
			events := logCall(s, answered, []evalstore.Scorer{bias})
			first, second := evalstore.Pairable(events), evalstore.Pairable(span)
			if tt.spanFirst {
				first, second = second, first
			}
			pair := first.NewPair()
			_, _, waits := pair.Call()
			assert.True(t, waits, "one half alone waits for the other")

			pair.Join(second)
			key, sides, waits := pair.Call()
			assert.Equal(t, logjoin.Key{TraceID: traceID, SpanID: spanID}, key)
			assert.Equal(t, evalstore.SideSpan|evalstore.SideEvents, sides)
			assert.False(t, waits)
			c := pair.Case(bias)
			assert.Equal(t, "answer from the events", c.Output, "a span without content is judged on its events")

			pair.Leave(context.Background(), []evalstore.Result{{Scorer: scoring.Bias, At: time.Now(),
				Result: scoring.Result{Scorer: scoring.Bias, Label: scoring.LabelPass}}})
			require.Len(t, s.spans, 1, "the span leaves once")
			require.Len(t, s.logs, 1, "one batch of result records")
			rec := s.logs[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
			onSpan, ok := rec.Attributes().Get(evalconv.AttrOnSpan)
			assert.True(t, ok && onSpan.Bool(), "the record says the span carries the same result")
		})
	}
}

func TestLogCallSkips(t *testing.T) {
	withContext := genai.Generation{Input: "q", Output: "a", ToolResults: []string{"tool said so"}}
	tests := []struct {
		name  string
		sc    evalstore.Scorer
		gen   genai.Generation
		skips bool
	}{
		{name: "generation scorer", sc: evalstore.Scorer{Name: "a", Generation: true}, gen: withContext},
		{name: "agent scorer", sc: evalstore.Scorer{Name: "a", Agent: true}, gen: withContext, skips: true},
		{name: "needs context, has tool results", sc: evalstore.Scorer{Name: "a", Generation: true, ContextPresent: true, FromToolMessages: true}, gen: withContext},
		{name: "needs context, takes none of its sources", sc: evalstore.Scorer{Name: "a", Generation: true, ContextPresent: true, FromSystem: true}, gen: withContext, skips: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.skips, logCall(&sinks{}, tt.gen, nil).Skips(tt.sc))
		})
	}
}

func TestLateResultsFollowLateResults(t *testing.T) {
	tests := []struct {
		name    string
		label   scoring.Label
		emitted bool
	}{
		{name: "verdict", label: scoring.LabelFail, emitted: true},
		{name: "error", label: scoring.LabelError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &sinks{}
			r := evalstore.Result{Scorer: scoring.Bias, At: time.Now(), Result: scoring.Result{Scorer: scoring.Bias, Label: tt.label}}
			heldSpan(s, genai.Generation{Input: "q", Output: "a"}).Late(context.Background(), r)
			if tt.emitted {
				assert.Equal(t, []string{scoring.Bias}, s.late)
				assert.Len(t, s.spans, 1, "a late result span")
				return
			}
			assert.Equal(t, []string{scoring.Bias}, s.dropped)
			assert.Empty(t, s.spans)
		})
	}
}

func TestWithTraceDocsBoundAndSource(t *testing.T) {
	tests := []struct {
		name       string
		maxChars   int
		own, docs  []string
		want       []string
		wantSource string
	}{
		{name: "joined", own: []string{"own"}, docs: []string{"doc1", "own", "doc2"}, want: []string{"own", "doc1", "doc2"}, wantSource: JoinSourceTrace},
		{name: "bounded", maxChars: 7, own: []string{"own"}, docs: []string{"doc1", "doc2"}, want: []string{"own", "doc1"}, wantSource: JoinSourceTrace},
		{name: "own only", own: []string{"own"}, docs: []string{"own"}, want: []string{"own"}, wantSource: JoinSourceSpan},
		{name: "none", want: nil, wantSource: JoinSourceNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := &TraceJoin{maxChars: tt.maxChars}
			got, source := j.withTraceDocs(tt.own, tt.docs)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantSource, source)
		})
	}
}
