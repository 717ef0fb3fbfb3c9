package jsonstring

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// encodingJSON is what encoding/json writes for s, without the Encoder's
// trailing newline.
func encodingJSON(t *testing.T, s string, html bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func TestAppend(t *testing.T) {
	tests := []struct {
		in         string
		html, text string
	}{
		{"", `""`, `""`},
		{"plain", `"plain"`, `"plain"`},
		{"a<b>&c", `"a\u003cb\u003e\u0026c"`, `"a<b>&c"`},
		{"\"\\\n\t\x01", `"\"\\\n\t\u0001"`, `"\"\\\n\t\u0001"`},
		{"\u2028x\xff", `"\u2028x\ufffd"`, `"\u2028x\ufffd"`},
	}
	for _, tt := range tests {
		if got := string(Append(nil, tt.in, true)); got != tt.html {
			t.Errorf("Append(%q, html) = %s, want %s", tt.in, got, tt.html)
		}
		if got := string(Append([]byte("x"), tt.in, false)); got != "x"+tt.text {
			t.Errorf("Append(%q) = %s, want x%s", tt.in, got, tt.text)
		}
	}
}

func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "plain", "\"\\", "\x00\x01\x1f\x7f", "\b\f\n\r\t", "<>&", "\u2028\u2029", "\xff", "a\xc3", "é日🙂"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, html := range []bool{true, false} {
			if got, want := Append(nil, s, html), encodingJSON(t, s, html); !bytes.Equal(got, want) {
				t.Fatalf("Append(%q, %v) = %s, encoding/json gives %s", s, html, got, want)
			}
		}
	})
}

func ExampleAppend() {
	fmt.Println(string(Append(nil, "<<<OUTPUT \"hi\"\n", true)))
	fmt.Println(string(Append(nil, "<<<OUTPUT \"hi\"\n", false)))
	// Output:
	// "\u003c\u003c\u003cOUTPUT \"hi\"\n"
	// "<<<OUTPUT \"hi\"\n"
}

// BenchmarkAppend escapes a system prompt's worth of plain text, the
// common case of a judge request.
func BenchmarkAppend(b *testing.B) {
	s := strings.Repeat("You are an evaluator. Read the text (\"x\") and list its opinions.\n- A block: <<<OUTPUT\n", 50)
	buf := make([]byte, 0, 2*len(s))
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = Append(buf[:0], s, false)
	}
}
