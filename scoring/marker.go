package scoring

import (
	"regexp"
	"strings"
)

// neutralMarker replaces a truncation marker that evaluated text carries
// itself: an elision mark that claims no cut by llm_eval.
const neutralMarker = "[...]"

// markerLike matches TruncationMarker and the variants a model or a
// document could write to pass for it: any case, spacing, an ellipsis
// character or two dots, "llm eval" or "llm-eval".
var markerLike = regexp.MustCompile(`(?i)\[\s*(?:\.{2,}|…)?\s*truncated\s+by\s+llm[\s_.-]?eval\s*\]`)

// NeutralizeTruncationMarkers replaces every TruncationMarker in s, and
// anything written to look like one, with "[...]". The judge is told that
// text ending with the marker was cut by llm_eval and must not be held to
// length or format rules for the missing part; an output that wrote the
// marker itself could otherwise exempt itself from them. Scorers apply it
// to every evaluated text before they cut it. A caller that cuts text
// before scoring (as the processor cuts agent step texts) applies it first
// and then appends TruncationMarker.
func NeutralizeTruncationMarkers(s string) string {
	if !strings.Contains(s, "[") {
		return s // the common case, without running the expression
	}
	return markerLike.ReplaceAllLiteralString(s, neutralMarker)
}
