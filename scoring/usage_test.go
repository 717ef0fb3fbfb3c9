package scoring

import (
	"context"
	"testing"
	"time"
)

func TestUsageAdd(t *testing.T) {
	u := Usage{LLMCalls: 1, PromptTokens: 10, CompletionTokens: 2, Retries: 1, Latency: time.Second}
	u.Add(Usage{LLMCalls: 2, PromptTokens: 5, CompletionTokens: 3, Retries: 4, Latency: 2 * time.Second})
	want := Usage{LLMCalls: 3, PromptTokens: 15, CompletionTokens: 5, Retries: 5, Latency: 3 * time.Second}
	if u != want {
		t.Errorf("usage %+v, want %+v", u, want)
	}
}

func TestUsageSumsJudgeRetries(t *testing.T) {
	withRetries := func(content string, retries int) scriptedReply {
		return scriptedReply{resp: Response{Content: content, FinishReason: "stop", PromptTokens: 7, CompletionTokens: 3, Retries: retries}}
	}
	tests := []struct {
		name        string
		judge       *scriptedJudge
		wantLabel   Label
		wantCalls   int
		wantRetries int
	}{
		{
			name: "retries of every step are summed",
			judge: newJudge(nil).
				add(SchemaBiasOpinions, withRetries(`{"opinions": ["a"]}`, 2)).
				add(SchemaBiasResults, withRetries(`{"results": [{"result": "no", "reason": "r"}]}`, 0)).
				add(SchemaReason, withRetries(`{"reason": "fine"}`, 1)),
			wantLabel: LabelPass, wantCalls: 3, wantRetries: 3,
		},
		{
			name: "retries behind a failed call still count",
			judge: newJudge(nil).
				add(SchemaBiasOpinions, withRetries(`{"opinions": ["a"]}`, 1)).
				add(SchemaBiasResults, scriptedReply{resp: Response{Retries: 2}, err: &Error{Type: ErrorJudgeUnavailable, Err: context.DeadlineExceeded}}),
			wantLabel: LabelError, wantCalls: 2, wantRetries: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustNew(t, Bias, tt.judge, Options{}).Score(context.Background(), Case{Output: "Tea is best."})
			if res.Label != tt.wantLabel {
				t.Fatalf("label %s (%v), want %s", res.Label, res.Err, tt.wantLabel)
			}
			if res.Usage.LLMCalls != tt.wantCalls || res.Usage.Retries != tt.wantRetries {
				t.Errorf("usage %+v, want %d calls and %d retries", res.Usage, tt.wantCalls, tt.wantRetries)
			}
		})
	}
}
