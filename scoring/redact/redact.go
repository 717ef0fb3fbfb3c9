package redact

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Built-in redaction pattern names.
const (
	Email       = "email"
	Phone       = "phone"
	PaymentCard = "payment_card"
	// Custom names the matches of Config.Patterns.
	Custom = "custom"
)

// Builtins returns the names of the built-in patterns.
func Builtins() []string {
	return []string{Email, Phone, PaymentCard}
}

// Config selects what a Redactor removes.
type Config struct {
	// Builtin names built-in patterns: email, phone, payment_card.
	Builtin []string
	// Patterns are extra RE2 regular expressions; their matches are
	// replaced by [REDACTED:custom]. A pattern must not match empty text.
	Patterns []string
}

// Redactor replaces personal data in text with [REDACTED:<name>] before
// the text is sent to a judge. Redacting redacted text changes nothing.
//
// What the built-ins match:
//   - email: local@domain.tld (a dotted domain ending in 2+ letters).
//   - payment_card: 13–19 digits starting with 2–6, written plain or in
//     groups of 3–6 digits (the first of 4) split by one kind of single
//     space or dash, that pass the Luhn check.
//   - phone: +country numbers with 8–15 digits (spaces, dashes,
//     parentheses); North American (555) 123-4567, 555-123-4567,
//     555.123.4567 with an optional leading 1; national numbers with a
//     trunk 0 and 9–12 digits (020 7946 0958, 01 23 45 67 89,
//     0612345678). Plain digit runs without + or trunk 0, dates, times,
//     versions and numbers glued to letters or dashes (order ids) are left.
type Redactor struct {
	rules []redactRule
}

type redactRule struct {
	name string
	find func(s string) [][2]int // sorted, non-overlapping, non-empty spans
}

var (
	redactMarkerRE = regexp.MustCompile(`\[REDACTED:[a-z_]+\]`)
	redactEmailRE  = regexp.MustCompile(`[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}`)
	// redactDigitRunRE finds digit groups split by single spaces or dashes.
	redactDigitRunRE = regexp.MustCompile(`\d+(?:[ \-]\d+)*`)
	redactPhoneREs   = []*regexp.Regexp{
		regexp.MustCompile(`\+\d{1,3}(?:[ \-]?(?:\(\d{1,4}\)|\d{1,4})){1,6}`),
		regexp.MustCompile(`(?:1[ .\-])?(?:\(\d{3}\) ?|\d{3}[ .\-])\d{3}[ .\-]\d{4}`),
		regexp.MustCompile(`0[1-9]\d{0,3}(?:[ \-]?\d{2,4}){2,4}`),
	}
)

// New compiles cfg. It fails on an unknown built-in name, an
// invalid pattern or a pattern that matches empty text, naming it, and
// when cfg selects nothing at all.
func New(cfg Config) (*Redactor, error) {
	if len(cfg.Builtin) == 0 && len(cfg.Patterns) == 0 {
		return nil, errors.New("no built-in pattern or pattern selected")
	}
	for _, name := range cfg.Builtin {
		if !slices.Contains(Builtins(), name) {
			return nil, fmt.Errorf("unknown built-in pattern %q (want one of %s)",
				name, strings.Join(Builtins(), ", "))
		}
	}
	r := &Redactor{}
	// Fixed order: e-mails first (their digits must not be taken for
	// phones), cards before phones (Luhn-checked, more specific).
	builtins := []redactRule{
		{name: Email, find: redactFindEmails},
		{name: PaymentCard, find: redactFindCards},
		{name: Phone, find: redactFindPhones},
	}
	for _, b := range builtins {
		if slices.Contains(cfg.Builtin, b.name) {
			r.rules = append(r.rules, b)
		}
	}
	for i, p := range cfg.Patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("pattern %d %q: %w", i, p, err)
		}
		if re.MatchString("") {
			return nil, fmt.Errorf("pattern %d %q matches empty text", i, p)
		}
		r.rules = append(r.rules, redactRule{name: Custom, find: func(s string) [][2]int {
			var spans [][2]int
			for _, loc := range re.FindAllStringIndex(s, -1) {
				if loc[1] > loc[0] {
					spans = append(spans, [2]int{loc[0], loc[1]})
				}
			}
			return spans
		}})
	}
	return r, nil
}

// Redact returns s with every match replaced. It is safe for concurrent
// use and is what scoring.Options.Redact expects.
func (r *Redactor) Redact(s string) string {
	// A replacement can change what is next to a number (a card next to
	// a phone, say); repeat until nothing changes, so that redacting
	// again is a no-op. Each round that changes something shrinks the
	// unredacted text, so this ends.
	for {
		out := s
		for _, rule := range r.rules {
			out = rule.apply(out)
		}
		if out == s {
			return out
		}
		s = out
	}
}

// apply replaces the rule's matches in the text between existing markers.
func (rule redactRule) apply(s string) string {
	var b strings.Builder
	changed := false
	pos := 0
	markers := redactMarkerRE.FindAllStringIndex(s, -1)
	markers = append(markers, []int{len(s), len(s)})
	for _, m := range markers {
		seg := s[pos:m[0]]
		last := 0
		for _, sp := range rule.find(seg) {
			if !changed {
				b.Grow(len(s))
				b.WriteString(s[:pos])
				changed = true
			}
			b.WriteString(seg[last:sp[0]])
			b.WriteString("[REDACTED:")
			b.WriteString(rule.name)
			b.WriteString("]")
			last = sp[1]
		}
		if changed {
			b.WriteString(seg[last:])
			b.WriteString(s[m[0]:m[1]])
		}
		pos = m[1]
	}
	if !changed {
		return s
	}
	return b.String()
}

