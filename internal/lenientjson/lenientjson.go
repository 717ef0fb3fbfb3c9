// Package lenientjson decodes JSON that may be cut short, carry trailing
// commas or be followed by more text: telemetry attributes cut at a length
// limit and LLM judge replies. It is the one such scanner in the module;
// the processor's span reader and the scoring library both use it.
package lenientjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxJSONDepth bounds nesting so hostile input cannot exhaust the stack.
const maxJSONDepth = 128

// Errors of Prefix.
var (
	ErrTruncated = errors.New("json: input ends early")
	ErrSyntax    = errors.New("json: invalid syntax")
	// ErrTooDeep is the syntax error of a value nested more than
	// maxJSONDepth levels deep.
	ErrTooDeep = fmt.Errorf("%w: nested more than %d levels deep", ErrSyntax, maxJSONDepth)
)

// Parse decodes JSON text as far as it goes. Telemetry SDKs cut long
// attribute values at a length limit, often mid-string, so a value that ends
// early is kept with everything read up to the cut. On a syntax error the
// element being read is dropped and the elements before it are kept. ok is
// false when nothing usable was read: the caller should then treat the text
// as plain text. keepCut says whether a string cut by the end of the input is
// kept as its prefix (for an answer, read as far as it goes) or dropped (for
// a prompt, where a cut turn would be mistaken for the whole question).
// Numbers come back as json.Number so that ids survive re-encoding exactly.
func Parse(s string, keepCut bool) (v any, ok bool) {
	p := lenientParser{s: s, keepCut: keepCut}
	p.skipSpace()
	v, err := p.value(0)
	switch {
	case err == nil:
		p.skipSpace()
		if p.i < len(p.s) {
			// Text after the value: prose that happens to start with a bracket.
			return nil, false
		}
		return v, true
	case errors.Is(err, ErrTruncated):
		return v, !isEmptyContainer(v)
	default:
		return v, v != nil && !isEmptyContainer(v)
	}
}

// Prefix reads the one JSON value at the start of s, ignoring what follows
// it, and returns it with the number of bytes read. err is ErrTruncated when
// s ends inside the value (the usual sign of a reply cut at a token limit)
// and wraps ErrSyntax when the value is not JSON. Trailing commas before a
// closing bracket are accepted.
func Prefix(s string) (v any, n int, err error) {
	p := lenientParser{s: s}
	p.skipSpace()
	v, err = p.value(0)
	if err != nil {
		if errors.Is(err, ErrSyntax) {
			return nil, p.i, fmt.Errorf("%w at byte %d", err, p.i)
		}
		return nil, p.i, err
	}
	return v, p.i, nil
}

func isEmptyContainer(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case []any:
		return len(t) == 0
	case map[string]any:
		return len(t) == 0
	}
	return false
}

type lenientParser struct {
	s       string
	i       int
	keepCut bool
}

func (p *lenientParser) skipSpace() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// closes consumes close when it is the next byte after spaces: a trailing
// comma, as LLMs write them.
func (p *lenientParser) closes(close byte) bool {
	j := p.i
	for j < len(p.s) && (p.s[j] == ' ' || p.s[j] == '\t' || p.s[j] == '\n' || p.s[j] == '\r') {
		j++
	}
	if j < len(p.s) && p.s[j] == close {
		p.i = j + 1
		return true
	}
	return false
}

// value reads one value. With ErrTruncated the returned value holds what was
// read before the end; with ErrSyntax it holds what was complete before the
// error (containers only; scalars are nil).
func (p *lenientParser) value(depth int) (any, error) {
	if p.i >= len(p.s) {
		return nil, ErrTruncated
	}
	if depth > maxJSONDepth {
		return nil, ErrTooDeep
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.str()
	case c == 't':
		return p.literal("true", true)
	case c == 'f':
		return p.literal("false", false)
	case c == 'n':
		return p.literal("null", nil)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		return nil, ErrSyntax
	}
}

func (p *lenientParser) literal(word string, v any) (any, error) {
	rest := p.s[p.i:]
	if strings.HasPrefix(rest, word) {
		p.i += len(word)
		return v, nil
	}
	if len(rest) < len(word) && strings.HasPrefix(word, rest) {
		p.i = len(p.s)
		return nil, ErrTruncated
	}
	return nil, ErrSyntax
}

