package genai

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseLenientJSON(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		keepCut     bool
		want        any
		wantPartial bool
		wantOK      bool
	}{
		{"complete", `[{"a":"x","n":1.5,"b":true,"z":null}]`, false,
			[]any{map[string]any{"a": "x", "n": json.Number("1.5"), "b": true, "z": nil}}, false, true},
		{"escapes and surrogates", `["a\"b\\c\n\u00e9\ud83d\ude00"]`, false, []any{"a\"b\\c\né😀"}, false, true},
		{"cut between elements", `[{"a":"x"},{"a":"y"},`, false, []any{map[string]any{"a": "x"}, map[string]any{"a": "y"}}, true, true},
		{"cut string dropped", `[{"a":"x"},{"a":"yy`, false, []any{map[string]any{"a": "x"}, map[string]any{}}, true, true},
		{"cut string kept", `[{"a":"x"},{"a":"yy`, true, []any{map[string]any{"a": "x"}, map[string]any{"a": "yy"}}, true, true},
		{"cut inside escape", `["ab\u00`, true, []any{"ab"}, true, true},
		{"cut in key", `{"a":1,"bb`, false, map[string]any{"a": json.Number("1")}, true, true},
		{"cut literal", `[1,tr`, false, []any{json.Number("1")}, true, true},
		{"syntax error keeps earlier elements", `[{"a":1},{'b':2}]`, false, []any{map[string]any{"a": json.Number("1")}}, true, true},
		{"python repr is not json", `[{'role': 'user'}]`, false, nil, true, false},
		{"prose after brackets is not json", `[1] is the first footnote`, false, nil, false, false},
		{"empty array is complete", `[]`, false, []any{}, false, true},
		{"only an opening bracket", `[`, false, []any{}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, partial, ok := parseLenientJSON(tt.in, tt.keepCut)
			assert.Equal(t, tt.wantOK, ok, "ok")
			if tt.wantOK {
				assert.Equal(t, tt.want, got)
				assert.Equal(t, tt.wantPartial, partial, "partial")
			}
		})
	}
}

func TestParseLenientJSONDepth(t *testing.T) {
	deep := strings.Repeat("[", 100000)
	assert.NotPanics(t, func() { parseLenientJSON(deep, true) })
}

func TestClipBoundsAndRepairs(t *testing.T) {
	long := strings.Repeat("é", maxFieldBytes) // 2 bytes each
	got := clip(long)
	assert.LessOrEqual(t, len(got), maxFieldBytes)
	assert.True(t, strings.HasSuffix(got, "é"), "cut on a rune boundary")
	assert.Equal(t, "a\uFFFDb", clip("a\xffb"))
}

func TestIndexedBounds(t *testing.T) {
	attrs := map[string]any{
		"gen_ai.prompt.99999999999.content": "index too large",
		"gen_ai.prompt.x.content":           "no index",
		"gen_ai.prompt.3":                   "no suffix",
	}
	for i := 0; i < 3*maxItems; i++ {
		attrs["gen_ai.completion."+itoa(i)+".content"] = "c" + itoa(i)
	}
	attrs["gen_ai.completion.0.role"] = "assistant"
	span := newSpan(t, "openai.chat", attrs)
	idx := collectIndexed(span.Attributes())
	assert.Empty(t, idx.get(prefixPrompt))
	assert.Len(t, idx.get(prefixCompletion), maxItems)
	assert.Equal(t, "c0", read(span).Output, "the first choice is read")
}

func itoa(i int) string { return strconv.Itoa(i) }
