package checks

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// regexCheck compiles regex_match and regex_absent.
func regexCheck(r Rule) (ruleCheck, error) {
	if r.Pattern == "" {
		return nil, errors.New("pattern: missing")
	}
	expr := r.Pattern
	if r.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("pattern: %w", err)
	}
	if re.MatchString("") {
		return nil, fmt.Errorf("pattern: %q matches empty text", r.Pattern)
	}
	if r.Type == RuleRegexAbsent {
		return func(text string) (bool, string) {
			if n := len(re.FindAllStringIndex(text, -1)); n > 0 {
				return false, fmt.Sprintf("pattern matched %d times, want none", n)
			}
			return true, "pattern did not match"
		}, nil
	}
	lo, hi, err := bounds(r, 1, false)
	if err != nil {
		return nil, err
	}
	return func(text string) (bool, string) {
		return within(len(re.FindAllStringIndex(text, -1)), lo, hi, "matches")
	}, nil
}

// containsCheck compiles contains and excludes. Occurrences do not overlap.
func containsCheck(r Rule) (ruleCheck, error) {
	if r.Value == "" {
		return nil, errors.New("value: missing")
	}
	count := func(text string) int { return countOccurrences(text, r.Value, r.IgnoreCase, r.WholeWord) }
	if r.Type == RuleExcludes {
		return func(text string) (bool, string) {
			if n := count(text); n > 0 {
				return false, fmt.Sprintf("found %q %d times, want none", r.Value, n)
			}
			return true, fmt.Sprintf("%q not found", r.Value)
		}, nil
	}
	lo, hi, err := bounds(r, 1, false)
	if err != nil {
		return nil, err
	}
	return func(text string) (bool, string) {
		return within(count(text), lo, hi, fmt.Sprintf("occurrences of %q", r.Value))
	}, nil
}

// countOccurrences counts non-overlapping occurrences of sub in text.
func countOccurrences(text, sub string, ignoreCase, wholeWord bool) int {
	if ignoreCase {
		text, sub = strings.ToLower(text), strings.ToLower(sub)
	}
	if !wholeWord {
		return strings.Count(text, sub)
	}
	n := 0
	for i := 0; i <= len(text)-len(sub); {
		j := strings.Index(text[i:], sub)
		if j < 0 {
			break
		}
		start, end := i+j, i+j+len(sub)
		before, _ := utf8.DecodeLastRuneInString(text[:start])
		after, _ := utf8.DecodeRuneInString(text[end:])
		if (start == 0 || !isWordRune(before)) && (end == len(text) || !isWordRune(after)) {
			n++
			i = end
		} else {
			_, size := utf8.DecodeRuneInString(text[start:])
			i = start + size
		}
	}
	return n
}

func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// affixCheck compiles starts_with and ends_with. Leading space is ignored
// for starts_with; trailing space and quotation marks for ends_with, so a
// quoted answer still ends with its last words.
func affixCheck(r Rule) (ruleCheck, error) {
	want := strings.TrimSpace(r.Value)
	if want == "" {
		return nil, errors.New("value: missing")
	}
	fold := func(s string) string { return s }
	if r.IgnoreCase {
		want = strings.ToLower(want)
		fold = strings.ToLower
	}
	if r.Type == RuleStartsWith {
		return func(text string) (bool, string) {
			if strings.HasPrefix(fold(strings.TrimLeftFunc(text, unicode.IsSpace)), want) {
				return true, "starts with the value"
			}
			return false, "does not start with the value"
		}, nil
	}
	return func(text string) (bool, string) {
		t := strings.TrimRight(strings.TrimRightFunc(text, unicode.IsSpace), `"“”'`)
		if strings.HasSuffix(fold(t), want) {
			return true, "ends with the value"
		}
		return false, "does not end with the value"
	}, nil
}

// firstWordCheck compiles first_word: the first word of the text, or of
// paragraph Paragraph, with surrounding quotes and punctuation removed.
func firstWordCheck(r Rule) (ruleCheck, error) {
	want := strings.TrimSpace(r.Value)
	if want == "" || strings.ContainsFunc(want, unicode.IsSpace) {
		return nil, errors.New("value: want one word")
	}
	if r.Paragraph < 0 {
		return nil, fmt.Errorf("paragraph: must be positive, got %d", r.Paragraph)
	}
	return func(text string) (bool, string) {
		if r.Paragraph > 0 {
			ps := paragraphs(text, r.Separator)
			if r.Paragraph > len(ps) {
				return false, fmt.Sprintf("only %d paragraphs, want paragraph %d", len(ps), r.Paragraph)
			}
			text = ps[r.Paragraph-1]
		}
		got := firstWord(text)
		if got == want || (r.IgnoreCase && strings.EqualFold(got, want)) {
			return true, fmt.Sprintf("first word is %q", got)
		}
		return false, fmt.Sprintf("first word is %q, want %q", got, want)
	}, nil
}