func redactFindEmails(s string) [][2]int {
	var spans [][2]int
	for _, loc := range redactEmailRE.FindAllStringIndex(s, -1) {
		spans = append(spans, [2]int{loc[0], loc[1]})
	}
	return spans
}

func redactFindPhones(s string) [][2]int {
	var all [][2]int
	for i, re := range redactPhoneREs {
		minDigits, maxDigits := 8, 15
		if i > 0 {
			minDigits, maxDigits = 9, 12
		}
		all = append(all, redactFindAccepted(re, s, func(start, end int) bool {
			n := redactCountDigits(s[start:end])
			return n >= minDigits && n <= maxDigits && redactNumberBoundary(s, start, end)
		})...)
	}
	// Keep the leftmost, then longest, of overlapping matches.
	slices.SortFunc(all, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return b[1] - a[1]
	})
	var spans [][2]int
	for _, sp := range all {
		if len(spans) > 0 && sp[0] < spans[len(spans)-1][1] {
			continue
		}
		spans = append(spans, sp)
	}
	return spans
}

// redactFindAccepted returns re's matches that accept allows; after a refused
// match the search goes on from the next character, so that a valid
// match overlapping a refused one is still found.
func redactFindAccepted(re *regexp.Regexp, s string, accept func(start, end int) bool) [][2]int {
	var spans [][2]int
	for pos := 0; pos < len(s); {
		loc := re.FindStringIndex(s[pos:])
		if loc == nil {
			break
		}
		start, end := pos+loc[0], pos+loc[1]
		if end > start && accept(start, end) {
			spans = append(spans, [2]int{start, end})
			pos = end
			continue
		}
		_, size := utf8.DecodeRuneInString(s[start:])
		pos = start + size
	}
	return spans
}

// redactNumberBoundary reports whether s[start:end] stands alone as a number:
// not glued to letters, digits, or id and version punctuation before it,
// and not followed by letters, dashes, slashes or a decimal part.
func redactNumberBoundary(s string, start, end int) bool {
	if start > 0 && strings.IndexByte("_.-/+#", s[start-1]) >= 0 || start > 0 && redactIsWordByte(s[start-1]) {
		return false
	}
	if end < len(s) {
		c := s[end]
		if redactIsWordByte(c) || strings.IndexByte("_-/", c) >= 0 {
			return false
		}
		if (c == '.' || c == ',' || c == ':') && end+1 < len(s) && redactIsDigit(s[end+1]) {
			return false
		}
	}
	return true
}

func redactFindCards(s string) [][2]int {
	var spans [][2]int
	for _, run := range redactDigitRunRE.FindAllStringIndex(s, -1) {
		if !redactNumberBoundary(s, run[0], run[1]) && !redactCardAfterHash(s, run[0], run[1]) {
			continue
		}
		groups := redactDigitGroups(s, run[0], run[1])
		for i := 0; i < len(groups); {
			found := false
			for j := min(i+6, len(groups)-1); j >= i; j-- {
				if redactValidCard(s, groups[i:j+1]) {
					spans = append(spans, [2]int{groups[i][0], groups[j][1]})
					i, found = j+1, true
					break
				}
			}
			if !found {
				i++
			}
		}
	}
	return spans
}

// redactCardAfterHash lets "#4111 1111 1111 1111" through: a hash sign
// before a Luhn-valid card number does not make it an id.
func redactCardAfterHash(s string, start, end int) bool {
	if start == 0 || s[start-1] != '#' {
		return false
	}
	return redactNumberBoundary(s[start:], 0, end-start)
}

// redactDigitGroups splits a run of digit groups into [start, end) spans.
func redactDigitGroups(s string, start, end int) [][2]int {
	var groups [][2]int
	g := start
	for i := start; i <= end; i++ {
		if i == end || !redactIsDigit(s[i]) {
			groups = append(groups, [2]int{g, i})
			g = i + 1
		}
	}
	return groups
}

// redactValidCard reports whether the digit groups form a card number.
func redactValidCard(s string, groups [][2]int) bool {
	var digits []byte
	for k, g := range groups {
		n := g[1] - g[0]
		if len(groups) > 1 {
			if k == 0 && n != 4 || n < 3 || n > 6 {
				return false
			}
			if k > 0 && s[g[0]-1] != s[groups[1][0]-1] {
				return false // mixed separators
			}
		}
		digits = append(digits, s[g[0]:g[1]]...)
	}
	if len(digits) < 13 || len(digits) > 19 || digits[0] < '2' || digits[0] > '6' {
		return false
	}
	return redactLuhn(digits)
}

func redactLuhn(digits []byte) bool {
	sum := 0
	double := false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

func redactCountDigits(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if redactIsDigit(s[i]) {
			n++
		}
	}
	return n
}

func redactIsDigit(c byte) bool { return c >= '0' && c <= '9' }

func redactIsWordByte(c byte) bool {
	return redactIsDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}
