package llmevalmetricsconnector // import "github.com/llm-eval/llm_eval/connector/llmevalmetricsconnector"

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// attrHasher turns an attribute map into a 128-bit key that does not depend
// on the order of its entries: two 64-bit hashes of one canonical encoding,
// under two random seeds. Keys are only compared inside this process. It
// keeps its buffers between calls and is not safe for concurrent use.
type attrHasher struct {
	seeds [2]maphash.Seed
	buf   []byte
	keys  []string
}

func newAttrHasher() *attrHasher {
	return &attrHasher{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
}

// hash returns the key of m: equal maps, in any entry order, give equal keys.
func (ah *attrHasher) hash(m pcommon.Map) [16]byte {
	ah.buf = appendMap(ah.buf[:0], m, &ah.keys)
	var out [16]byte
	binary.LittleEndian.PutUint64(out[:8], maphash.Bytes(ah.seeds[0], ah.buf))
	binary.LittleEndian.PutUint64(out[8:], maphash.Bytes(ah.seeds[1], ah.buf))
	return out
}

// appendMap writes m with its keys sorted; every part carries a type tag or
// a length so that no two different maps write the same bytes.
func appendMap(b []byte, m pcommon.Map, scratch *[]string) []byte {
	keys := (*scratch)[:0]
	for k := range m.All() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	*scratch = keys // keeps the capacity for the next call
	if hasNested(m) {
		keys = slices.Clone(keys) // nested maps reuse the scratch slice
	}
	b = binary.AppendUvarint(append(b, 'm'), uint64(len(keys)))
	for _, k := range keys {
		v, _ := m.Get(k)
		b = appendString(b, k)
		b = appendValue(b, v, scratch)
	}
	return b
}

func hasNested(m pcommon.Map) bool {
	for _, v := range m.All() {
		if t := v.Type(); t == pcommon.ValueTypeMap || t == pcommon.ValueTypeSlice {
			return true
		}
	}
	return false
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendValue(b []byte, v pcommon.Value, scratch *[]string) []byte {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return appendString(append(b, 's'), v.Str())
	case pcommon.ValueTypeInt:
		return binary.AppendVarint(append(b, 'i'), v.Int())
	case pcommon.ValueTypeDouble:
		return binary.LittleEndian.AppendUint64(append(b, 'd'), math.Float64bits(v.Double()))
	case pcommon.ValueTypeBool:
		if v.Bool() {
			return append(b, 't')
		}
		return append(b, 'f')
	case pcommon.ValueTypeBytes:
		raw := v.Bytes().AsRaw()
		return append(binary.AppendUvarint(append(b, 'b'), uint64(len(raw))), raw...)
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		b = binary.AppendUvarint(append(b, 'l'), uint64(s.Len()))
		for i := 0; i < s.Len(); i++ {
			b = appendValue(b, s.At(i), scratch)
		}
		return b
	case pcommon.ValueTypeMap:
		return appendMap(b, v.Map(), scratch)
	default: // empty
		return append(b, 'e')
	}
}
