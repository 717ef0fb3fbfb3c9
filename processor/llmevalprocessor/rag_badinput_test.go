package llmevalprocessor

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/contextrelevance"
)

// TestRAGScorersBadInput sends the bad inputs through the
// processor with the real RAG scorers and the scripted judge: a retrieved
// document that is a JSON object, a generation without a question, 500
// retrieved documents and an answer in another language. Each span leaves
// once, with a verdict or a not_scorable reason from every scorer, never
// an error.
func TestRAGScorersBadInput(t *testing.T) {
	names := []string{scoring.AnswerRelevancy, scoring.ContextRelevance, scoring.Toxicity}
	srv, rec, built := scriptedScorers(t, scoring.Options{ReasonMode: scoring.ReasonSummary}, names...)
	cfg := testConfig(names...)
	cfg.TraceContext.ContextWait = 100 * time.Millisecond
	h := newHarness(t, cfg, built...)

	docs := func(items ...any) string {
		var list []map[string]any
		for i, it := range items {
			list = append(list, map[string]any{"id": fmt.Sprintf("d%d", i+1), "content": it})
		}
		b, _ := json.Marshal(list)
		return string(b)
	}
	b := newBatch()
	jsonDoc := b.generation(randomTraceID(), "When is the museum open?", "The museum is open from 9 to 17.")
	b.spans.At(b.spans.Len()-1).Attributes().PutStr("gen_ai.retrieval.documents",
		docs(map[string]any{"museum": "City Museum", "hours": "open 9 to 17", "days": []string{"Tue", "Sun"}}))
	noQuestion := b.generation(randomTraceID(), "", "The museum is open from 9 to 17.")
	b.spans.At(b.spans.Len() - 1).Attributes().Remove("gen_ai.input.messages")
	b.spans.At(b.spans.Len()-1).Attributes().PutStr("gen_ai.retrieval.documents", docs("The museum is open from 9 to 17."))
	many := make([]any, 500)
	for i := range many {
		many[i] = fmt.Sprintf("Museum leaflet %d: the museum is open from 9 to 17.", i+1)
	}
	manyDocs := b.generation(randomTraceID(), "When is the museum open?", "The museum is open from 9 to 17.")
	b.spans.At(b.spans.Len()-1).Attributes().PutStr("gen_ai.retrieval.documents", docs(many...))
	spanish := b.generation(randomTraceID(), "¿Cuándo abre el museo?", "El museo abre a las nueve. Eres un idiota.")
	b.spans.At(b.spans.Len()-1).Attributes().PutStr("gen_ai.retrieval.documents", docs("El museo abre a las nueve."))
	h.consume(b.td)
	h.waitSpans(4)
	h.drain()

	out, count := sinkSpans(h.sink)
	for id, n := range count {
		assert.Equal(t, 1, n, "span %s leaves once", id)
	}
	label := func(id pcommon.SpanID, name string) (string, string) {
		ev, ok := evaluationEvents(out[id].span)[name]
		require.True(t, ok, "no %s result", name)
		_, isErr := ev.Get(evalconv.AttrErrorType)
		require.False(t, isErr, "%s ended in an error", name)
		l, _ := ev.Get(evalconv.AttrScoreLabel)
		r, _ := ev.Get("gen_ai.evaluation.explanation")
		return l.Str(), r.Str()
	}
	scored := func(l string) bool { return l == "pass" || l == "fail" }

	for _, n := range names {
		l, r := label(jsonDoc, n)
		assert.True(t, scored(l), "JSON-object document: %s %s %q", n, l, r)
	}
	l, r := label(noQuestion, scoring.AnswerRelevancy)
	assert.Equal(t, "not_scorable", l)
	assert.Contains(t, r, "no question")
	l, r = label(noQuestion, scoring.ContextRelevance)
	assert.Equal(t, "not_scorable", l)
	assert.Contains(t, r, "no question")
	l, _ = label(noQuestion, scoring.Toxicity)
	assert.True(t, scored(l), "toxicity judges the answer without a question")

	l, r = label(manyDocs, scoring.ContextRelevance)
	assert.True(t, scored(l), "500 documents: %s %q", l, r)
	assert.Contains(t, r, "only the first 50 context items were judged; 450 more were left out")
	l, r = label(spanish, scoring.Toxicity)
	assert.True(t, scored(l))
	assert.Contains(t, r, "1 of 2 opinions is toxic", "the Spanish insult is found")

	// What the judge saw: the JSON document as its text, at most 50 items.
	var sawJSON bool
	for _, c := range srv.Calls() {
		if c.Step != contextrelevance.SchemaEvaluations {
			continue
		}
		sawJSON = sawJSON || strings.Contains(c.Text(), `\"hours\":\"open 9 to 17\"`)
		assert.NotContains(t, c.Text(), "Museum leaflet 51:", "no more than 50 items in one call")
	}
	assert.True(t, sawJSON, "the JSON-object document reached the judge as JSON text")
	rec.mu.Lock()
	defer rec.mu.Unlock()
	truncated := 0
	for _, r := range rec.results[scoring.ContextRelevance] {
		if r.Truncated {
			truncated++
		}
	}
	assert.Equal(t, 1, truncated, "only the 500-document case is marked truncated")
}
