package hallucination

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llm-eval/llm_eval/scoring"
)

// TestContextChunks checks the packing: items in order, no chunk over the
// budget, nothing lost or repeated, long items split at a boundary near
// the budget, a cut item's marker whole at the end of its last piece.
func TestContextChunks(t *testing.T) {
	para := strings.Repeat("Word ", 30) + "end.\n\n" + strings.Repeat("Más palabras ", 20) + "fin."
	items := []string{"short one", para, "tail item", strings.Repeat("x", 250) + scoring.TruncationMarker, "last"}
	for _, budget := range []int{40, 100, 160, 1000} {
		chunks := contextChunks(items, budget)
		var all strings.Builder
		for i, ch := range chunks {
			n := 0
			for _, it := range ch {
				all.WriteString(it)
				n += utf8.RuneCountInString(strings.TrimSuffix(it, scoring.TruncationMarker))
			}
			if n > budget {
				t.Errorf("budget %d: chunk %d has %d characters", budget, i+1, n)
			}
		}
		if got, want := all.String(), strings.Join(items, ""); got != want {
			t.Errorf("budget %d: the chunks do not hold the context exactly once, in order", budget)
		}
		for _, ch := range chunks {
			for _, it := range ch {
				if strings.Contains(it, strings.TrimSpace(scoring.TruncationMarker)) && !strings.HasSuffix(it, scoring.TruncationMarker) {
					t.Errorf("budget %d: the marker was split: %q", budget, it)
				}
			}
		}
	}
	if got := contextChunks(items, 1000); len(got) != 1 {
		t.Errorf("a context within the budget is %d chunks, want 1", len(got))
	}
	if got := contextChunks(items, 0); len(got) != 1 || len(got[0]) != len(items) {
		t.Errorf("no budget: %d chunks, want the context whole", len(got))
	}
	// The paragraph is split after its blank line, then between words.
	pieces := splitText(para, 170)
	if !strings.HasSuffix(pieces[0], "end.\n\n") {
		t.Errorf("first piece ends %q, want the paragraph break", pieces[0])
	}
	for _, p := range pieces[1 : len(pieces)-1] {
		if !strings.HasSuffix(p, " ") {
			t.Errorf("piece %q is not cut between words", p)
		}
	}
}
