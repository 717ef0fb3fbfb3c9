package persistence

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func oneSpan() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "chat")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("openai")
	sp := ss.Spans().AppendEmpty()
	sp.SetName("chat gpt-4o")
	sp.SetTraceID(pcommon.TraceID{1, 2, 3})
	sp.SetSpanID(pcommon.SpanID{4, 5, 6})
	sp.Attributes().PutStr("gen_ai.output.messages", "It shipped.")
	return td
}

func oneCall() plog.Logs {
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	for _, name := range []string{"gen_ai.user.message", "gen_ai.choice"} {
		rec := sl.LogRecords().AppendEmpty()
		rec.SetEventName(name)
		rec.Body().SetStr("text of " + name)
	}
	return ld
}

func TestItemRoundTrip(t *testing.T) {
	at := time.Unix(1_760_000_000, 123_456_789)
	b, err := EncodeSpan(oneSpan(), at)
	require.NoError(t, err)
	it, err := DecodeItem(b)
	require.NoError(t, err)
	assert.Equal(t, KindSpan, it.Kind)
	assert.True(t, it.Admitted.Equal(at))
	assert.Equal(t, oneSpan(), it.Traces)

	b, err = EncodeLogCall(oneCall(), at)
	require.NoError(t, err)
	it, err = DecodeItem(b)
	require.NoError(t, err)
	assert.Equal(t, KindLogCall, it.Kind)
	assert.Equal(t, oneCall(), it.Logs)

	b, err = EncodePair(oneSpan(), oneCall(), at)
	require.NoError(t, err)
	it, err = DecodeItem(b)
	require.NoError(t, err)
	assert.Equal(t, KindPair, it.Kind)
	assert.True(t, it.Admitted.Equal(at))
	assert.Equal(t, oneSpan(), it.Traces)
	assert.Equal(t, oneCall(), it.Logs)
}

func TestResultRoundTrip(t *testing.T) {
	for _, res := range []Result{
		{Scorer: "bias", Label: "pass", Score: 0.25, Reason: "no bias", At: time.Unix(5, 6), Ran: true},
		{Scorer: "hallucination", Label: "error", ErrorType: "judge_timeout", ErrorMessage: "deadline", At: time.Unix(7, 0)},
	} {
		b, err := EncodeResult(res)
		require.NoError(t, err)
		got, err := DecodeResult(b)
		require.NoError(t, err)
		assert.True(t, got.At.Equal(res.At))
		got.At = res.At
		assert.Equal(t, res, got)
	}
}

// Every prefix of a record (a write cut short) and every single-bit flip
// is refused as corrupt, never misread.
func TestDecodeRefusesDamage(t *testing.T) {
	item, err := EncodeSpan(oneSpan(), time.Unix(1, 0))
	require.NoError(t, err)
	result, err := EncodeResult(Result{Scorer: "bias", Label: "fail", Score: 1, Reason: "biased", At: time.Unix(2, 0)})
	require.NoError(t, err)
	decoders := map[string]struct {
		rec    []byte
		decode func([]byte) error
	}{
		"item":   {item, func(b []byte) error { _, err := DecodeItem(b); return err }},
		"result": {result, func(b []byte) error { _, err := DecodeResult(b); return err }},
	}
	for name, d := range decoders {
		for n := range len(d.rec) {
			err := d.decode(d.rec[:n])
			assert.ErrorIs(t, err, ErrCorrupt, "%s cut to %d bytes", name, n)
		}
		for i := range len(d.rec) {
			for bit := range 8 {
				b := bytes.Clone(d.rec)
				b[i] ^= 1 << bit
				err := d.decode(b)
				require.Error(t, err, "%s with bit %d of byte %d flipped", name, bit, i)
				assert.True(t, errors.Is(err, ErrCorrupt) || errors.Is(err, ErrVersion), "%s byte %d: %v", name, i, err)
			}
		}
	}
}

func TestDecodeRefusesOtherVersions(t *testing.T) {
	b, err := EncodeSpan(oneSpan(), time.Unix(1, 0))
	require.NoError(t, err)
	for _, v := range []byte{0, Version + 1} {
		old := bytes.Clone(b)
		old[2] = v
		_, err := DecodeItem(old)
		assert.ErrorIs(t, err, ErrVersion)
	}
}

func TestBounds(t *testing.T) {
	td := oneSpan()
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().PutStr("big", strings.Repeat("x", MaxItemBytes))
	_, err := EncodeSpan(td, time.Unix(1, 0))
	assert.ErrorIs(t, err, ErrTooLarge)
	_, err = EncodeResult(Result{Scorer: "bias", Reason: strings.Repeat("r", MaxResultBytes)})
	assert.ErrorIs(t, err, ErrTooLarge)

	_, err = DecodeItem(make([]byte, MaxItemBytes+1))
	assert.ErrorIs(t, err, ErrTooLarge)
	_, err = DecodeResult(make([]byte, MaxResultBytes+1))
	assert.ErrorIs(t, err, ErrTooLarge)
}

// A record of the wrong type, or an item whose payload is not one span or
// one call, is corrupt.
func TestDecodeRefusesWrongShapes(t *testing.T) {
	res, err := EncodeResult(Result{Scorer: "bias", Label: "pass"})
	require.NoError(t, err)
	_, err = DecodeItem(res)
	assert.ErrorIs(t, err, ErrCorrupt)

	two := oneSpan()
	two.ResourceSpans().At(0).ScopeSpans().At(0).Spans().AppendEmpty()
	b, err := EncodeSpan(two, time.Unix(1, 0))
	require.NoError(t, err)
	_, err = DecodeItem(b)
	assert.ErrorIs(t, err, ErrCorrupt)

	b, err = EncodePair(two, oneCall(), time.Unix(1, 0))
	require.NoError(t, err)
	_, err = DecodeItem(b)
	assert.ErrorIs(t, err, ErrCorrupt, "a pair's span must be one span")
	b, err = EncodePair(oneSpan(), plog.NewLogs(), time.Unix(1, 0))
	require.NoError(t, err)
	_, err = DecodeItem(b)
	assert.ErrorIs(t, err, ErrCorrupt, "a pair's call must have records")
	b, err = encodeItem(KindPair, time.Unix(1, 0), []byte{0x05, 1, 2})
	require.NoError(t, err)
	_, err = DecodeItem(b)
	assert.ErrorIs(t, err, ErrCorrupt, "a pair payload cut short")
}
