package answerrelevancy

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
)

// relevancyReplies scripts answer_relevancy with one statement per result.
func relevancyReplies(results ...string) map[string][]string {
	statements := []string{}
	var rs []map[string]string
	for i, r := range results {
		st := fmt.Sprintf("statement %d", i+1)
		statements = append(statements, st)
		rs = append(rs, map[string]string{"statement": st, "result": r, "reason": fmt.Sprintf("reason %d", i+1)})
	}
	return map[string][]string{
		SchemaStatements:     {testkit.MustJSON(map[string]any{"statements": statements})},
		SchemaResults:        {testkit.MustJSON(map[string]any{"results": rs})},
		scoring.SchemaReason: {`{"reason": "judge reason"}`},
	}
}

func TestAnswerRelevancyScore(t *testing.T) {
	half := 0.5
	tests := []struct {
		name      string
		results   []string
		opts      scoring.Options
		c         scoring.Case
		wantScore float64
		wantLabel scoring.Label
		wantCalls int
	}{
		{name: "all yes", results: []string{"yes", "yes"}, wantScore: 1, wantLabel: scoring.LabelPass, wantCalls: 3},
		{name: "unsure counts 0.3", results: []string{"yes", "unsure", "no"}, wantScore: 0.43, wantLabel: scoring.LabelFail, wantCalls: 3},
		{name: "rounded to two decimals", results: []string{"yes", "no", "no"}, wantScore: 0.33, wantLabel: scoring.LabelFail, wantCalls: 3},
		{name: "scale 10", results: []string{"yes", "unsure", "no"}, opts: scoring.Options{Scale: 10}, wantScore: 4.33, wantLabel: scoring.LabelFail, wantCalls: 3},
		{name: "uncertainty weight set", results: []string{"unsure", "unsure"}, opts: scoring.Options{UncertaintyWeight: &half}, wantScore: 0.5, wantLabel: scoring.LabelPass, wantCalls: 3},
		{name: "verdicts normalised", results: []string{"Yes.", " UNSURE", "no"}, wantScore: 0.43, wantLabel: scoring.LabelFail, wantCalls: 3},
		{name: "strict mode", results: []string{"yes", "unsure"}, opts: scoring.Options{StrictMode: true}, wantScore: 0, wantLabel: scoring.LabelFail, wantCalls: 3},
		{name: "no statements", results: nil, wantScore: 0, wantLabel: scoring.LabelFail, wantCalls: 1},
		{name: "empty output scores 0 without a call", results: []string{"yes"}, c: scoring.Case{Input: "q"}, wantScore: 0, wantLabel: scoring.LabelFail},
		{name: "missing question", results: []string{"yes"}, c: scoring.Case{Output: "o"}, wantLabel: scoring.LabelNotScorable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.c
			if c.Input == "" && c.Output == "" {
				c = scoring.Case{Input: "What is the question?", Output: "An answer."}
			}
			res := testkit.Scorer(t, New, testkit.NewJudge(relevancyReplies(tt.results...)), tt.opts).Score(context.Background(), c)
			if res.Err != nil {
				t.Fatalf("unexpected error %v", res.Err)
			}
			if res.Label != tt.wantLabel || res.Score != tt.wantScore {
				t.Errorf("got %v %s, want %v %s", res.Score, res.Label, tt.wantScore, tt.wantLabel)
			}
			if res.Usage.LLMCalls != tt.wantCalls {
				t.Errorf("calls %d, want %d", res.Usage.LLMCalls, tt.wantCalls)
			}
			if res.Label != scoring.LabelNotScorable && res.Reason == "" {
				t.Error("no reason")
			}
		})
	}
}

