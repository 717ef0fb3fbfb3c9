package persistence

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/conversation"
)

// Version is the format version this release writes and reads.
const Version = 1

// Bounds of one record.
const (
	// MaxItemBytes bounds an item record: a held span or log call with its
	// resource and scope. A larger one is held in memory only.
	MaxItemBytes = 16 << 20
	// MaxResultBytes bounds a result record; its texts are the judge's
	// reason and an error message.
	MaxResultBytes = 256 << 10
)

// Kind says what an item record holds.
type Kind byte

const (
	// KindSpan is a held span: ptrace.Traces with one resource, one scope
	// and one span.
	KindSpan Kind = 1
	// KindLogCall is the log records of one GenAI call: plog.Logs with one
	// resource and one scope.
	KindLogCall Kind = 2
	// KindPair is one call seen on both signals: its span (as KindSpan)
	// and its log records (as KindLogCall), evaluated once.
	KindPair Kind = 3
)

const (
	magic0, magic1 = 'l', 'e'
	tagItem        = 'I'
	tagResult      = 'R'
	headerLen      = 4 // magic, version, tag
	crcLen         = 4
	flagRan        = 1 << 0
	flagFailed     = 1 << 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Errors Decode returns, to be told apart with errors.Is.
var (
	// ErrCorrupt: not a record, cut short, or its checksum does not match.
	ErrCorrupt = errors.New("corrupt record")
	// ErrTooLarge: the record is over its bound.
	ErrTooLarge = errors.New("record too large")
	// ErrVersion: a record of another format version (an older or newer
	// release wrote it).
	ErrVersion = errors.New("unknown record format version")
)

// Item is one admitted item as stored.
type Item struct {
	Kind     Kind
	Admitted time.Time // when the item was first admitted; max_wait runs from here
	// Traces is set for KindSpan and KindPair, Logs for KindLogCall and
	// KindPair.
	Traces ptrace.Traces
	Logs   plog.Logs
	// Conversation is set for KindConversation.
	Conversation conversation.Ended
}

// Result is one finished evaluation as stored: what is written onto the
// item when it leaves.
type Result struct {
	Scorer       string
	Label        string // pass, fail, not_scorable or error
	Score        float64
	Reason       string
	ErrorType    string // set when Label is error
	ErrorMessage string
	At           time.Time // when the result was produced
	Ran          bool      // a scorer ran (not a result found up front)
	// Failed says that the evaluation failed with an error, whose type and
	// text are ErrorType and ErrorMessage. Records of releases before it
	// was written have it false.
	Failed bool
}

// EncodeSpan encodes a held span (one resource, scope and span).
func EncodeSpan(td ptrace.Traces, admitted time.Time) ([]byte, error) {
	var m ptrace.ProtoMarshaler
	payload, err := m.MarshalTraces(td)
	if err != nil {
		return nil, fmt.Errorf("encoding span: %w", err)
	}
	return encodeItem(KindSpan, admitted, payload)
}

// EncodeLogCall encodes the log records of one call (one resource and scope).
func EncodeLogCall(ld plog.Logs, admitted time.Time) ([]byte, error) {
	var m plog.ProtoMarshaler
	payload, err := m.MarshalLogs(ld)
	if err != nil {
		return nil, fmt.Errorf("encoding log call: %w", err)
	}
	return encodeItem(KindLogCall, admitted, payload)
}

// EncodePair encodes a call seen on both signals: its span (as for
// EncodeSpan) and its log records (as for EncodeLogCall).
func EncodePair(td ptrace.Traces, ld plog.Logs, admitted time.Time) ([]byte, error) {
	var mt ptrace.ProtoMarshaler
	spans, err := mt.MarshalTraces(td)
	if err != nil {
		return nil, fmt.Errorf("encoding pair: %w", err)
	}
	var ml plog.ProtoMarshaler
	logs, err := ml.MarshalLogs(ld)
	if err != nil {
		return nil, fmt.Errorf("encoding pair: %w", err)
	}
	return encodeItem(KindPair, admitted, appendBytes(appendBytes(nil, spans), logs))
}

func encodeItem(kind Kind, admitted time.Time, payload []byte) ([]byte, error) {
	n := headerLen + 1 + 8 + binary.MaxVarintLen64 + len(payload) + crcLen
	if n > MaxItemBytes {
		return nil, fmt.Errorf("%w: item of %d bytes, limit %d", ErrTooLarge, n, MaxItemBytes)
	}
	b := make([]byte, 0, n)
	b = append(b, magic0, magic1, Version, tagItem, byte(kind))
	b = binary.BigEndian.AppendUint64(b, uint64(admitted.UnixNano()))
	b = appendBytes(b, payload)
	return appendCRC(b), nil
}

// DecodeItem decodes an item record.
func DecodeItem(b []byte) (Item, error) {
	body, err := unwrap(b, tagItem, MaxItemBytes)
	if err != nil {
		return Item{}, err
	}
	r := reader{b: body}
	kind := Kind(r.byte())
	admitted := r.time()
	payload := r.bytes()
	if r.err != nil || len(r.b) != 0 {
		return Item{}, fmt.Errorf("%w: malformed item", ErrCorrupt)
	}
	it := Item{Kind: kind, Admitted: admitted}
	switch kind {
	case KindSpan:
		it.Traces, err = decodeSpan(payload)
	case KindLogCall:
		it.Logs, err = decodeLogCall(payload)
	case KindPair:
		p := reader{b: payload}
		spans, logs := p.bytes(), p.bytes()
		if p.err != nil || len(p.b) != 0 {
			return Item{}, fmt.Errorf("%w: malformed pair", ErrCorrupt)
		}
		if it.Traces, err = decodeSpan(spans); err == nil {
			it.Logs, err = decodeLogCall(logs)
		}
	case KindConversation:
		it.Conversation, err = decodeConversation(payload)
	default:
		return Item{}, fmt.Errorf("%w: unknown item kind %d", ErrCorrupt, kind)
	}
	if err != nil {
		return Item{}, err
	}
	return it, nil
}

func decodeSpan(payload []byte) (ptrace.Traces, error) {
	var u ptrace.ProtoUnmarshaler
	td, err := u.UnmarshalTraces(payload)
	if err != nil || td.SpanCount() != 1 || td.ResourceSpans().Len() != 1 || td.ResourceSpans().At(0).ScopeSpans().Len() != 1 {
		return ptrace.Traces{}, fmt.Errorf("%w: span payload is not one span with its resource and scope", ErrCorrupt)
	}
	return td, nil
}

func decodeLogCall(payload []byte) (plog.Logs, error) {
	var u plog.ProtoUnmarshaler
	ld, err := u.UnmarshalLogs(payload)
	if err != nil || ld.LogRecordCount() == 0 || ld.ResourceLogs().Len() != 1 || ld.ResourceLogs().At(0).ScopeLogs().Len() != 1 {
		return plog.Logs{}, fmt.Errorf("%w: log payload is not one call's records with their resource and scope", ErrCorrupt)
	}
	return ld, nil
}

// EncodeResult encodes a result record.
func EncodeResult(res Result) ([]byte, error) {
	n := headerLen + 5*binary.MaxVarintLen64 + len(res.Scorer) + len(res.Label) + len(res.Reason) +
		len(res.ErrorType) + len(res.ErrorMessage) + 8 + 8 + 1 + crcLen
	if n > MaxResultBytes {
		return nil, fmt.Errorf("%w: result of %d bytes, limit %d", ErrTooLarge, n, MaxResultBytes)
	}
	b := make([]byte, 0, n)
	b = append(b, magic0, magic1, Version, tagResult)
	for _, s := range []string{res.Scorer, res.Label, res.Reason, res.ErrorType, res.ErrorMessage} {
		b = appendBytes(b, []byte(s))
	}
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(res.Score))
	b = binary.BigEndian.AppendUint64(b, uint64(res.At.UnixNano()))
	var flags byte
	if res.Ran {
		flags |= flagRan
	}
	if res.Failed {
		flags |= flagFailed
	}
	b = append(b, flags)
	return appendCRC(b), nil
}