func (p *lenientParser) number() (any, error) {
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			p.i++
			continue
		}
		break
	}
	n := json.Number(p.s[start:p.i])
	if _, err := n.Float64(); err != nil {
		if p.i == len(p.s) {
			return nil, ErrTruncated
		}
		return nil, ErrSyntax
	}
	if p.i == len(p.s) {
		// A number at the very end may have lost digits.
		return n, ErrTruncated
	}
	return n, nil
}

func (p *lenientParser) array(depth int) (any, error) {
	p.i++ // '['
	out := []any{}
	for {
		p.skipSpace()
		if p.i >= len(p.s) {
			return out, ErrTruncated
		}
		if p.s[p.i] == ']' {
			p.i++
			return out, nil
		}
		v, err := p.value(depth + 1)
		if err != nil {
			if errors.Is(err, ErrTruncated) && v != nil {
				out = append(out, v)
			}
			return out, err
		}
		out = append(out, v)
		if done, err := p.afterItem(']'); done || err != nil {
			return out, err
		}
	}
}

func (p *lenientParser) object(depth int) (any, error) {
	p.i++ // '{'
	out := map[string]any{}
	for {
		p.skipSpace()
		if p.i >= len(p.s) {
			return out, ErrTruncated
		}
		switch p.s[p.i] {
		case '}':
			p.i++
			return out, nil
		case '"':
		default:
			return out, ErrSyntax
		}
		k, err := p.str()
		if err != nil {
			return out, err
		}
		p.skipSpace()
		if p.i >= len(p.s) {
			return out, ErrTruncated
		}
		if p.s[p.i] != ':' {
			return out, ErrSyntax
		}
		p.i++
		p.skipSpace()
		v, err := p.value(depth + 1)
		if err != nil {
			if errors.Is(err, ErrTruncated) && v != nil {
				out[k.(string)] = v
			}
			return out, err
		}
		out[k.(string)] = v
		if done, err := p.afterItem('}'); done || err != nil {
			return out, err
		}
	}
}

// afterItem reads what follows an array element or object member: a comma
// (one before close is tolerated) or close. It reports whether the
// container ended.
func (p *lenientParser) afterItem(close byte) (bool, error) {
	p.skipSpace()
	if p.i >= len(p.s) {
		return false, ErrTruncated
	}
	switch p.s[p.i] {
	case ',':
		p.i++
		return p.closes(close), nil
	case close:
		p.i++
		return true, nil
	}
	return false, ErrSyntax
}

// str reads a string. A string cut by the end of input returns its prefix
// with ErrTruncated.
func (p *lenientParser) str() (any, error) {
	p.i++ // opening quote
	start := p.i
	// Fast path: no escapes.
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '"' {
			v := p.s[start:p.i]
			p.i++
			return v, nil
		}
		if c == '\\' {
			break
		}
		p.i++
	}
	if p.i >= len(p.s) {
		return p.cut(p.s[start:])
	}
	var b strings.Builder
	b.WriteString(p.s[start:p.i])
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch c {
		case '"':
			p.i++
			return b.String(), nil
		case '\\':
			if p.i+1 >= len(p.s) {
				p.i = len(p.s)
				return p.cut(b.String())
			}
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, ok, trunc := p.hex4()
				if trunc {
					return p.cut(b.String())
				}
				if !ok {
					return nil, ErrSyntax
				}
				if utf16.IsSurrogate(r) {
					if strings.HasPrefix(p.s[p.i:], `\u`) {
						p.i += 2
						r2, ok2, trunc2 := p.hex4()
						if trunc2 {
							return p.cut(b.String())
						}
						if ok2 {
							r = utf16.DecodeRune(r, r2)
						} else {
							r = utf8.RuneError
						}
					} else {
						r = utf8.RuneError
					}
				}
				b.WriteRune(r)
			default:
				return nil, ErrSyntax
			}
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return p.cut(b.String())
}

// cut returns a string that the end of input cut short.
func (p *lenientParser) cut(prefix string) (any, error) {
	if !p.keepCut {
		return nil, ErrTruncated
	}
	return prefix, ErrTruncated
}

func (p *lenientParser) hex4() (r rune, ok, truncated bool) {
	if p.i+4 > len(p.s) {
		p.i = len(p.s)
		return 0, false, true
	}
	for _, c := range []byte(p.s[p.i : p.i+4]) {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false, false
		}
		r = r<<4 | rune(d)
	}
	p.i += 4
	return r, true, false
}
