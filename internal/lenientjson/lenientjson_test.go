package lenientjson

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		keepCut bool
		want    any
		wantOK  bool
	}{
		{"complete", `[{"a":"x","n":1.5,"b":true,"z":null}]`, false,
			[]any{map[string]any{"a": "x", "n": json.Number("1.5"), "b": true, "z": nil}}, true},
		{"escapes and surrogates", `["a\"b\\c\n\u00e9\ud83d\ude00"]`, false, []any{"a\"b\\c\né😀"}, true},
		{"cut between elements", `[{"a":"x"},{"a":"y"},`, false, []any{map[string]any{"a": "x"}, map[string]any{"a": "y"}}, true},
		{"cut string dropped", `[{"a":"x"},{"a":"yy`, false, []any{map[string]any{"a": "x"}, map[string]any{}}, true},
		{"cut string kept", `[{"a":"x"},{"a":"yy`, true, []any{map[string]any{"a": "x"}, map[string]any{"a": "yy"}}, true},
		{"cut inside escape", `["ab\u00`, true, []any{"ab"}, true},
		{"cut in key", `{"a":1,"bb`, false, map[string]any{"a": json.Number("1")}, true},
		{"cut literal", `[1,tr`, false, []any{json.Number("1")}, true},
		{"syntax error keeps earlier elements", `[{"a":1},{'b':2}]`, false, []any{map[string]any{"a": json.Number("1")}}, true},
		{"python repr is not json", `[{'role': 'user'}]`, false, nil, false},
		{"prose after brackets is not json", `[1] is the first footnote`, false, nil, false},
		{"empty array is complete", `[]`, false, []any{}, true},
		{"only an opening bracket", `[`, false, []any{}, false},
		{"trailing commas", `{"a":[1,2,],}`, false, map[string]any{"a": []any{json.Number("1"), json.Number("2")}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Parse(tt.in, tt.keepCut)
			assert.Equal(t, tt.wantOK, ok, "ok")
			if tt.wantOK {
				assert.Equal(t, tt.want, got)
			}
		})
	}
}

func TestParseDepth(t *testing.T) {
	deep := strings.Repeat("[", 100000)
	assert.NotPanics(t, func() { Parse(deep, true) })
}

func TestPrefix(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    any
		wantN   int
		wantErr error
	}{
		{"value then prose", `{"a":1} and more`, map[string]any{"a": json.Number("1")}, 7, nil},
		{"trailing comma", `["x",]`, []any{"x"}, 6, nil},
		{"cut short", `{"a":[1,2`, nil, 0, ErrTruncated},
		{"not json", `{'a':1}`, nil, 0, ErrSyntax},
		{"mismatched bracket", `{"a":[1}`, nil, 0, ErrSyntax},
		{"nested 10,000 deep", strings.Repeat("[", 10000) + strings.Repeat("]", 10000), nil, 0, ErrTooDeep},
		{"too deep is a syntax error", strings.Repeat(`{"a":`, 200) + "1" + strings.Repeat("}", 200), nil, 0, ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n, err := Prefix(tt.in)
			if tt.wantErr != nil {
				assert.True(t, errors.Is(err, tt.wantErr), "err = %v, want %v", err, tt.wantErr)
				return
			}
			assert.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantN, n)
		})
	}
}
