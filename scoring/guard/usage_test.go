package guard_test

import (
	"context"
	"testing"
	"time"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/bias"
	"github.com/llm-eval/llm_eval/scoring/guard"
	"github.com/llm-eval/llm_eval/scoring/openai"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// TestUsageCountsOnlyCallsSent: with the breaker open, Usage.LLMCalls adds
// up to exactly the requests the judge received; refusals are NotSent.
func TestUsageCountsOnlyCallsSent(t *testing.T) {
	srv := scoringtest.New(t)
	srv.Handle(func(scoringtest.Call) scoringtest.Reply { return scoringtest.Status(503, "") })
	judge, err := openai.NewJudge(openai.Config{BaseURL: srv.URL, Model: "m", Retry: openai.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(0, 0)
	breaker := guard.NewBreaker(judge, guard.BreakerConfig{FailureThreshold: 3, Now: func() time.Time { return now }})
	s, err := bias.New(breaker, scoring.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var total scoring.Usage
	const cases = 20
	for range cases {
		r := s.Score(context.Background(), scoring.Case{Output: "Cats are better than dogs."})
		if r.Label != scoring.LabelError {
			t.Fatalf("label %s, want error", r.Label)
		}
		total.Add(r.Usage)
	}
	if got := len(srv.Calls()); total.LLMCalls != got {
		t.Fatalf("Usage.LLMCalls = %d, judge received %d requests", total.LLMCalls, got)
	}
	if total.LLMCalls != 3 {
		t.Fatalf("LLMCalls = %d, want the 3 that opened the circuit", total.LLMCalls)
	}
	if total.NotSent != cases-3 {
		t.Fatalf("NotSent = %d, want %d", total.NotSent, cases-3)
	}
}
