package persistence

import (
	"encoding/binary"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/conversation"
)

// The records of conversations (internal/conversation): an exchange or the
// mark of an open conversation, under c/<id>, and a conversation that
// ended, as an item of KindConversation while it is scored.
//
//	conversation record: "le" 0x01 'C' kind(1 byte) service id body crc32c
//	  kind 'x', an exchange: traceID spanID start end received (int64 unix ns each)
//	    flags(1 byte, bit 0 agent) model agentName input output instructions resource
//	  kind 'm', a mark: omitted gapAt (uvarint each) instructions
//	  instructions: a uvarint count, then each as bytes; resource: the OTLP
//	    protobuf of a ptrace.Traces holding only the resource, empty when none
//	item payload of KindConversation: service id omitted omittedAt (uvarint each)
//	  instructions resource, then a uvarint count of exchanges, each its
//	  exchange body as bytes (without resource)

// KindConversation is a conversation that ended, held while it is scored.
const KindConversation Kind = 4

const (
	tagConversation = 'C'
	convExchange    = 'x'
	convMark        = 'm'
	flagAgent       = 1 << 0
)

// EncodeConversationRecord encodes an exchange of conversation key (ex
// not nil) or its mark.
func EncodeConversationRecord(key conversation.Key, ex *conversation.Exchange, omitted, gapAt int, instructions []string) ([]byte, error) {
	b := []byte{magic0, magic1, Version, tagConversation}
	if ex != nil {
		b = append(b, convExchange)
	} else {
		b = append(b, convMark)
	}
	b = appendBytes(b, []byte(key.Service))
	b = appendBytes(b, []byte(key.ID))
	if ex != nil {
		var err error
		if b, err = appendExchange(b, ex, true); err != nil {
			return nil, err
		}
	} else {
		b = binary.AppendUvarint(b, uint64(omitted))
		b = binary.AppendUvarint(b, uint64(gapAt))
		b = appendStrings(b, instructions)
	}
	if len(b)+crcLen > MaxItemBytes {
		return nil, fmt.Errorf("%w: conversation record of %d bytes, limit %d", ErrTooLarge, len(b)+crcLen, MaxItemBytes)
	}
	return appendCRC(b), nil
}

// DecodeConversationRecord decodes a record of an open conversation;
// the id is its key's.
func DecodeConversationRecord(id uint64, b []byte) (conversation.Record, error) {
	body, err := unwrap(b, tagConversation, MaxItemBytes)
	if err != nil {
		return conversation.Record{}, err
	}
	r := reader{b: body}
	kind := r.byte()
	rec := conversation.Record{ID: id, Key: conversation.Key{Service: string(r.bytes()), ID: string(r.bytes())}}
	switch kind {
	case convExchange:
		ex := readExchange(&r, true)
		rec.Exchange = &ex
	case convMark:
		rec.Omitted, rec.GapAt = r.int(), r.int()
		rec.Instructions = r.strings()
	default:
		r.fail()
	}
	if r.err != nil || len(r.b) != 0 {
		return conversation.Record{}, fmt.Errorf("%w: malformed conversation record", ErrCorrupt)
	}
	return rec, nil
}

// EncodeConversation encodes a conversation that ended as an item.
func EncodeConversation(e conversation.Ended, admitted time.Time) ([]byte, error) {
	var b []byte
	b = appendBytes(b, []byte(e.Key.Service))
	b = appendBytes(b, []byte(e.Key.ID))
	b = binary.AppendUvarint(b, uint64(e.Omitted))
	b = binary.AppendUvarint(b, uint64(e.OmittedAt))
	b = appendStrings(b, e.Instructions)
	res, err := encodeResource(e.Resource)
	if err != nil {
		return nil, err
	}
	b = appendBytes(b, res)
	b = binary.AppendUvarint(b, uint64(len(e.Exchanges)))
	for i := range e.Exchanges {
		x, err := appendExchange(nil, &e.Exchanges[i], false)
		if err != nil {
			return nil, err
		}
		b = appendBytes(b, x)
	}
	return encodeItem(KindConversation, admitted, b)
}

