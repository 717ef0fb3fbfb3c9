package persistence

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/conversation"
)

func exchange(n int, in, out string) conversation.Exchange {
	start := time.Unix(1_700_000_000+int64(n), 0)
	res := pcommon.NewResource()
	res.Attributes().PutStr("service.name", "shop")
	return conversation.Exchange{
		TraceID: pcommon.TraceID{byte(n), 1}, SpanID: pcommon.SpanID{byte(n), 2},
		Start: start, End: start.Add(time.Second), Received: start.Add(2 * time.Second),
		Agent: n%2 == 0, Model: "gpt-4o-mini", AgentName: "support", Input: in, Output: out,
		Instructions: []string{"Be kind.", "Be brief."}, Resource: res,
	}
}

func TestConversationRecordRoundTrip(t *testing.T) {
	key := conversation.Key{Service: "shop", ID: "thread-1"}
	ex := exchange(2, "Where is my order?", "It shipped.")
	b, err := EncodeConversationRecord(key, &ex, 0, 0, nil)
	require.NoError(t, err)
	rec, err := DecodeConversationRecord(7, b)
	require.NoError(t, err)
	assert.Equal(t, uint64(7), rec.ID)
	assert.Equal(t, key, rec.Key)
	require.NotNil(t, rec.Exchange)
	got := *rec.Exchange
	assert.Equal(t, ex.Resource.Attributes().AsRaw(), got.Resource.Attributes().AsRaw())
	ex.Resource, got.Resource = pcommon.Resource{}, pcommon.Resource{}
	assert.Equal(t, ex.Start.UnixNano(), got.Start.UnixNano())
	ex.Start, ex.End, ex.Received = got.Start, got.End, got.Received // monotonic readings aside
	assert.Equal(t, ex, got)

	mark, err := EncodeConversationRecord(key, nil, 120, 12, []string{"Be kind."})
	require.NoError(t, err)
	rec, err = DecodeConversationRecord(8, mark)
	require.NoError(t, err)
	assert.Equal(t, conversation.Record{ID: 8, Key: key, Omitted: 120, GapAt: 12, Instructions: []string{"Be kind."}}, rec)

	for i := range b {
		bad := append([]byte(nil), b...)
		bad[i] ^= 0xff
		_, err := DecodeConversationRecord(7, bad)
		if i == 2 {
			require.ErrorIs(t, err, ErrVersion, "the version byte changed")
			continue
		}
		require.ErrorIs(t, err, ErrCorrupt, "byte %d changed", i)
	}
	_, err = DecodeConversationRecord(7, b[:len(b)-3])
	require.ErrorIs(t, err, ErrCorrupt)
}

func TestEndedConversationItemRoundTrip(t *testing.T) {
	res := pcommon.NewResource()
	res.Attributes().PutStr("service.name", "shop")
	e := conversation.Ended{
		Key:       conversation.Key{Service: "shop", ID: "thread-1"},
		Exchanges: []conversation.Exchange{exchange(1, "q1", "a1"), exchange(2, "q2", "a2")},
		Omitted:   4, OmittedAt: 1, Instructions: []string{"Be kind."}, Resource: res,
	}
	admitted := time.Unix(1_800_000_000, 0)
	b, err := EncodeConversation(e, admitted)
	require.NoError(t, err)
	it, err := DecodeItem(b)
	require.NoError(t, err)
	assert.Equal(t, KindConversation, it.Kind)
	assert.True(t, admitted.Equal(it.Admitted))
	got := it.Conversation
	assert.Equal(t, e.Key, got.Key)
	assert.Equal(t, 4, got.Omitted)
	assert.Equal(t, 1, got.OmittedAt)
	assert.Equal(t, e.Instructions, got.Instructions)
	assert.Equal(t, res.Attributes().AsRaw(), got.Resource.Attributes().AsRaw())
	require.Len(t, got.Exchanges, 2)
	assert.Equal(t, "q2", got.Exchanges[1].Input)
	assert.Equal(t, e.Exchanges[1].TraceID, got.Exchanges[1].TraceID)
	assert.True(t, got.Exchanges[1].Agent)
	assert.Equal(t, 8, got.Messages())
}

