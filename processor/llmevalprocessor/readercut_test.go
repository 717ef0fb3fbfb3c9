package llmevalprocessor

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/contextrelevance"
	"github.com/llm-eval/llm_eval/scoring/promptalignment"
)

// TestReaderCutIsMarkedAndTruncated: an output and a retrieved document
// over the reader's 1 MiB bound reach the judge cut and ending with
// scoring.TruncationMarker, and the results are truncated, with
// max_input_chars 0 (no cut of the scorers' own) (issue 36 item 1: text
// cut upstream carries our marker and sets truncated). A call with short
// texts, one ending with a marker it wrote itself, is not truncated.
func TestReaderCutIsMarkedAndTruncated(t *testing.T) {
	names := []string{scoring.PromptAlignment, scoring.ContextRelevance}
	srv, rec, built := scriptedScorers(t, scoring.Options{ReasonMode: scoring.ReasonSummary, MaxInputChars: 0}, names...)
	cfg := testConfig(names...)
	cfg.MaxInputChars = 0
	cfg.MaxWait = 2 * time.Minute
	cfg.Scorers[0].Instructions = []string{"Say when the museum opens."}
	h := newHarness(t, cfg, built...)

	// Neither scorer lists the texts' sentences, which would be capped:
	// only the reader's cut can make these results truncated.
	long := "the museum is open " + strings.Repeat("x", 1<<20)
	doc := func(text string) string {
		b, _ := json.Marshal([]map[string]any{{"id": "d1", "content": text}})
		return string(b)
	}
	b := newBatch()
	b.generation(randomTraceID(), "When is the museum open?", long)
	b.spans.At(b.spans.Len()-1).Attributes().PutStr("gen_ai.retrieval.documents", doc(long))
	b.generation(randomTraceID(), "When is the museum open?", "the museum is open every day")
	b.spans.At(b.spans.Len()-1).Attributes().PutStr("gen_ai.retrieval.documents", doc("the museum is open every day"+scoring.TruncationMarker))
	h.consume(b.td)
	// Megabyte prompts under the race detector on a busy machine: a
	// generous bound, no figure.
	require.Eventually(t, func() bool { return h.sink.SpanCount() >= 2 && unfinishedCount(h.p.store) == 0 }, 2*time.Minute, 10*time.Millisecond)
	h.shutdown()

	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, n := range names {
		require.Len(t, rec.results[n], 2, n)
		truncated := 0
		for _, r := range rec.results[n] {
			assert.True(t, r.Scored(), "%s: %s %v", n, r.Label, r.Err)
			if r.Truncated {
				truncated++
			}
		}
		assert.Equal(t, 1, truncated, "%s: the cut call is truncated; the short one is whole, and a marker it wrote itself claims no cut", n)
	}
	for _, step := range []string{promptalignment.SchemaVerdicts, contextrelevance.SchemaEvaluations} {
		var marked bool
		for _, c := range srv.Calls() {
			marked = marked || (c.Step == step && strings.Contains(c.Text(), "xx"+scoring.TruncationMarker))
		}
		assert.True(t, marked, "the judge's %s call shows the cut text ending with the marker", step)
	}
}

// TestReaderCutHistoryTurnIsTruncated: a follow-up turn whose history
// holds a message over the reader's 1 MiB bound reaches the judge with
// that message cut and ending with scoring.TruncationMarker, and the
// result is truncated (scoring.Turn.Cut); the same follow-up with a short
// history ending with a marker it wrote itself is not.
func TestReaderCutHistoryTurnIsTruncated(t *testing.T) {
	srv, rec, built := scriptedScorers(t, scoring.Options{ReasonMode: scoring.ReasonSummary}, scoring.PromptAlignment)
	cfg := testConfig(scoring.PromptAlignment)
	cfg.MaxInputChars = 0
	cfg.MaxWait = 2 * time.Minute
	cfg.Scorers[0].Instructions = []string{"Say when the museum opens."}
	h := newHarness(t, cfg, built...)

	followUp := func(b *batchBuilder, first string) {
		b.generation(randomTraceID(), "And on Sundays?", "the museum is open every day")
		msgs, _ := json.Marshal([]map[string]any{
			{"role": "user", "parts": []map[string]any{{"type": "text", "content": first}}},
			{"role": "assistant", "parts": []map[string]any{{"type": "text", "content": "It opens at nine."}}},
			{"role": "user", "parts": []map[string]any{{"type": "text", "content": "And on Sundays?"}}},
		})
		b.spans.At(b.spans.Len()-1).Attributes().PutStr("gen_ai.input.messages", string(msgs))
	}
	b := newBatch()
	followUp(b, "When does the museum open? "+strings.Repeat("y", 1<<20))
	followUp(b, "When does the museum open?"+scoring.TruncationMarker)
	h.consume(b.td)
	h.waitSpans(2)
	h.drain()

	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.Len(t, rec.results[scoring.PromptAlignment], 2)
	truncated := 0
	for _, r := range rec.results[scoring.PromptAlignment] {
		assert.True(t, r.Scored(), "%s %v", r.Label, r.Err)
		if r.Truncated {
			truncated++
		}
	}
	assert.Equal(t, 1, truncated, "the follow-up whose history the reader cut is truncated; a marker the history wrote itself claims no cut")
	var marked, forged bool
	for _, c := range srv.Calls() {
		marked = marked || (c.Step == promptalignment.SchemaVerdicts && strings.Contains(c.Text(), "yy"+scoring.TruncationMarker))
		forged = forged || strings.Contains(c.Text(), "open?"+scoring.TruncationMarker)
	}
	assert.True(t, marked, "the judge sees the cut history message ending with the marker")
	assert.False(t, forged, "a marker the history wrote itself is neutralised")
}