// decodeConversation decodes the payload of a KindConversation item.
func decodeConversation(payload []byte) (conversation.Ended, error) {
	r := reader{b: payload}
	e := conversation.Ended{Key: conversation.Key{Service: string(r.bytes()), ID: string(r.bytes())}}
	e.Omitted, e.OmittedAt = r.int(), r.int()
	e.Instructions = r.strings()
	res, err := decodeResource(r.bytes())
	if err != nil {
		return conversation.Ended{}, err
	}
	e.Resource = res
	n := r.int()
	if n > len(r.b) { // each exchange takes at least a byte
		r.fail()
	}
	for range n {
		x := reader{b: r.bytes()}
		ex := readExchange(&x, false)
		if x.err != nil || len(x.b) != 0 {
			r.fail()
			break
		}
		e.Exchanges = append(e.Exchanges, ex)
	}
	if r.err != nil || len(r.b) != 0 || e.Key.ID == "" || len(e.Exchanges) == 0 {
		return conversation.Ended{}, fmt.Errorf("%w: malformed conversation", ErrCorrupt)
	}
	return e, nil
}

// appendExchange appends an exchange's body, with its resource when
// withResource.
func appendExchange(b []byte, ex *conversation.Exchange, withResource bool) ([]byte, error) {
	b = append(b, ex.TraceID[:]...)
	b = append(b, ex.SpanID[:]...)
	for _, t := range []time.Time{ex.Start, ex.End, ex.Received} {
		b = binary.BigEndian.AppendUint64(b, uint64(t.UnixNano()))
	}
	var flags byte
	if ex.Agent {
		flags |= flagAgent
	}
	b = append(b, flags)
	for _, s := range []string{ex.Model, ex.AgentName, ex.Input, ex.Output} {
		b = appendBytes(b, []byte(s))
	}
	b = appendStrings(b, ex.Instructions)
	if !withResource {
		return b, nil
	}
	res, err := encodeResource(ex.Resource)
	if err != nil {
		return nil, err
	}
	return appendBytes(b, res), nil
}

// readExchange reads an exchange's body, with its resource when
// withResource.
func readExchange(r *reader, withResource bool) conversation.Exchange {
	var ex conversation.Exchange
	copy(ex.TraceID[:], r.fixed(len(ex.TraceID)))
	copy(ex.SpanID[:], r.fixed(len(ex.SpanID)))
	ex.Start, ex.End, ex.Received = r.time(), r.time(), r.time()
	ex.Agent = r.byte()&flagAgent != 0
	ex.Model, ex.AgentName = string(r.bytes()), string(r.bytes())
	ex.Input, ex.Output = string(r.bytes()), string(r.bytes())
	ex.Instructions = r.strings()
	if withResource {
		res, err := decodeResource(r.bytes())
		if err != nil {
			r.fail()
		}
		ex.Resource = res
	}
	return ex
}

// encodeResource encodes a resource as the protobuf of traces holding it
// alone; a zero resource encodes as nothing.
func encodeResource(res pcommon.Resource) ([]byte, error) {
	if res == (pcommon.Resource{}) {
		return nil, nil
	}
	td := ptrace.NewTraces()
	res.CopyTo(td.ResourceSpans().AppendEmpty().Resource())
	var m ptrace.ProtoMarshaler
	b, err := m.MarshalTraces(td)
	if err != nil {
		return nil, fmt.Errorf("encoding resource: %w", err)
	}
	return b, nil
}

// decodeResource decodes what encodeResource wrote; nothing decodes as an
// empty resource.
func decodeResource(b []byte) (pcommon.Resource, error) {
	if len(b) == 0 {
		return pcommon.NewResource(), nil
	}
	var u ptrace.ProtoUnmarshaler
	td, err := u.UnmarshalTraces(b)
	if err != nil || td.ResourceSpans().Len() != 1 {
		return pcommon.Resource{}, fmt.Errorf("%w: malformed resource", ErrCorrupt)
	}
	return td.ResourceSpans().At(0).Resource(), nil
}

func appendStrings(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendBytes(b, []byte(s))
	}
	return b
}

func (r *reader) int() int {
	if r.err != nil {
		return 0
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > uint64(MaxItemBytes) {
		r.fail()
		return 0
	}
	r.b = r.b[k:]
	return int(n)
}

func (r *reader) strings() []string {
	n := r.int()
	if n > len(r.b) {
		r.fail()
		return nil
	}
	var out []string
	for range n {
		out = append(out, string(r.bytes()))
	}
	if r.err != nil {
		return nil
	}
	return out
}

func (r *reader) fixed(n int) []byte {
	if r.err != nil || len(r.b) < n {
		r.fail()
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}