// Open conversations' records come back after a restart; an ended
// conversation admitted in their place replaces them in one write, so
// storage holds either the records or the item, never both.
func TestJournalConversations(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var c counts
	st := &Keeper{}
	j, _, _, err := OpenJournal(ctx, mustOpenFile(t, dir), c.hooks())
	require.NoError(t, err)
	st.journal = j
	key := conversation.Key{Service: "shop", ID: "thread-1"}
	e1, e2, gone := exchange(1, "q1", "a1"), exchange(2, "q2", "a2"), exchange(3, "q3", "a3")
	id1 := st.Added(key, &e1)
	id2 := st.Added(key, &e2)
	idGone := st.Added(key, &gone)
	mark := st.Marked(key, 0, 2, 1, []string{"Be kind."})
	st.Removed(idGone) // queued and dropped before any write: never written
	st.Commit()
	assert.Equal(t, 3, c.written[OpConversation])
	mark2 := st.Marked(key, mark, 4, 1, nil)
	assert.Equal(t, mark, mark2, "a mark is rewritten in place")
	st.Commit()
	require.NoError(t, j.Close(ctx))

	j2, found, _, err := OpenJournal(ctx, mustOpenFile(t, dir), c.hooks())
	require.NoError(t, err)
	require.Len(t, found.Conversations, 3)
	ids := map[uint64]conversation.Record{}
	for _, r := range found.Conversations {
		ids[r.ID] = r
	}
	assert.Equal(t, "q1", ids[id1].Exchange.Input)
	assert.Equal(t, "q2", ids[id2].Exchange.Input)
	assert.Equal(t, 4, ids[mark].Omitted)
	assert.Empty(t, c.skipped)

	// The conversation ends and is admitted in place of its records.
	st.journal = j2
	ended := conversation.Ended{Key: key, Exchanges: []conversation.Exchange{e1, e2}, Resource: pcommon.NewResource(),
		Stored: []uint64{id1, id2, mark}}
	rec, err := EncodeConversation(ended, time.Now())
	require.NoError(t, err)
	item := j2.QueueReplacing(rec, ended.Stored)
	require.NotZero(t, item)
	require.NoError(t, j2.Commit(ctx))
	require.NoError(t, j2.Close(ctx))

	j3, found, _, err := OpenJournal(ctx, mustOpenFile(t, dir), c.hooks())
	require.NoError(t, err)
	assert.Empty(t, found.Conversations, "its records went in the item's write")
	require.Len(t, found.Items, 1)
	assert.Equal(t, KindConversation, found.Items[0].Item.Kind)
	assert.Equal(t, "q2", found.Items[0].Item.Conversation.Exchanges[1].Input)
	require.NoError(t, j3.Remove(ctx, item))
	assert.Zero(t, j3.StoredBytes())
	require.NoError(t, j3.Close(ctx))
}

// A conversation record dropped while its write is in flight is deleted
// after it, not left behind.
func TestJournalConversationDroppedDuringItsWrite(t *testing.T) {
	ctx := context.Background()
	sc := &stallingClient{failingClient: newFailingClient(), stall: make(chan struct{}),
		entered: make(chan struct{}), proceed: make(chan struct{})}
	j, _, _, err := OpenJournal(ctx, sc, Hooks{})
	require.NoError(t, err)
	ex := exchange(1, "q", "a")
	b, err := EncodeConversationRecord(conversation.Key{Service: "s", ID: "c"}, &ex, 0, 0, nil)
	require.NoError(t, err)
	id := j.PutConversation(b)
	close(sc.stall)
	committed := make(chan error, 1)
	go func() { committed <- j.Commit(ctx) }()
	<-sc.entered
	j.DropConversation(id)
	close(sc.proceed)
	require.NoError(t, <-committed)
	assert.Equal(t, 1, sc.keys(), "written by the write in flight")
	require.NoError(t, j.Commit(ctx))
	assert.Zero(t, sc.keys(), "and deleted by the next")
	assert.Zero(t, j.StoredBytes())
}

// A conversation record of a failed write is not stored; its delete does
// not fail later.
func TestJournalConversationFullStorage(t *testing.T) {
	ctx := context.Background()
	fc := newFailingClient()
	var c counts
	j, _, _, err := OpenJournal(ctx, fc, c.hooks())
	require.NoError(t, err)
	ex := exchange(1, "q", "a")
	b, err := EncodeConversationRecord(conversation.Key{Service: "s", ID: "c"}, &ex, 0, 0, nil)
	require.NoError(t, err)
	fc.setFull(true)
	id := j.PutConversation(b)
	require.Error(t, j.Commit(ctx))
	assert.Equal(t, 1, c.failed[OpConversation])
	fc.setFull(false)
	j.DropConversation(id)
	require.NoError(t, j.Commit(ctx))
	assert.Zero(t, fc.keys())
	assert.Zero(t, j.StoredBytes())
}