func TestAnswerRelevancyBadReplies(t *testing.T) {
	statements := `{"statements": ["a", "b"]}`
	tests := []struct {
		name      string
		results   []string
		wantLabel scoring.Label
		wantScore float64
		wantOrder []string
	}{
		{name: "a sentence is not a relevancy result", results: []string{
			`{"results": [{"statement": "a", "result": "yes, mostly", "reason": "x"}, {"statement": "b", "result": "yes", "reason": "y"}]}`,
			`{"results": [{"statement": "a", "result": "unsure - partly", "reason": "x"}, {"statement": "b", "result": "yes", "reason": "y"}]}`,
		}, wantLabel: scoring.LabelError},
		{name: "n/a is not a relevancy result", results: []string{
			`{"results": [{"statement": "a", "result": "n/a", "reason": "x"}, {"statement": "b", "result": "yes", "reason": "y"}]}`,
			`{"results": [{"statement": "a", "result": "maybe", "reason": "x"}, {"statement": "b", "result": "yes", "reason": "y"}]}`,
		}, wantLabel: scoring.LabelError},
		{name: "wrong count re-asked then used", results: []string{
			`{"results": [{"statement": "a", "result": "yes", "reason": "x"}]}`,
			`{"results": [{"statement": "a", "result": "yes", "reason": "x"}, {"statement": "b", "result": "no", "reason": "y"}]}`,
		}, wantLabel: scoring.LabelPass, wantScore: 0.5, wantOrder: []string{"yes", "no"}},
		{name: "reordered by echo", results: []string{
			`{"results": [{"statement": "b", "result": "no", "reason": "y"}, {"statement": "a", "result": "unsure", "reason": "x"}]}`,
		}, wantLabel: scoring.LabelFail, wantScore: 0.15, wantOrder: []string{"unsure", "no"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := testkit.NewJudge(map[string][]string{SchemaStatements: {statements}, SchemaResults: tt.results})
			res := testkit.Scorer(t, New, j, scoring.Options{OmitReason: true}).Score(context.Background(), scoring.Case{Input: "q", Output: "a. b."})
			if res.Label != tt.wantLabel || res.Score != tt.wantScore {
				t.Fatalf("got %v %s (%v), want %v %s", res.Score, res.Label, res.Err, tt.wantScore, tt.wantLabel)
			}
			if tt.wantOrder == nil {
				return
			}
			got := res.Steps.Analyze.(Results)
			for i, w := range tt.wantOrder {
				if got.Results[i].Result != w {
					t.Errorf("result %d = %q, want %q", i, got.Results[i].Result, w)
				}
			}
		})
	}
}

// TestAnswerRelevancyManyStatements checks that a judge listing 5,000
// statements has only the first MaxStatements judged, marked truncated.
func TestAnswerRelevancyManyStatements(t *testing.T) {
	many := make([]string, 5000)
	for i := range many {
		many[i] = fmt.Sprintf("statement %d", i+1)
	}
	results := make([]map[string]string, MaxStatements)
	for i := range results {
		results[i] = map[string]string{"statement": many[i], "result": "yes", "reason": "r"}
	}
	for _, mode := range []scoring.ReasonMode{scoring.ReasonSummary, scoring.ReasonLLM} {
		t.Run(string(mode), func(t *testing.T) { testManyStatements(t, mode, many, results) })
	}
}

// testManyStatements scores many statements with mode: the reason says
// what was left out whether the judge or the scorer wrote it.
func testManyStatements(t *testing.T, mode scoring.ReasonMode, many []string, results []map[string]string) {
	j := testkit.NewJudge(map[string][]string{
		SchemaStatements:     {testkit.MustJSON(map[string]any{"statements": many})},
		SchemaResults:        {testkit.MustJSON(map[string]any{"results": results})},
		scoring.SchemaReason: {`{"reason": "The score is 1 because every statement answers the question."}`},
	})
	res := testkit.Scorer(t, New, j, scoring.Options{ReasonMode: mode}).Score(context.Background(),
		scoring.Case{Input: "q", Output: strings.Repeat("A sentence. ", 5000)})
	if res.Label != scoring.LabelPass || res.Score != 1 || !res.Truncated {
		t.Fatalf("got %v %s truncated=%v (%v)", res.Score, res.Label, res.Truncated, res.Err)
	}
	pre := res.Steps.Preprocess.(Statements)
	if len(pre.Statements) != MaxStatements || pre.Dropped != 5000-MaxStatements {
		t.Errorf("kept %d dropped %d", len(pre.Statements), pre.Dropped)
	}
	if !strings.Contains(res.Reason, "4900 more were left out") {
		t.Errorf("reason does not say what was left out: %q", res.Reason)
	}
	if n := strings.Count(j.Requests()[1].Messages[1].Content, "\n"); n > MaxStatements+10 {
		t.Errorf("analyze prompt has %d lines, more than the cap", n)
	}
}

func TestRAGOptionsValidated(t *testing.T) {
	bad, ok := 1.5, 0.3
	tests := []struct {
		name    string
		opts    scoring.Options
		wantErr string
	}{
		{"weight above 1", scoring.Options{UncertaintyWeight: &bad}, "uncertainty weight"},
		{"penalty above 1", scoring.Options{ContextPenalties: &scoring.ContextPenalties{UnusedHighRelevance: 2}}, "unused high relevance"},
		{"negative cap", scoring.Options{ContextPenalties: &scoring.ContextPenalties{MaxMissing: -0.1}}, "max missing"},
		{"valid", scoring.Options{UncertaintyWeight: &ok, ContextPenalties: &scoring.ContextPenalties{UnusedHighRelevance: 0.2, MissingPerItem: 0.1, MaxMissing: 0.3}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(testkit.NewJudge(nil), tt.opts)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}
