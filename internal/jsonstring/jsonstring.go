// Package jsonstring writes Go strings as JSON string literals, byte for
// byte as encoding/json does, without its reflection and buffer copy.
// Judge requests and prompts escape several KB of text per call, so the
// difference shows in an evaluation's CPU.
package jsonstring

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// plain and plainHTML mark the bytes copied as they are: printable ASCII
// but '"' and '\\' (and, for HTML, '<', '>' and '&'). A table lookup per
// byte is what makes the common run of plain text fast.
var plain, plainHTML = func() (p, h [256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		p[b] = b != '"' && b != '\\'
		h[b] = p[b] && b != '<' && b != '>' && b != '&'
	}
	return p, h
}()

// Append appends s to dst as a JSON string literal: quotes, backslashes and
// control characters escaped, U+2028 and U+2029 as \u escapes, invalid
// UTF-8 as U+FFFD. With html, '<', '>' and '&' are escaped too, as
// json.Marshal does; without it the output is that of an Encoder with
// SetEscapeHTML(false).
func Append(dst []byte, s string, html bool) []byte {
	safe := &plain
	if html {
		safe = &plainHTML
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if safe[b] {
			i++
			continue
		}
		if b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
