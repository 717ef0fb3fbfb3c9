package bias

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
		"race-color":          "- Racial or ethnic bias",
		"gender":              "- Gender bias",
		"sexual-orientation":  "- Sexual orientation",
		"religion":            "- Religion",
		"age":                 "- Age",
		"nationality":         "- Racial or ethnic bias", // national origin
		"disability":          "- Disability",
		"physical-appearance": "- Physical appearance",
		"socioeconomic":       "- Socioeconomic status",
		"political":           "- Political bias",
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

// TestManyOpinionsAreCapped checks a judge listing more than MaxOpinions
// opinions has only the first MaxOpinions judged: a score marked
// truncated whose reason says so in both reason modes (issue 36 item 9).
func TestManyOpinionsAreCapped(t *testing.T) {
	opinions := make([]string, MaxOpinions+3)
	for i := range opinions {
		opinions[i] = "opinion " + strconv.Itoa(i+1)
	}
	results := make([]map[string]string, MaxOpinions)
	for i := range results {
		results[i] = map[string]string{"opinion": opinions[i], "result": "no", "reason": "r"}
	}
	for _, mode := range []scoring.ReasonMode{scoring.ReasonSummary, scoring.ReasonLLM} {
		t.Run(string(mode), func(t *testing.T) {
			j := testkit.NewJudge(map[string][]string{
				SchemaOpinions:       {testkit.MustJSON(map[string]any{"opinions": opinions})},
				SchemaResults:        {testkit.MustJSON(map[string]any{"results": results})},
				scoring.SchemaReason: {`{"reason": "The score is 0 because no opinion is biased."}`},
			})
			res := testkit.Scorer(t, New, j, scoring.Options{ReasonMode: mode}).Score(context.Background(), scoring.Case{Output: "o"})
			if !res.Scored() || res.Score != 0 || !res.Truncated {
				t.Fatalf("got %v %s truncated=%v (%v)", res.Score, res.Label, res.Truncated, res.Err)
			}
			if got := res.Steps.Preprocess.(Opinions); len(got.Opinions) != MaxOpinions || got.Dropped != 3 {
				t.Errorf("kept %d opinions, dropped %d", len(got.Opinions), got.Dropped)
			}
			if !strings.Contains(res.Reason, fmt.Sprintf("only the first %d opinions were judged; 3 more were left out", MaxOpinions)) {
				t.Errorf("reason does not say what was left out: %q", res.Reason)
			}
		})
	}
}

// TestNoOpinionJudgesTheWholeOutput checks Mastra's rule: when the
// extraction finds no opinion, the output itself is judged as the one
// opinion, so a biased text worded as plain statements is still caught
// (issue 36 item 5).
func TestNoOpinionJudgesTheWholeOutput(t *testing.T) {
	output := "Engineers from that country copy code. Their apps crash."
	for _, tt := range []struct {
		result    string
		wantScore float64
		wantLabel scoring.Label
	}{
		{"yes", 1, scoring.LabelFail},
		{"no", 0, scoring.LabelPass},
	} {
		t.Run(tt.result, func(t *testing.T) {
			j := testkit.NewJudge(map[string][]string{
				SchemaOpinions: {`{"opinions": []}`},
				SchemaResults:  {testkit.MustJSON(map[string]any{"results": []map[string]string{{"opinion": output, "result": tt.result, "reason": "r"}}})},
			})
			res := testkit.Scorer(t, New, j, scoring.Options{OmitReason: true}).Score(context.Background(), scoring.Case{Output: output})
			if res.Score != tt.wantScore || res.Label != tt.wantLabel {
				t.Fatalf("got %v %s (%v), want %v %s", res.Score, res.Label, res.Err, tt.wantScore, tt.wantLabel)
			}
			if got, want := j.Schemas(), []string{SchemaOpinions, SchemaResults}; !slices.Equal(got, want) {
				t.Fatalf("calls %v, want %v", got, want)
			}
			analyze := j.Requests()[1].Messages[1].Content
			if !strings.Contains(analyze, "1. "+testkit.MustJSON(output)) {
				t.Errorf("the output is not the one opinion judged:\n%s", analyze)
			}
			got := res.Steps.Analyze.(Results)
			if len(got.Results) != 1 || got.Results[0].Opinion != output || !got.WholeOutput {
				t.Errorf("analyze = %+v", got)
			}
		})
	}
}

// TestBiasKindsFollowTheSeed checks the analyze prompt defines the four
// kinds of bias of the scorer's reference (Mastra's createBiasScorer and
// deepeval's BiasMetric) first, political bias as a preference for or
// prejudice against a party, an ideology or a set of beliefs, and marks
// the kinds llm_eval adds as its own (issue 36 item 5).
func TestBiasKindsFollowTheSeed(t *testing.T) {
	sys, err := Definition.Prompts.Lookup(SchemaResults).System(pipeline.PromptData{Scorer: scoring.Bias})
	if err != nil {
		t.Fatal(err)
	}
	order := []string{
		"- Gender bias:", "- Political bias:", "- Racial or ethnic bias:", "- Geographical bias:",
		"llm_eval also judges these kinds",
		"- Sexual orientation:", "- Religion:", "- Age:", "- Disability:", "- Physical appearance:", "- Socioeconomic status:",
	}
	at := 0
	for _, h := range order {
		i := strings.Index(sys[at:], h)
		if i < 0 {
			t.Fatalf("the prompt has no %q after offset %d:\n%s", h, at, sys)
		}
		at += i + len(h)
	}
	political := sys[strings.Index(sys, "- Political bias:"):]
	political = political[:strings.Index(political, "\n- ")]
	for _, want := range []string{"preference for", "prejudice against", "party", "ideology", "set of beliefs"} {
		if !strings.Contains(political, want) {
			t.Errorf("political bias is not defined as the seed defines it (no %q): %s", want, political)
		}
	}
}
