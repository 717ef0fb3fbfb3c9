package genai

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llm-eval/llm_eval/scoring"
)

func TestClipBoundsAndRepairs(t *testing.T) {
	long := strings.Repeat("é", maxFieldBytes) // 2 bytes each
	got := clip(long)
	assert.LessOrEqual(t, len(got), maxFieldBytes)
	assert.True(t, strings.HasSuffix(got, "é"), "cut on a rune boundary")
	assert.Equal(t, "a\uFFFDb", clip("a\xffb"))
}

// TestClipTextMarksOnlyItsCut: a judged text cut at maxFieldBytes ends
// with scoring.TruncationMarker, as the trace context index marks its cut,
// within the bound; a marker the text wrote itself never ends it, so the
// scorers can take a trailing marker as the reader's cut (issue 36 item 1).
func TestClipTextMarksOnlyItsCut(t *testing.T) {
	long := "Forged" + scoring.TruncationMarker + " " + strings.Repeat("é", maxFieldBytes)
	got := clipText(long)
	assert.LessOrEqual(t, len(got), maxFieldBytes)
	assert.True(t, strings.HasSuffix(got, "é"+scoring.TruncationMarker), "cut on a rune boundary, then marked")
	assert.True(t, strings.HasPrefix(got, "Forged [...] é"), "the text's own marker is neutralised")

	forged := "Short answer." + scoring.TruncationMarker
	assert.Equal(t, "Short answer. [...]", clipText(forged), "not cut, so not marked")
	assert.Equal(t, "a [...truncated by llm_eval] b", clipText("a [...truncated by llm_eval] b"), "left to the scorers")
	exact := strings.Repeat("x", maxFieldBytes)
	assert.Equal(t, exact, clipText(exact), "a text at the bound is whole")
	assert.Equal(t, "a\uFFFDb", clipText("a\xffb"))
	assert.Equal(t, "gpt-4o", clip("gpt-4o"))
	assert.False(t, strings.HasSuffix(clip(long), scoring.TruncationMarker), "names and ids are not marked")
}

// TestReadMarksOutputAndContextCutAtTheBound: an output, a message joined
// from parts and a document over maxFieldBytes reach the Generation cut
// and marked; a message whose parts fill the bound exactly is whole.
func TestReadMarksOutputAndContextCutAtTheBound(t *testing.T) {
	big := strings.Repeat("word ", maxFieldBytes/4) // 1.25 MiB
	half := strings.Repeat("y", maxFieldBytes/2)
	g := read(newSpan(t, "chat m", map[string]any{
		attrInputMessages:            `[{"role":"user","parts":[{"type":"text","content":"` + half + `"},{"type":"text","content":"` + half + `"},{"type":"text","content":"more"}]}]`,
		attrOutputMessages:           `[{"role":"assistant","parts":[{"type":"text","content":"` + big + `"}]}]`,
		"gen_ai.retrieval.documents": `[{"id":"1","content":"` + big + `"}]`,
	}))
	if assert.Len(t, g.Documents, 1) {
		assert.True(t, strings.HasSuffix(g.Documents[0], scoring.TruncationMarker), "the document is marked")
		assert.LessOrEqual(t, len(g.Documents[0]), maxFieldBytes)
	}
	for name, text := range map[string]string{"input (parts)": g.Input, "output": g.Output} {
		assert.True(t, strings.HasSuffix(text, scoring.TruncationMarker), "%s is marked", name)
		assert.LessOrEqual(t, len(text), maxFieldBytes, name)
	}
	whole := read(newSpan(t, "chat m", map[string]any{
		attrInputMessages:  `[{"role":"user","parts":[{"type":"text","content":"` + half[1:] + `"},{"type":"text","content":"` + half + `"}]}]`,
		attrOutputMessages: `[{"role":"assistant","parts":[{"type":"text","content":"ok"}]}]`,
	}))
	assert.Len(t, whole.Input, maxFieldBytes, "two parts and their separator fill the bound exactly")
	assert.False(t, strings.HasSuffix(whole.Input, scoring.TruncationMarker))
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
	assert.True(t, strings.HasPrefix(read(span).Output, "c"), "a span at the bound is still read")
}

func itoa(i int) string { return strconv.Itoa(i) }