// DecodeResult decodes a result record.
func DecodeResult(b []byte) (Result, error) {
	body, err := unwrap(b, tagResult, MaxResultBytes)
	if err != nil {
		return Result{}, err
	}
	r := reader{b: body}
	res := Result{
		Scorer:       string(r.bytes()),
		Label:        string(r.bytes()),
		Reason:       string(r.bytes()),
		ErrorType:    string(r.bytes()),
		ErrorMessage: string(r.bytes()),
	}
	res.Score = math.Float64frombits(r.uint64())
	res.At = r.time()
	flags := r.byte()
	res.Ran, res.Failed = flags&flagRan != 0, flags&flagFailed != 0
	if r.err != nil || len(r.b) != 0 || res.Scorer == "" {
		return Result{}, fmt.Errorf("%w: malformed result", ErrCorrupt)
	}
	return res, nil
}

// unwrap checks a record's bound, header and checksum and returns its body.
func unwrap(b []byte, tag byte, limit int) ([]byte, error) {
	if len(b) > limit {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(b), limit)
	}
	if len(b) < headerLen+crcLen || b[0] != magic0 || b[1] != magic1 {
		return nil, fmt.Errorf("%w: no record header", ErrCorrupt)
	}
	if b[2] != Version {
		return nil, fmt.Errorf("%w %d (this release reads %d)", ErrVersion, b[2], Version)
	}
	if b[3] != tag {
		return nil, fmt.Errorf("%w: record type %q where %q was expected", ErrCorrupt, b[3], tag)
	}
	end := len(b) - crcLen
	if crc32.Checksum(b[:end], castagnoli) != binary.BigEndian.Uint32(b[end:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	return b[headerLen:end], nil
}

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendCRC(b []byte) []byte {
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// reader reads a record body; the first error sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail() { r.err, r.b = ErrCorrupt, nil }

func (r *reader) byte() byte {
	if r.err != nil || len(r.b) < 1 {
		r.fail()
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *reader) uint64() uint64 {
	if r.err != nil || len(r.b) < 8 {
		r.fail()
		return 0
	}
	v := binary.BigEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func (r *reader) time() time.Time { return time.Unix(0, int64(r.uint64())) }

func (r *reader) bytes() []byte {
	if r.err != nil {
		return nil
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > uint64(len(r.b)-k) {
		r.fail()
		return nil
	}
	v := r.b[k : k+int(n)]
	r.b = r.b[k+int(n):]
	return v
}
