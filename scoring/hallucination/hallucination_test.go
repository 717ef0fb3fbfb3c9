package hallucination

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
)

// TestHallucinationVerdictsMatchedByStatement checks verdicts are paired
// with claims by the statement the judge echoes, not by position.
func TestHallucinationVerdictsMatchedByStatement(t *testing.T) {
	claims := `{"claims": ["The bridge opened in 1932.", "The bridge is 3 km long.", "The bridge is red."]}`
	tests := []struct {
		name          string
		verdicts      []string // analyze replies, in order
		wantVerdicts  []string // per claim, in claim order
		wantReordered bool
		wantErr       scoring.ErrorType
		wantCalls     int
	}{
		{
			name: "in order",
			verdicts: []string{`{"verdicts": [
				{"statement": "The bridge opened in 1932.", "verdict": "no", "reason": "r1"},
				{"statement": "The bridge is 3 km long.", "verdict": "yes", "reason": "r2"},
				{"statement": "The bridge is red.", "verdict": "no", "reason": "r3"}]}`},
			wantVerdicts: []string{"no", "yes", "no"}, wantCalls: 2,
		},
		{
			name: "reordered echo is matched and flagged",
			verdicts: []string{`{"verdicts": [
				{"statement": "the bridge is red", "verdict": "no", "reason": "r3"},
				{"statement": "The bridge opened in 1932.", "verdict": "no", "reason": "r1"},
				{"statement": "The  bridge is 3 km long.", "verdict": "yes", "reason": "r2"}]}`},
			wantVerdicts: []string{"no", "yes", "no"}, wantReordered: true, wantCalls: 2,
		},
		{
			name: "reworded echo is paired by position",
			verdicts: []string{`{"verdicts": [
				{"statement": "Opened 1932", "verdict": "no", "reason": "r1"},
				{"statement": "Length 3 km", "verdict": "yes", "reason": "r2"},
				{"statement": "Colour red", "verdict": "yes", "reason": "r3"}]}`},
			wantVerdicts: []string{"no", "yes", "yes"}, wantCalls: 2,
		},
		{
			name: "a claim judged twice is re-asked",
			verdicts: []string{`{"verdicts": [
				{"statement": "The bridge is red.", "verdict": "yes", "reason": "r3"},
				{"statement": "The bridge is 3 km long.", "verdict": "yes", "reason": "r2"},
				{"statement": "The bridge is red.", "verdict": "no", "reason": "r3"}]}`,
				`{"verdicts": [
				{"statement": "The bridge opened in 1932.", "verdict": "no", "reason": "r1"},
				{"statement": "The bridge is 3 km long.", "verdict": "no", "reason": "r2"},
				{"statement": "The bridge is red.", "verdict": "yes", "reason": "r3"}]}`},
			wantVerdicts: []string{"no", "no", "yes"}, wantCalls: 3,
		},
		{
			name: "misplaced twice is a parse error",
			verdicts: []string{`{"verdicts": [
				{"statement": "The bridge is red.", "verdict": "yes", "reason": "r3"},
				{"statement": "Something else", "verdict": "yes", "reason": "r2"},
				{"statement": "Another thing", "verdict": "no", "reason": "r3"}]}`},
			wantErr: scoring.ErrorJudgeParse, wantCalls: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := testkit.NewJudge(map[string][]string{SchemaClaims: {claims}, SchemaVerdicts: tt.verdicts})
			res := testkit.Scorer(t, New, j, scoring.Options{OmitReason: true}).Score(context.Background(), scoring.Case{Output: "o", Context: []string{"c"}})
			if res.Usage.LLMCalls != tt.wantCalls {
				t.Errorf("calls %d, want %d", res.Usage.LLMCalls, tt.wantCalls)
			}
			if tt.wantErr != "" {
				var e *scoring.Error
				if res.Label != scoring.LabelError || !errors.As(res.Err, &e) || e.Type != tt.wantErr {
					t.Fatalf("got %s %v, want %s", res.Label, res.Err, tt.wantErr)
				}
				return
			}
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			got := res.Steps.Analyze.(Verdicts)
			want := []string{"The bridge opened in 1932.", "The bridge is 3 km long.", "The bridge is red."}
			for i, v := range got.Verdicts {
				if v.Statement != want[i] || v.Verdict != tt.wantVerdicts[i] {
					t.Errorf("verdict %d = %+v, want %q %s", i, v, want[i], tt.wantVerdicts[i])
				}
			}
			if got.Reordered != tt.wantReordered {
				t.Errorf("Reordered = %v, want %v", got.Reordered, tt.wantReordered)
			}
		})
	}
}

