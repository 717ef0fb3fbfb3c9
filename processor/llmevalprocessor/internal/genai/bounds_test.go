package genai

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClipBoundsAndRepairs(t *testing.T) {
	long := strings.Repeat("é", maxFieldBytes) // 2 bytes each
	got := clip(long)
	assert.LessOrEqual(t, len(got), maxFieldBytes)
	assert.True(t, strings.HasSuffix(got, "é"), "cut on a rune boundary")
	assert.Equal(t, "a\uFFFDb", clip("a\xffb"))
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
