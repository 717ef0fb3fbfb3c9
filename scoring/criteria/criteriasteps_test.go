package criteria

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
)

// TestCriteriaStepsGeneratedOnce checks that a criterion without steps has
// its steps written once, that every case is then judged by the same
// steps, and that each evaluation makes one call for its score and reason.
func TestCriteriaStepsGeneratedOnce(t *testing.T) {
	j := testkit.NewJudge(map[string][]string{
		SchemaSteps: {stepsReply, `{"steps": ["A different step."]}`},
		SchemaScore: {`{"reason": "Polite.", "score": 8}`},
	})
	s := mustCriteria(t, politeness, j, scoring.Options{})
	for i := range 3 {
		res := s.Score(context.Background(), scoring.Case{Input: "q", Output: strings.Repeat("a", i+1)})
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		want := Steps{Steps: []string{"Look for greetings and thanks.", "Look for rude or dismissive words."}, Cached: i > 0}
		if got := res.Steps.Preprocess.(Steps); !slices.Equal(got.Steps, want.Steps) || got.Cached != want.Cached {
			t.Errorf("case %d: steps %+v, want %+v", i, got, want)
		}
		if wantCalls := map[bool]int{true: 2, false: 1}[i == 0]; res.Usage.LLMCalls != wantCalls {
			t.Errorf("case %d: %d calls, want %d", i, res.Usage.LLMCalls, wantCalls)
		}
		if res.Reason != "The score is 0.8 for politeness: Polite." || res.Steps.Reason != nil {
			t.Errorf("case %d: reason %q, reason step %+v", i, res.Reason, res.Steps.Reason)
		}
	}
	want := []string{SchemaSteps, SchemaScore, SchemaScore, SchemaScore}
	if got := j.Schemas(); !slices.Equal(got, want) {
		t.Errorf("calls %v, want %v", got, want)
	}
	for _, r := range j.Requests()[1:] {
		if sys := r.Messages[0].Content; !strings.Contains(sys, "1. Look for greetings and thanks.\n2. Look for rude or dismissive words.") {
			t.Errorf("analyze prompt lacks the generated steps:\n%s", sys)
		}
	}
}

// TestCriteriaStepsConcurrent checks that evaluations starting together
// share one steps call.
func TestCriteriaStepsConcurrent(t *testing.T) {
	j := testkit.NewJudge(map[string][]string{
		SchemaSteps: {stepsReply},
		SchemaScore: {`{"reason": "Polite.", "score": 8}`},
	})
	s := mustCriteria(t, politeness, j, scoring.Options{})
	var wg sync.WaitGroup
	results := make([]scoring.Result, 8)
	for i := range results {
		wg.Go(func() { results[i] = s.Score(context.Background(), scoring.Case{Output: "a"}) })
	}
	wg.Wait()
	calls := 0
	for _, res := range results {
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		calls += res.Usage.LLMCalls
	}
	n := 0
	for _, name := range j.Schemas() {
		if name == SchemaSteps {
			n++
		}
	}
	if n != 1 || calls != len(results)+1 {
		t.Errorf("%d steps calls and %d calls in all, want 1 and %d", n, calls, len(results)+1)
	}
}

// TestCriteriaStepsFailureNotKept checks that steps the judge failed to
// give are not kept: the evaluation fails in its preprocess step and the
// next one asks again.
func TestCriteriaStepsFailureNotKept(t *testing.T) {
	j := testkit.NewJudge(map[string][]string{
		SchemaSteps: {"I would check politeness.", `{"steps": []}`, stepsReply},
		SchemaScore: {`{"reason": "Polite.", "score": 8}`},
	})
	s := mustCriteria(t, politeness, j, scoring.Options{})
	res := s.Score(context.Background(), scoring.Case{Output: "a"})
	var se *scoring.Error
	if !errors.As(res.Err, &se) || se.Type != scoring.ErrorJudgeParse || se.Step != scoring.StepPreprocess || !strings.Contains(se.Error(), "empty") {
		t.Fatalf("first: %s %v, want judge_parse_error in preprocess", res.Label, res.Err)
	}
	res = s.Score(context.Background(), scoring.Case{Output: "a"})
	if res.Err != nil || res.Score != 0.8 || res.Steps.Preprocess.(Steps).Cached {
		t.Fatalf("second: %s %v %v, want 0.8 with steps generated", res.Label, res.Score, res.Err)
	}
}

// TestCriteriaStepsWaitCanceled checks that an evaluation waiting for
// another's steps call gives up when its own context ends.
func TestCriteriaStepsWaitCanceled(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	j := testkit.NewJudge(map[string][]string{SchemaSteps: {stepsReply}, SchemaScore: {`{"reason": "r", "score": 8}`}})
	var once sync.Once
	j.OnCall = func(r scoring.Request) {
		if r.Schema.Name == SchemaSteps {
			once.Do(func() { close(started) })
			<-release
		}
	}
	s := mustCriteria(t, politeness, j, scoring.Options{})
	first := make(chan scoring.Result)
	go func() { first <- s.Score(context.Background(), scoring.Case{Output: "a"}) }()
	<-started
	// The second evaluation finds the first one's steps call in flight
	// and waits for it (or, if cancel wins the race, fails at its start);
	// either way it ends canceled while that call is still held.
	ctx, cancel := context.WithCancel(context.Background())
	waiting := make(chan scoring.Result)
	go func() { waiting <- s.Score(ctx, scoring.Case{Output: "b"}) }()
	cancel()
	res := <-waiting
	var se *scoring.Error
	if !errors.As(res.Err, &se) || se.Type != scoring.ErrorCanceled {
		t.Errorf("waiting evaluation: %s %v, want canceled", res.Label, res.Err)
	}
	close(release)
	if r := <-first; r.Err != nil || r.Score != 0.8 {
		t.Errorf("first evaluation: %v %v", r.Score, r.Err)
	}
}
