package llmevaleventsconnector

import (
	"context"
	"errors"
	"flag"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/plogtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/internal/evalconv"
)

var update = flag.Bool("update", false, "rewrite the expected golden files")

var observed = time.Unix(1700000100, 0)

func newTestConnector(next consumer.Logs) *eventsConnector {
	c := newConnector(next)
	c.now = func() time.Time { return observed }
	return c
}

func TestGolden(t *testing.T) {
	sink := &consumertest.LogsSink{}
	c := newTestConnector(sink)
	td, err := golden.ReadTraces(filepath.Join("testdata", "input.yaml"))
	require.NoError(t, err)
	before := ptrace.NewTraces()
	td.CopyTo(before)

	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	require.Len(t, sink.AllLogs(), 1, "one logs batch per traces batch")
	actual := sink.AllLogs()[0]
	expectedPath := filepath.Join("testdata", "expected.yaml")
	if *update {
		require.NoError(t, golden.WriteLogs(t, expectedPath, actual))
	}
	expected, err := golden.ReadLogs(expectedPath)
	require.NoError(t, err)
	// Order matters: records follow the order of spans and events.
	require.NoError(t, plogtest.CompareLogs(expected, actual))
	for _, rl := range actual.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				assert.Equal(t, pcommon.NewTimestampFromTime(observed), lr.ObservedTimestamp())
			}
		}
	}
	assert.Equal(t, before, td, "the spans are only read")
}

func TestRecordFields(t *testing.T) {
	td, err := golden.ReadTraces(filepath.Join("testdata", "input.yaml"))
	require.NoError(t, err)
	ld := resultsToLogs(td, pcommon.NewTimestampFromTime(observed))

	type want struct {
		name, spanID string
		ts           int64
		model, agent string
	}
	var got []want
	for _, rl := range ld.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				assert.Equal(t, evalconv.EventName, lr.EventName())
				got = append(got, want{str(lr.Attributes(), evalconv.AttrName), lr.SpanID().String(), int64(lr.Timestamp()),
					str(lr.Attributes(), evalconv.AttrRequestModel), str(lr.Attributes(), evalconv.AttrAgentName)})
			}
		}
	}
	assert.Equal(t, []want{
		{"bias", "eee19b7ec3c1b174", 1700000002000000000, "gpt-4o", "support"},
		{"hallucination", "eee19b7ec3c1b174", 1700000002000000000, "gpt-4o", "support"},
		{"relevance", "eee19b7ec3c1b175", 1700000004000000000, "from-the-event", ""}, // span end; the event's own model
		{"prompt_alignment", "eee19b7ec3c1b174", 1700000009000000000, "gpt-4o", ""},  // late: the evaluated span
		{"custom", "bbbbbbbbbbbbbbbb", 1700000009500000000, "", ""},                  // not an evaluation span
	}, got)
}

func str(attrs pcommon.Map, key string) string {
	if v, ok := attrs.Get(key); ok {
		return v.AsString()
	}
	return ""
}

func TestBatchWithoutResultsSendsNothing(t *testing.T) {
	sink := &consumertest.LogsSink{}
	c := newTestConnector(sink)
	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.Events().AppendEmpty().SetName("exception")
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	require.NoError(t, c.ConsumeTraces(context.Background(), ptrace.NewTraces()))
	assert.Empty(t, sink.AllLogs())
}

// The next consumer sees the caller's context, and its error comes back, so
// the traces pipeline can retry or report it.
func TestPassesContextAndError(t *testing.T) {
	td, err := golden.ReadTraces(filepath.Join("testdata", "input.yaml"))
	require.NoError(t, err)
	ctx := client.NewContext(context.Background(), client.Info{Metadata: client.NewMetadata(map[string][]string{"tenant": {"a"}})})
	boom := errors.New("logs backend down")
	var seen []string
	next, err := consumer.NewLogs(func(ctx context.Context, _ plog.Logs) error {
		seen = client.FromContext(ctx).Metadata.Get("tenant")
		return boom
	})
	require.NoError(t, err)
	c := newTestConnector(next)
	assert.ErrorIs(t, c.ConsumeTraces(ctx, td), boom)
	assert.Equal(t, []string{"a"}, seen)
}

// A conversation's results, on the span llm_eval adds under its last
// turn, become records that name the conversation and that turn's span.
func TestConversationResultRecords(t *testing.T) {
	sink := &consumertest.LogsSink{}
	c := newTestConnector(sink)
	td, err := golden.ReadTraces(filepath.Join("testdata", "conversations.yaml"))
	require.NoError(t, err)
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	require.Len(t, sink.AllLogs(), 1)
	ld := sink.AllLogs()[0]
	require.Equal(t, 3, ld.LogRecordCount(), "one record per result")
	for _, rl := range ld.ResourceLogs().All() {
		svc, _ := rl.Resource().Attributes().Get("service.name")
		for _, lr := range rl.ScopeLogs().At(0).LogRecords().All() {
			id, ok := lr.Attributes().Get(evalconv.AttrConversationID)
			require.True(t, ok, "the record carries the conversation id")
			assert.Equal(t, "42", id.Str())
			want := pcommon.SpanID{0xc0, 0, 0, 0, 0, 0, 0, 0x01}
			if svc.Str() == "bank" {
				want = pcommon.SpanID{0xc0, 0, 0, 0, 0, 0, 0, 0x02}
			}
			assert.Equal(t, want, lr.SpanID(), "and names the conversation's last turn")
			_, ok = lr.Attributes().Get(evalconv.AttrRequestModel)
			assert.True(t, ok, "and its model")
		}
	}
}
