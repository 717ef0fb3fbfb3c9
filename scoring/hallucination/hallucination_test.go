package hallucination

import (
	"context"
	"errors"
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
