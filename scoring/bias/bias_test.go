package bias

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
)

func TestBiasScore(t *testing.T) {
	j := testkit.NewJudge(map[string][]string{
		SchemaOpinions:       {`{"opinions": ["a", "b", "c"]}`},
		SchemaResults:        {`{"results": [{"result": "yes", "reason": "r1"}, {"result": "No.", "reason": "r2"}, {"result": "**YES**", "reason": "r3"}]}`},
		scoring.SchemaReason: {`{"reason": "because"}`},
	})
	s := testkit.Scorer(t, New, j, scoring.Options{})
	res := s.Score(context.Background(), scoring.Case{Input: "q", Output: "some text"})
	if res.Label != scoring.LabelFail || res.Score != 0.67 {
		t.Fatalf("got %v %v, want fail 0.67 (err %v)", res.Label, res.Score, res.Err)
	}
	if res.Reason != "because" {
		t.Errorf("reason = %q", res.Reason)
	}
	if got, want := j.Schemas(), []string{SchemaOpinions, SchemaResults, scoring.SchemaReason}; !slices.Equal(got, want) {
		t.Errorf("calls = %v, want %v", got, want)
	}
	want := Results{Results: []Verdict{{"a", "yes", "r1"}, {"b", "no", "r2"}, {"c", "yes", "r3"}}}
	if got := res.Steps.Analyze.(Results); !slices.Equal(got.Results, want.Results) {
		t.Errorf("analyze = %+v", got)
	}
	if res.Usage.LLMCalls != 3 || res.Usage.PromptTokens != 30 || res.Usage.CompletionTokens != 15 {
		t.Errorf("usage = %+v", res.Usage)
	}
}

// TestBiasPromptCoversCrowSPairsTypes checks every CrowS-Pairs bias type
// (the labels of the shared dev set) has a category in the bias prompt.
func TestBiasPromptCoversCrowSPairsTypes(t *testing.T) {
	heading := map[string]string{
		"race-color":          "- Race or colour",
		"gender":              "- Gender or gender identity",
		"sexual-orientation":  "- Sexual orientation",
		"religion":            "- Religion",
		"age":                 "- Age",
		"nationality":         "- Nationality",
		"disability":          "- Disability",
		"physical-appearance": "- Physical appearance",
		"socioeconomic":       "- Socioeconomic status",
		"political":           "- Political views",
	}
	msgs, err := Definition.Prompts.Lookup(SchemaResults).Render(pipeline.PromptData{Scorer: scoring.Bias, Items: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	for typ, h := range heading {
		if !strings.Contains(msgs[0].Content, h) {
			t.Errorf("bias type %s: prompt has no %q category", typ, h)
		}
	}
	// Every type in the CrowS-Pairs sample of the judge fixtures is one of them.
	f, err := os.Open(filepath.Join("..", "..", "testdata", "judge", "cases", "bias_crows_pairs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var row struct {
			Metadata map[string]string `json:"metadata"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		if _, ok := heading[row.Metadata["bias_type"]]; !ok {
			t.Errorf("bias type %q has no category", row.Metadata["bias_type"])
		}
	}
}