// firstWord returns the first space-separated token of text without
// leading quotes and cut at the first punctuation mark.
func firstWord(text string) string {
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return ""
	}
	w := strings.TrimLeft(fields[0], `"'“‘*_#`)
	if i := strings.IndexAny(w, `.,?!;:'"”’*_`); i >= 0 {
		w = w[:i]
	}
	return w
}

// countCheck compiles words, sentences, paragraphs and characters.
func countCheck(r Rule) (ruleCheck, error) {
	lo, hi, err := bounds(r, 0, true)
	if err != nil {
		return nil, err
	}
	var measure func(string) int
	switch r.Type {
	case RuleWords:
		measure = countWords
	case RuleSentences:
		measure = countSentences
	case RuleParagraphs:
		measure = func(t string) int { return len(paragraphs(t, r.Separator)) }
	default:
		measure = utf8.RuneCountInString
	}
	return func(text string) (bool, string) { return within(measure(text), lo, hi, r.Type) }, nil
}

// countWords counts runs of letters, digits and underscores (a word with an
// apostrophe such as "don't" counts as two, as most word counters do).
func countWords(text string) int {
	n, in := 0, false
	for _, c := range text {
		w := isWordRune(c)
		if w && !in {
			n++
		}
		in = w
	}
	return n
}

// sentenceAbbrevs end with a period that does not end a sentence.
var sentenceAbbrevs = map[string]bool{
	"mr": true, "mrs": true, "ms": true, "dr": true, "prof": true, "st": true, "jr": true, "sr": true,
	"vs": true, "etc": true, "e.g": true, "i.e": true, "no": true, "fig": true, "approx": true, "a.m": true, "p.m": true, "u.s": true,
}

// countSentences counts runs of text that hold a letter or digit and end at
// '.', '!', '?', '…' or their CJK forms followed by space or the end. A
// period after a known abbreviation, a single letter (an initial) or
// inside a number does not end a sentence.
func countSentences(text string) int {
	n := 0
	content := false
	rs := []rune(text)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		if isWordRune(c) {
			content = true
			continue
		}
		if !strings.ContainsRune(".!?…。！？", c) {
			continue
		}
		for i+1 < len(rs) && strings.ContainsRune(".!?…。！？\"'”’)", rs[i+1]) {
			i++
		}
		cjk := strings.ContainsRune("。！？", c)
		if i+1 < len(rs) && !unicode.IsSpace(rs[i+1]) && !cjk {
			continue
		}
		if c == '.' && endsWithAbbrev(rs[:i]) {
			continue
		}
		if content {
			n++
		}
		content = false
	}
	if content {
		n++
	}
	return n
}

// endsWithAbbrev reports whether the word before the final period in rs is
// an abbreviation or a single letter.
func endsWithAbbrev(rs []rune) bool {
	j := len(rs)
	for j > 0 && rs[j-1] == '.' {
		j--
	}
	k := j
	for k > 0 && (isWordRune(rs[k-1]) || rs[k-1] == '.') {
		k--
	}
	w := strings.ToLower(string(rs[k:j]))
	return sentenceAbbrevs[w] || utf8.RuneCountInString(w) == 1 && unicode.IsLetter([]rune(w)[0])
}

// blankLines separates paragraphs by default.
var blankLines = regexp.MustCompile(`\n[ \t\r]*\n`)

// paragraphs splits text at sep (blank lines when empty) and returns the
// trimmed parts that hold any text.
func paragraphs(text, sep string) []string {
	var parts []string
	if sep == "" {
		parts = blankLines.Split(text, -1)
	} else {
		parts = strings.Split(text, sep)
	}
	out := parts[:0]
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// caseCheck compiles lowercase and uppercase: the text has at least one
// cased letter and none of the other case.
func caseCheck(upper bool) ruleCheck {
	return func(text string) (bool, string) {
		letters, wrong := 0, 0
		for _, c := range text {
			switch {
			case unicode.IsUpper(c) || unicode.IsTitle(c):
				letters++
				if !upper {
					wrong++
				}
			case unicode.IsLower(c):
				letters++
				if upper {
					wrong++
				}
			}
		}
		want := "lower"
		if upper {
			want = "upper"
		}
		switch {
		case letters == 0:
			return false, "no cased letters"
		case wrong > 0:
			return false, fmt.Sprintf("%d letters not in %s case", wrong, want)
		}
		return true, fmt.Sprintf("all %d cased letters in %s case", letters, want)
	}
}
