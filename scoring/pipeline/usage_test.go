package pipeline_test

import (
	"context"
	"testing"
	"time"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/bias"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
)

func TestUsageAdd(t *testing.T) {
	u := scoring.Usage{LLMCalls: 1, PromptTokens: 10, CompletionTokens: 2, Retries: 1, Latency: time.Second}
	u.Add(scoring.Usage{LLMCalls: 2, PromptTokens: 5, CompletionTokens: 3, Retries: 4, Latency: 2 * time.Second})
	want := scoring.Usage{LLMCalls: 3, PromptTokens: 15, CompletionTokens: 5, Retries: 5, Latency: 3 * time.Second}
	if u != want {
		t.Errorf("usage %+v, want %+v", u, want)
	}
}

func TestUsageSumsJudgeRetries(t *testing.T) {
	withRetries := func(content string, retries int) testkit.Reply {
		return testkit.Reply{Resp: scoring.Response{Content: content, FinishReason: "stop", PromptTokens: 7, CompletionTokens: 3, Retries: retries}}
	}
	tests := []struct {
		name        string
		judge       *testkit.Judge
		wantLabel   scoring.Label
		wantCalls   int
		wantRetries int
	}{
		{
			name: "retries of every step are summed",
			judge: testkit.NewJudge(nil).
				Add(bias.SchemaOpinions, withRetries(`{"opinions": ["a"]}`, 2)).
				Add(bias.SchemaResults, withRetries(`{"results": [{"result": "no", "reason": "r"}]}`, 0)).
				Add(scoring.SchemaReason, withRetries(`{"reason": "fine"}`, 1)),
			wantLabel: scoring.LabelPass, wantCalls: 3, wantRetries: 3,
		},
		{
			name: "retries behind a failed call still count",
			judge: testkit.NewJudge(nil).
				Add(bias.SchemaOpinions, withRetries(`{"opinions": ["a"]}`, 1)).
				Add(bias.SchemaResults, testkit.Reply{Resp: scoring.Response{Retries: 2}, Err: &scoring.Error{Type: scoring.ErrorJudgeUnavailable, Err: context.DeadlineExceeded}}),
			wantLabel: scoring.LabelError, wantCalls: 2, wantRetries: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustNew(t, scoring.Bias, tt.judge, scoring.Options{}).Score(context.Background(), scoring.Case{Output: "Tea is best."})
			if res.Label != tt.wantLabel {
				t.Fatalf("label %s (%v), want %s", res.Label, res.Err, tt.wantLabel)
			}
			if res.Usage.LLMCalls != tt.wantCalls || res.Usage.Retries != tt.wantRetries {
				t.Errorf("usage %+v, want %d calls and %d retries", res.Usage, tt.wantCalls, tt.wantRetries)
			}
		})
	}
}
