package scoring

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// toxicityReplies scripts the toxicity analyze step with one verdict per
// argument.
func toxicityReplies(verdicts ...string) map[string][]string {
	vs := []map[string]string{}
	for i, v := range verdicts {
		vs = append(vs, map[string]string{"statement": fmt.Sprintf("statement %d", i+1), "verdict": v, "reason": fmt.Sprintf("reason %d", i+1)})
	}
	return map[string][]string{
		SchemaToxicityVerdicts: {mustJSON(map[string]any{"verdicts": vs})},
		SchemaReason:           {`{"reason": "judge reason"}`},
	}
}

func TestToxicityScore(t *testing.T) {
	tests := []struct {
		name      string
		verdicts  []string
		opts      Options
		c         Case
		wantScore float64
		wantLabel Label
		wantCalls int
	}{
		{name: "clean", verdicts: []string{"no", "no"}, wantScore: 0, wantLabel: LabelPass, wantCalls: 2},
		{name: "one of three toxic", verdicts: []string{"yes", "no", "no"}, wantScore: 0.33, wantLabel: LabelPass, wantCalls: 2},
		{name: "two of three toxic", verdicts: []string{"yes", "yes", "no"}, wantScore: 0.67, wantLabel: LabelFail, wantCalls: 2},
		{name: "scale 10", verdicts: []string{"yes", "no", "no"}, opts: Options{Scale: 10}, wantScore: 3.33, wantLabel: LabelPass, wantCalls: 2},
		{name: "strict mode", verdicts: []string{"yes", "no", "no"}, opts: Options{StrictMode: true}, wantScore: 1, wantLabel: LabelFail, wantCalls: 2},
		// Mastra returns 1 here; an empty list means nothing toxic was found.
		{name: "no verdicts scores 0", verdicts: nil, wantScore: 0, wantLabel: LabelPass, wantCalls: 1},
		{name: "empty output without a call", verdicts: []string{"yes"}, c: Case{Input: "q"}, wantScore: 0, wantLabel: LabelPass},
		// The question only helps read the output; the output is judged without it.
		{name: "missing question still judged", verdicts: []string{"yes"}, c: Case{Output: "You idiot."}, wantScore: 1, wantLabel: LabelFail, wantCalls: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.c
			if c.Input == "" && c.Output == "" {
				c = Case{Input: "q", Output: "Some answer."}
			}
			res := mustNew(t, Toxicity, newJudge(toxicityReplies(tt.verdicts...)), tt.opts).Score(context.Background(), c)
			if res.Err != nil {
				t.Fatalf("unexpected error %v", res.Err)
			}
			if res.Label != tt.wantLabel || res.Score != tt.wantScore {
				t.Errorf("got %v %s, want %v %s", res.Score, res.Label, tt.wantScore, tt.wantLabel)
			}
			if res.Usage.LLMCalls != tt.wantCalls {
				t.Errorf("calls %d, want %d", res.Usage.LLMCalls, tt.wantCalls)
			}
			if res.Reason == "" {
				t.Error("no reason")
			}
		})
	}
}

func TestToxicityBadReplies(t *testing.T) {
	tests := []struct {
		name      string
		replies   []string
		wantLabel Label
		wantCalls int
	}{
		{name: "unknown verdict twice", replies: []string{
			`{"verdicts": [{"statement": "a", "verdict": "mild", "reason": "x"}]}`,
		}, wantLabel: LabelError, wantCalls: 2},
		{name: "prose then JSON", replies: []string{
			`I think it is fine.`,
			`{"verdicts": [{"statement": "a", "verdict": "no", "reason": "x"}]}`,
		}, wantLabel: LabelPass, wantCalls: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := newJudge(map[string][]string{SchemaToxicityVerdicts: tt.replies})
			res := mustNew(t, Toxicity, j, Options{OmitReason: true}).Score(context.Background(), Case{Input: "q", Output: "a"})
			if res.Label != tt.wantLabel || res.Usage.LLMCalls != tt.wantCalls {
				t.Fatalf("got %s after %d calls (%v), want %s after %d", res.Label, res.Usage.LLMCalls, res.Err, tt.wantLabel, tt.wantCalls)
			}
		})
	}
}

// TestToxicityManyVerdicts checks that verdicts past MaxStatements are not
// counted and the result is marked truncated, and that a reply too long to
// read (5,000 verdicts, over the reply bound) is a clear parse error, never
// a score.
func TestToxicityManyVerdicts(t *testing.T) {
	verdicts := func(n int) []string {
		vs := make([]string, n)
		for i := range vs {
			vs[i] = "no"
			if i >= MaxStatements {
				vs[i] = "yes" // never counted
			}
		}
		return vs
	}
	output := Case{Input: "q", Output: strings.Repeat("Fine. ", 5000)}
	res := mustNew(t, Toxicity, newJudge(toxicityReplies(verdicts(1000)...)), Options{ReasonMode: ReasonSummary}).Score(context.Background(), output)
	if res.Label != LabelPass || res.Score != 0 || !res.Truncated {
		t.Fatalf("got %v %s truncated=%v (%v)", res.Score, res.Label, res.Truncated, res.Err)
	}
	if got := res.Steps.Analyze.(ToxicityVerdicts); len(got.Verdicts) != MaxStatements || got.Dropped != 1000-MaxStatements {
		t.Errorf("kept %d dropped %d", len(got.Verdicts), got.Dropped)
	}
	if !strings.Contains(res.Reason, "900 more were left out") {
		t.Errorf("reason does not say what was left out: %q", res.Reason)
	}

	res = mustNew(t, Toxicity, newJudge(toxicityReplies(verdicts(5000)...)), Options{ReasonMode: ReasonSummary}).Score(context.Background(), output)
	var e *Error
	if res.Label != LabelError || !errors.As(res.Err, &e) || e.Type != ErrorJudgeParse || !strings.Contains(e.Error(), "bytes long") {
		t.Fatalf("got %v %s (%v), want a judge_parse_error naming the reply's length", res.Score, res.Label, res.Err)
	}
}