// TestClaimsStringIsNotOneClaim checks a string where the claims list was
// expected is re-asked, not taken as one claim.
func TestClaimsStringIsNotOneClaim(t *testing.T) {
	j := testkit.NewJudge(map[string][]string{
		SchemaClaims:   {`{"claims": "The bridge opened in 1932. It is 3 km long."}`, `{"claims": ["The bridge opened in 1932.", "The bridge is 3 km long."]}`},
		SchemaVerdicts: {testkit.MustJSON(map[string]any{"verdicts": []map[string]string{{"verdict": "no"}, {"verdict": "yes"}}})},
	})
	res := testkit.Scorer(t, New, j, scoring.Options{OmitReason: true}).Score(context.Background(), scoring.Case{Output: "o", Context: []string{"c"}})
	if res.Err != nil || res.Score != 0.5 {
		t.Fatalf("got %s %v %v, want 0.5 after a re-ask", res.Label, res.Score, res.Err)
	}
	if got := res.Steps.Preprocess.(Claims).Claims; len(got) != 2 {
		t.Errorf("claims %q, want the two of the re-asked list", got)
	}
	if res.Usage.LLMCalls != 3 {
		t.Errorf("calls %d, want 3", res.Usage.LLMCalls)
	}
}

// TestManyClaimsAreCapped checks a judge listing more than MaxClaims
// claims has only the first MaxClaims judged: the result is a score, not
// an error, it is marked truncated and its reason says what was left out,
// whichever way the reason is written (issue 36 item 9).
func TestManyClaimsAreCapped(t *testing.T) {
	claims := make([]string, MaxClaims+7)
	for i := range claims {
		claims[i] = fmt.Sprintf("claim %d", i+1)
	}
	verdicts := make([]map[string]string, MaxClaims)
	for i := range verdicts {
		verdicts[i] = map[string]string{"statement": claims[i], "verdict": "no", "reason": "r"}
	}
	verdicts[0]["verdict"] = "yes"
	for _, mode := range []scoring.ReasonMode{scoring.ReasonSummary, scoring.ReasonLLM} {
		t.Run(string(mode), func(t *testing.T) {
			j := testkit.NewJudge(map[string][]string{
				SchemaClaims:         {testkit.MustJSON(map[string]any{"claims": claims})},
				SchemaVerdicts:       {testkit.MustJSON(map[string]any{"verdicts": verdicts})},
				scoring.SchemaReason: {`{"reason": "The score is 0.01 because one claim is unsupported."}`},
			})
			res := testkit.Scorer(t, New, j, scoring.Options{ReasonMode: mode}).Score(context.Background(),
				scoring.Case{Output: "o", Context: []string{"c"}})
			if !res.Scored() || res.Score != 0.01 || !res.Truncated {
				t.Fatalf("got %v %s truncated=%v (%v)", res.Score, res.Label, res.Truncated, res.Err)
			}
			if got := res.Steps.Preprocess.(Claims); len(got.Claims) != MaxClaims || got.Dropped != 7 {
				t.Errorf("kept %d claims, dropped %d", len(got.Claims), got.Dropped)
			}
			if !strings.Contains(res.Reason, fmt.Sprintf("only the first %d claims were judged; 7 more were left out", MaxClaims)) {
				t.Errorf("reason does not say what was left out: %q", res.Reason)
			}
		})
	}
}
