package contextrelevance

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
)

// contextEval is one scripted context_relevance evaluation.
type contextEval struct {
	level string
	used  bool
}

func contextReplies(evals []contextEval, missing ...string) map[string][]string {
	es := []map[string]any{}
	for i, ev := range evals {
		es = append(es, map[string]any{"item": i + 1, "relevance": ev.level, "used": ev.used, "reason": fmt.Sprintf("reason %d", i+1)})
	}
	if missing == nil {
		missing = []string{}
	}
	return map[string][]string{
		SchemaEvaluations:    {testkit.MustJSON(map[string]any{"evaluations": es, "missing_context": missing, "overall_assessment": "ok"})},
		scoring.SchemaReason: {`{"reason": "judge reason"}`},
	}
}

func contextItems(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("document %d", i+1)
	}
	return out
}

func TestContextRelevanceScore(t *testing.T) {
	hi, med, low, none := contextEval{"high", true}, contextEval{"medium", true}, contextEval{"low", false}, contextEval{"none", false}
	unusedHigh := contextEval{"high", false}
	tests := []struct {
		name      string
		evals     []contextEval
		missing   []string
		opts      scoring.Options
		wantScore float64
		wantLabel scoring.Label
	}{
		{name: "all high and used", evals: []contextEval{hi, hi}, wantScore: 1, wantLabel: scoring.LabelPass},
		{name: "weights", evals: []contextEval{hi, med, low, none}, wantScore: 0.5, wantLabel: scoring.LabelPass},
		{name: "unused high penalised 0.1 each", evals: []contextEval{unusedHigh, unusedHigh, hi}, wantScore: 0.8, wantLabel: scoring.LabelPass},
		{name: "missing penalised 0.15 each", evals: []contextEval{hi}, missing: []string{"a", "b"}, wantScore: 0.7, wantLabel: scoring.LabelPass},
		{name: "missing penalty capped at 0.5", evals: []contextEval{hi}, missing: []string{"a", "b", "c", "d", "e"}, wantScore: 0.5, wantLabel: scoring.LabelPass},
		{name: "never below 0", evals: []contextEval{none, unusedHigh}, missing: []string{"a", "b", "c", "d"}, wantScore: 0, wantLabel: scoring.LabelFail},
		{name: "penalties configured", evals: []contextEval{unusedHigh}, missing: []string{"a"},
			opts: scoring.Options{ContextPenalties: &scoring.ContextPenalties{UnusedHighRelevance: 0.2, MissingPerItem: 0.05, MaxMissing: 0.5}}, wantScore: 0.75, wantLabel: scoring.LabelPass},
		{name: "scale 10", evals: []contextEval{hi, med, low}, opts: scoring.Options{Scale: 10}, wantScore: 6.67, wantLabel: scoring.LabelPass},
		{name: "strict mode", evals: []contextEval{hi, med}, opts: scoring.Options{StrictMode: true}, wantScore: 0, wantLabel: scoring.LabelFail},
		{name: "rounds to the scale", evals: []contextEval{unusedHigh},
			opts: scoring.Options{ContextPenalties: &scoring.ContextPenalties{UnusedHighRelevance: 0.004}}, wantScore: 1, wantLabel: scoring.LabelPass},
		{name: "strict mode decides before rounding", evals: []contextEval{unusedHigh},
			opts: scoring.Options{StrictMode: true, ContextPenalties: &scoring.ContextPenalties{UnusedHighRelevance: 0.004}}, wantScore: 0, wantLabel: scoring.LabelFail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := scoring.Case{Input: "q", Output: "o", Context: contextItems(len(tt.evals))}
			res := testkit.Scorer(t, New, testkit.NewJudge(contextReplies(tt.evals, tt.missing...)), tt.opts).Score(context.Background(), c)
			if res.Err != nil {
				t.Fatalf("unexpected error %v", res.Err)
			}
			if res.Label != tt.wantLabel || res.Score != tt.wantScore {
				t.Errorf("got %v %s, want %v %s", res.Score, res.Label, tt.wantScore, tt.wantLabel)
			}
			if res.Usage.LLMCalls != 2 || res.Reason != "judge reason" {
				t.Errorf("calls %d reason %q", res.Usage.LLMCalls, res.Reason)
			}
		})
	}
}

func TestContextRelevanceNotScorable(t *testing.T) {
	tests := []struct {
		name string
		c    scoring.Case
		want string
	}{
		{"no context", scoring.Case{Input: "q", Output: "o"}, "no context"},
		{"blank context items", scoring.Case{Input: "q", Output: "o", Context: []string{" ", ""}}, "no context"},
		{"no question", scoring.Case{Output: "o", Context: []string{"doc"}}, "no question"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := testkit.NewJudge(nil)
			res := testkit.Scorer(t, New, j, scoring.Options{}).Score(context.Background(), tt.c)
			if res.Label != scoring.LabelNotScorable || !strings.Contains(res.Reason, tt.want) || len(j.Requests()) != 0 {
				t.Fatalf("got %s %q after %d calls", res.Label, res.Reason, len(j.Requests()))
			}
		})
	}
}

