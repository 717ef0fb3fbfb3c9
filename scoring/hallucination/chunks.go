package hallucination

import (
	"strings"
	"unicode/utf8"

	"github.com/llm-eval/llm_eval/scoring"
)

// A context longer than one request's budget (Options.MaxInputChars) is
// judged in chunks: the context items in order, packed into chunks of at
// most the budget in characters, an item longer than the budget split into
// pieces at a paragraph, line, sentence or word boundary near the budget.
// Pieces carry no truncation marker: the rest of the item follows in the
// next chunk, nothing of it is lost.

// contextChunks packs items into chunks of at most budget characters
// (runes) each, in order; budget 0 puts every item in one chunk.
func contextChunks(items []string, budget int) [][]string {
	if budget <= 0 || len(items) == 0 {
		return [][]string{items}
	}
	var chunks [][]string
	var cur []string
	used := 0
	flush := func() {
		if len(cur) > 0 {
			chunks = append(chunks, cur)
			cur, used = nil, 0
		}
	}
	for _, it := range items {
		n := utf8.RuneCountInString(it)
		if used+n > budget {
			flush()
		}
		if n <= budget {
			cur = append(cur, it)
			used += n
			continue
		}
		pieces := splitText(it, budget)
		for _, p := range pieces[:len(pieces)-1] {
			chunks = append(chunks, []string{p})
		}
		last := pieces[len(pieces)-1]
		cur, used = []string{last}, utf8.RuneCountInString(last)
	}
	flush()
	return chunks
}

// splitText cuts s into pieces of at most budget runes, each ending at the
// last paragraph break, line break, sentence end or space in the last
// quarter of its window, or at the budget when there is none. A text cut
// before it reached the scorer keeps its truncation marker whole at the
// end of its last piece.
func splitText(s string, budget int) []string {
	body, cut := strings.CutSuffix(s, scoring.TruncationMarker)
	if cut {
		pieces := splitText(body, budget)
		pieces[len(pieces)-1] += scoring.TruncationMarker
		return pieces
	}
	var pieces []string
	for utf8.RuneCountInString(s) > budget {
		end := byteOffset(s, budget)
		cut := boundary(s[:end], byteOffset(s, budget-budget/4))
		pieces = append(pieces, s[:cut])
		s = s[cut:]
	}
	return append(pieces, s)
}

// boundary returns where to end a piece of window: after the last
// paragraph break, line break, sentence end or space at or after from,
// else at the window's end.
func boundary(window string, from int) int {
	for _, sep := range []string{"\n\n", "\n", ". ", "! ", "? ", "。", " "} {
		if i := strings.LastIndex(window, sep); i >= from && i+len(sep) <= len(window) {
			return i + len(sep)
		}
	}
	return len(window)
}

// byteOffset is the byte offset of rune n of s (len(s) past its end).
func byteOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// runes counts the characters of texts.
func runes(texts []string) int {
	n := 0
	for _, t := range texts {
		n += utf8.RuneCountInString(t)
	}
	return n
}
