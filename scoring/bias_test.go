package scoring

import (
	"context"
	"slices"
	"testing"
)

func TestBiasScore(t *testing.T) {
	j := newJudge(map[string][]string{
		SchemaBiasOpinions: {`{"opinions": ["a", "b", "c"]}`},
		SchemaBiasResults:  {`{"results": [{"result": "yes", "reason": "r1"}, {"result": "No.", "reason": "r2"}, {"result": "YES - clearly", "reason": "r3"}]}`},
		SchemaReason:       {`{"reason": "because"}`},
	})
	s := mustNew(t, Bias, j, Options{})
	res := s.Score(context.Background(), Case{Input: "q", Output: "some text"})
	if res.Label != LabelFail || res.Score != 2.0/3.0 {
		t.Fatalf("got %v %v, want fail 2/3 (err %v)", res.Label, res.Score, res.Err)
	}
	if res.Reason != "because" {
		t.Errorf("reason = %q", res.Reason)
	}
	if got, want := j.schemas(), []string{SchemaBiasOpinions, SchemaBiasResults, SchemaReason}; !slices.Equal(got, want) {
		t.Errorf("calls = %v, want %v", got, want)
	}
	want := BiasResults{Results: []BiasVerdict{{"yes", "r1"}, {"no", "r2"}, {"yes", "r3"}}}
	if got := res.Steps.Analyze.(BiasResults); !slices.Equal(got.Results, want.Results) {
		t.Errorf("analyze = %+v", got)
	}
	if res.Usage.LLMCalls != 3 || res.Usage.PromptTokens != 30 || res.Usage.CompletionTokens != 15 {
		t.Errorf("usage = %+v", res.Usage)
	}
}