func TestContextRelevanceReplies(t *testing.T) {
	tests := []struct {
		name      string
		replies   []string
		wantLabel scoring.Label
		wantLevel []string
		wantCalls int
	}{
		{name: "reordered by item number", replies: []string{
			`{"evaluations": [{"item": 2, "relevance": "none", "used": false, "reason": "b"}, {"item": 1, "relevance": "high", "used": true, "reason": "a"}], "missing_context": [], "overall_assessment": "x"}`,
		}, wantLabel: scoring.LabelPass, wantLevel: []string{"high", "none"}, wantCalls: 1},
		{name: "unknown level re-asked", replies: []string{
			`{"evaluations": [{"item": 1, "relevance": "very high", "used": true, "reason": "a"}, {"item": 2, "relevance": "none", "used": false, "reason": "b"}], "missing_context": [], "overall_assessment": "x"}`,
			`{"evaluations": [{"item": 1, "relevance": "medium", "used": true, "reason": "a"}, {"item": 2, "relevance": "none", "used": false, "reason": "b"}], "missing_context": [], "overall_assessment": "x"}`,
		}, wantLabel: scoring.LabelFail, wantLevel: []string{"medium", "none"}, wantCalls: 2},
		{name: "used as a string is a parse error", replies: []string{
			`{"evaluations": [{"item": 1, "relevance": "high", "used": "yes", "reason": "a"}, {"item": 2, "relevance": "none", "used": false, "reason": "b"}]}`,
		}, wantLabel: scoring.LabelError, wantCalls: 2},
		{name: "an item judged twice is a parse error", replies: []string{
			`{"evaluations": [{"item": 1, "relevance": "high", "used": true, "reason": "a"}, {"item": 1, "relevance": "none", "used": false, "reason": "b"}]}`,
		}, wantLabel: scoring.LabelError, wantCalls: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := testkit.NewJudge(map[string][]string{SchemaEvaluations: tt.replies})
			res := testkit.Scorer(t, New, j, scoring.Options{OmitReason: true}).Score(context.Background(),
				scoring.Case{Input: "q", Output: "o", Context: []string{"first", "second"}})
			if res.Label != tt.wantLabel || res.Usage.LLMCalls != tt.wantCalls {
				t.Fatalf("got %s after %d calls (%v)", res.Label, res.Usage.LLMCalls, res.Err)
			}
			if tt.wantLevel == nil {
				return
			}
			got := res.Steps.Analyze.(Evaluations)
			for i, w := range tt.wantLevel {
				ev := got.Evaluations[i]
				if ev.RelevanceLevel != w || ev.ContextIndex != i || ev.ContextPiece != []string{"first", "second"}[i] {
					t.Errorf("evaluation %d = %+v, want level %s", i, ev, w)
				}
			}
		})
	}
}

// TestContextRelevanceBadInput covers the bad inputs: 500 context
// items (the first MaxContextItems are judged, marked truncated), an item
// that is a JSON object (sent as text) and text in another language.
func TestContextRelevanceBadInput(t *testing.T) {
	t.Run("500 items", func(t *testing.T) {
		evals := make([]contextEval, MaxContextItems)
		for i := range evals {
			evals[i] = contextEval{"high", true}
		}
		j := testkit.NewJudge(contextReplies(evals))
		res := testkit.Scorer(t, New, j, scoring.Options{ReasonMode: scoring.ReasonSummary}).Score(context.Background(),
			scoring.Case{Input: "q", Output: "o", Context: contextItems(500)})
		if res.Label != scoring.LabelPass || res.Score != 1 || !res.Truncated {
			t.Fatalf("got %v %s truncated=%v (%v)", res.Score, res.Label, res.Truncated, res.Err)
		}
		prompt := j.Requests()[0].Messages[1].Content
		if !strings.Contains(prompt, `"document 50"`) || strings.Contains(prompt, `"document 51"`) {
			t.Error("the prompt does not hold exactly the first 50 items")
		}
		if !strings.Contains(res.Reason, "450 more were left out") {
			t.Errorf("reason %q", res.Reason)
		}
	})
	t.Run("JSON object item and another language", func(t *testing.T) {
		j := testkit.NewJudge(contextReplies([]contextEval{{"high", true}, {"medium", false}}))
		item := `{"title": "Öffnungszeiten", "text": "Täglich 9–17 Uhr <geöffnet>"}`
		res := testkit.Scorer(t, New, j, scoring.Options{OmitReason: true}).Score(context.Background(),
			scoring.Case{Input: "Wann ist das Museum geöffnet?", Output: "Von 9 bis 17 Uhr.", Context: []string{item, "Eintritt frei."}})
		if res.Label != scoring.LabelPass || res.Score != 0.85 {
			t.Fatalf("got %v %s (%v)", res.Score, res.Label, res.Err)
		}
		prompt := j.Requests()[0].Messages[1].Content
		if !strings.Contains(prompt, `"{\"title\": \"Öffnungszeiten\"`) || strings.Contains(prompt, "<geöffnet>") {
			t.Errorf("the JSON item is not sent as one escaped string:\n%s", prompt)
		}
	})
}
