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

// chunkReplies scripts a run over chunks: the claims, then one analyze
// reply per call, each judging the claims it is sent.
func chunkReplies(claims []string, calls ...[]string) map[string][]string {
	r := map[string][]string{
		SchemaClaims:         {testkit.MustJSON(map[string]any{"claims": claims})},
		scoring.SchemaReason: {`{"reason": "judge reason"}`},
	}
	for _, vs := range calls {
		var out []map[string]string
		for i, v := range vs {
			out = append(out, map[string]string{"verdict": v, "reason": fmt.Sprintf("chunk reason %d", i+1)})
		}
		r[SchemaVerdicts] = append(r[SchemaVerdicts], testkit.MustJSON(map[string]any{"verdicts": out}))
	}
	return r
}

// TestLongContextIsJudgedInChunks checks a context longer than one
// request's budget (max_input_chars) is judged in chunks, each within the
// budget, and a claim counts as supported when any chunk supports it; a
// claim no chunk supports is a hallucination. Claims already supported
// are not sent again (issue 36 item 1).
func TestLongContextIsJudgedInChunks(t *testing.T) {
	doc := func(tag string) string { return tag + " " + strings.Repeat("a", 76) + "." } // 80 characters
	c := scoring.Case{Output: "o", Context: []string{doc("first"), doc("second"), doc("third.")}}
	claims := []string{"claim A", "claim B", "claim C"}
	// Chunk 1 supports A; chunk 2 supports neither B nor C; chunk 3 supports C.
	j := testkit.NewJudge(chunkReplies(claims, []string{"no", "yes", "yes"}, []string{"yes", "yes"}, []string{"yes", "no"}))
	res := testkit.Scorer(t, New, j, scoring.Options{MaxInputChars: 100, ReasonMode: scoring.ReasonSummary}).Score(context.Background(), c)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if res.Score != 0.33 || res.Label != scoring.LabelPass || res.Truncated {
		t.Fatalf("got %v %s truncated=%v, want 0.33 pass, not truncated", res.Score, res.Label, res.Truncated)
	}
	reqs := j.Requests()
	if got := j.Schemas(); len(got) != 4 {
		t.Fatalf("calls %v, want claims and 3 chunks", got)
	}
	for i, want := range []struct {
		doc    string
		claims []string
	}{{doc("first"), claims}, {doc("second"), claims[1:]}, {doc("third."), claims[1:]}} {
		user := reqs[i+1].Messages[1].Content
		if !strings.Contains(user, testkit.MustJSON(want.doc)) || strings.Count(user, "<<<CONTEXT") != 1 {
			t.Errorf("chunk %d does not hold just its document:\n%s", i+1, user)
		}
		if n := strings.Count(user, "\"claim "); n != len(want.claims) {
			t.Errorf("chunk %d sends %d claims, want %d:\n%s", i+1, n, len(want.claims), user)
		}
	}
	got := res.Steps.Analyze.(Verdicts)
	for i, want := range []string{"no", "yes", "no"} {
		if got.Verdicts[i].Verdict != want {
			t.Errorf("claim %d: %+v, want %s", i+1, got.Verdicts[i], want)
		}
	}
	if got.Verdicts[2].Chunk != 3 || got.Chunks != 3 {
		t.Errorf("claim C supported by chunk %d of %d judged, want 3 of 3", got.Verdicts[2].Chunk, got.Chunks)
	}
}

// TestContextBeyondTheChunkBound checks a context longer than
// MaxContextChunks chunks: the rest is not judged, the result is
// truncated and its reason says how much of the context was judged.
func TestContextBeyondTheChunkBound(t *testing.T) {
	doc := strings.Repeat("b", 99) + "."
	c := scoring.Case{Output: "o", Context: []string{doc, doc + "2", doc + "3"}}
	j := testkit.NewJudge(chunkReplies([]string{"claim A"}, []string{"yes"}, []string{"yes"}))
	res := testkit.Scorer(t, New, j, scoring.Options{MaxInputChars: 100, MaxContextChunks: 2, ReasonMode: scoring.ReasonSummary}).Score(context.Background(), c)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if res.Score != 1 || !res.Truncated {
		t.Fatalf("got %v truncated=%v, want 1, truncated", res.Score, res.Truncated)
	}
	if !strings.Contains(res.Reason, "only the first 200 of 302 characters of the context were judged") {
		t.Errorf("reason does not say how much of the context was judged: %q", res.Reason)
	}
	if n := len(j.Requests()); n != 3 {
		t.Errorf("%d calls, want claims and 2 chunks", n)
	}
}

// TestCutContextIsNoExemption checks the seed's rule holds whatever was
// cut: the judge is never told that a claim the context shown does not
// support is not a hallucination, and such a claim counts (issue 36
// item 1). A context item cut upstream (by the processor's trace index)
// keeps llm_eval's marker and marks the result truncated.
func TestCutContextIsNoExemption(t *testing.T) {
	cutUpstream := "The bridge opened in 1932 and" + scoring.TruncationMarker
	j := testkit.NewJudge(testkit.HallucinationReplies("yes"))
	res := testkit.Scorer(t, New, j, scoring.Options{OmitReason: true, MaxInputChars: 40}).Score(context.Background(),
		scoring.Case{Output: "The bridge is 3 km long.", Context: []string{cutUpstream, strings.Repeat("Long document. ", 10)}})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if res.Score != 1 || res.Label != scoring.LabelFail {
		t.Errorf("got %v %s, want 1 fail: an unsupported claim counts", res.Score, res.Label)
	}
	if !res.Truncated {
		t.Error("a context item cut upstream does not mark the result truncated")
	}
	for _, r := range j.Requests()[1:] {
		user := r.Messages[1].Content
		if strings.Contains(user, "could support") || strings.Contains(user, `is not a hallucination: give it "no"`) {
			t.Errorf("the judge is told to exempt claims the cut part could support:\n%s", user)
		}
		if strings.Contains(user, "1932") && !strings.Contains(user, testkit.MustJSON(cutUpstream)) {
			t.Errorf("the upstream cut lost its marker:\n%s", user)
		}
	}
}
