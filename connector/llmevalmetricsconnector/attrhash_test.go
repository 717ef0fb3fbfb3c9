package llmevalmetricsconnector

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

func TestAttrHasherKeys(t *testing.T) {
	build := func(raw map[string]any) pcommon.Map {
		m := pcommon.NewMap()
		if err := m.FromRaw(raw); err != nil {
			t.Fatal(err)
		}
		return m
	}
	ordered := pcommon.NewMap()
	ordered.PutStr("b", "2")
	ordered.PutStr("a", "1")
	reversed := pcommon.NewMap()
	reversed.PutStr("a", "1")
	reversed.PutStr("b", "2")

	tests := []struct {
		name  string
		x, y  pcommon.Map
		equal bool
	}{
		{name: "entry order does not matter", x: ordered, y: reversed, equal: true},
		{name: "empty maps", x: pcommon.NewMap(), y: pcommon.NewMap(), equal: true},
		{name: "nested maps in any order", x: build(map[string]any{"n": map[string]any{"x": 1, "y": "z"}, "k": "v"}), y: build(map[string]any{"k": "v", "n": map[string]any{"y": "z", "x": 1}}), equal: true},
		{name: "different value", x: build(map[string]any{"a": "1"}), y: build(map[string]any{"a": "2"})},
		{name: "string and int differ", x: build(map[string]any{"a": "1"}), y: build(map[string]any{"a": 1})},
		{name: "key and value boundary", x: build(map[string]any{"ab": "c"}), y: build(map[string]any{"a": "bc"})},
		{name: "two entries against one", x: build(map[string]any{"a": "", "b": ""}), y: build(map[string]any{"a": "b"})},
		{name: "slice against its elements", x: build(map[string]any{"a": []any{"x", "y"}}), y: build(map[string]any{"a": []any{"xy"}})},
		{name: "true and false", x: build(map[string]any{"a": true}), y: build(map[string]any{"a": false})},
		{name: "empty and absent value", x: build(map[string]any{"a": nil}), y: pcommon.NewMap()},
	}
	h := newAttrHasher()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hx, hy := h.hash(tt.x), h.hash(tt.y)
			if tt.equal {
				assert.Equal(t, hx, hy)
			} else {
				assert.NotEqual(t, hx, hy)
			}
		})
	}
}
