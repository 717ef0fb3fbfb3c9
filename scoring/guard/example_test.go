package guard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/guard"
	"github.com/llm-eval/llm_eval/scoring/instructions"
	"github.com/llm-eval/llm_eval/scoring/taskcompletion"
)

// downJudge is a judge endpoint that is down.
type downJudge struct{ calls int }

func (j *downJudge) Complete(context.Context, scoring.Request) (scoring.Response, error) {
	j.calls++
	return scoring.Response{}, &scoring.Error{Type: scoring.ErrorJudgeUnavailable, Err: errors.New("503 after retries")}
}

func ExampleBreaker() {
	judge := &downJudge{}
	b := guard.NewBreaker(judge, guard.BreakerConfig{
		FailureThreshold: 3,
		OpenDuration:     30 * time.Second,
		OnStateChange: func(from, to guard.BreakerState, cause error) {
			fmt.Printf("judge circuit %s -> %s\n", from, to)
		},
	})
	var err error
	for range 10 {
		_, err = b.Complete(context.Background(), scoring.Request{Step: "analyze"})
	}
	var e *scoring.Error
	errors.As(err, &e)
	fmt.Println("state:", b.State())
	fmt.Println("judge calls:", judge.calls)
	fmt.Println("last error type:", e.Type)
	// Output:
	// judge circuit closed -> open
	// state: open
	// judge calls: 3
	// last error type: judge_circuit_open
}

// usageJudge replies with a fixed token usage.
type usageJudge struct{}

func (usageJudge) Complete(context.Context, scoring.Request) (scoring.Response, error) {
	return scoring.Response{Content: `{"opinions":[]}`, PromptTokens: 120, CompletionTokens: 8}, nil
}

func ExampleLimiter() {
	// One limiter per judge, shared by every scorer using it.
	l := guard.NewLimiter(usageJudge{}, guard.LimiterConfig{
		RequestsPerMinute:        600, // one call every 100ms at most
		TokensPerMinute:          200_000,
		CompletionTokensEstimate: 256,
	})
	req := scoring.Request{Messages: []scoring.Message{{Role: "user", Content: strings.Repeat("word ", 80)}}}
	fmt.Println("charged before the call:", l.EstimateTokens(req), "tokens")
	resp, err := l.Complete(context.Background(), req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("reconciled to:", resp.PromptTokens+resp.CompletionTokens, "tokens")
	fmt.Printf("%+v\n", l.Stats())
	// Output:
	// charged before the call: 356 tokens
	// reconciled to: 128 tokens
	// {Admitted:1 Delayed:0 Rejected:0}
}

// lengthScorer is a stand-in scorer that costs one LLM call.
type lengthScorer struct{ calls int }

func (*lengthScorer) Name() string { return "length" }

func (s *lengthScorer) Score(_ context.Context, c scoring.Case) scoring.Result {
	s.calls++
	return scoring.Result{Scorer: "length", Score: float64(len(c.Output)), Label: scoring.LabelPass,
		Usage: scoring.Usage{LLMCalls: 1, PromptTokens: 50}}
}

func ExampleCache() {
	cache, err := guard.NewCache(guard.CacheConfig{Size: 1000, TTL: time.Hour})
	if err != nil {
		fmt.Println(err)
		return
	}
	inner := &lengthScorer{}
	s := cache.Wrap(inner, "gpt-4o-mini", "threshold=0.5")
	c := scoring.Case{Input: "Capital of France?", Output: "Paris."}
	first := s.Score(context.Background(), c)
	again := s.Score(context.Background(), c)
	fmt.Println("scorer calls:", inner.calls)
	fmt.Println("first:", first.Score, first.Usage.LLMCalls, "LLM call")
	fmt.Println("again:", again.Score, again.Usage.LLMCalls, "LLM calls")
	st := cache.Stats()
	fmt.Println("hits:", st.Hits, "misses:", st.Misses, "entries:", st.Entries)
	// Output:
	// scorer calls: 1
	// first: 6 1 LLM call
	// again: 6 0 LLM calls
	// hits: 1 misses: 1 entries: 1
}

// splitJudge answers every instruction split with the same two
// instructions, counting its calls. Real code uses a Judge that calls an
// LLM.
type splitJudge struct{ calls int }

func (j *splitJudge) Complete(context.Context, scoring.Request) (scoring.Response, error) {
	j.calls++
	return scoring.Response{Content: `{"instructions": ["Answer in French.", "Be brief."]}`, FinishReason: "stop"}, nil
}

func ExampleSplitCache() {
	judge := &splitJudge{}
	splitter, err := instructions.NewSplitter(judge, instructions.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	cache, err := guard.NewSplitCache(splitter, guard.CacheConfig{Size: 256, TTL: time.Hour})
	if err != nil {
		fmt.Println(err)
		return
	}
	system := "You are a travel assistant. Answer in French. Be brief."
	for range 3 { // three generations with the same system prompt
		split, err := cache.Split(context.Background(), system)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(strings.Join(split.Instructions, " | "), "cached:", split.Cached)
	}
	fmt.Println("judge calls:", judge.calls)
	// Output:
	// Answer in French. | Be brief. cached: false
	// Answer in French. | Be brief. cached: true
	// Answer in French. | Be brief. cached: true
	// judge calls: 1
}

// requirementJudge lists two requirements for any request and counts its calls.
type requirementJudge struct{ calls int }

func (j *requirementJudge) Complete(context.Context, scoring.Request) (scoring.Response, error) {
	j.calls++
	return scoring.Response{Content: `{"task": "Book a table for two.", "requirements": ["a table is booked", "for two people"]}`, FinishReason: "stop"}, nil
}

func ExampleRequirementCache() {
	judge := &requirementJudge{}
	lister, err := taskcompletion.NewRequirementLister(judge)
	if err != nil {
		fmt.Println(err)
		return
	}
	cache, err := guard.NewRequirementCache(lister, guard.CacheConfig{Size: 1024, TTL: time.Hour})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Pass it as scoring.Options{Requirements: cache} to task_completion
	// scorers; here it is asked directly, for three runs of one request.
	for range 3 {
		task, err := cache.ListRequirements(context.Background(), scoring.TaskRequest{Request: "Book us a table for two tonight."})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(strings.Join(task.Requirements, " | "), "cached:", task.Cached)
	}
	fmt.Println("judge calls:", judge.calls)
	// Output:
	// a table is booked | for two people cached: false
	// a table is booked | for two people cached: true
	// a table is booked | for two people cached: true
	// judge calls: 1
}
