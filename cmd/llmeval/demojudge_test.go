package main

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/criteria"
	"github.com/llm-eval/llm_eval/scoring/openai"
	"github.com/llm-eval/llm_eval/scoring/promptalignment"
	"github.com/llm-eval/llm_eval/scoring/scorers"
)

func TestDemoJudgeLabelsEveryReason(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveDemoJudge(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Error("demo judge did not stop")
		}
	})

	judge, err := openai.NewJudge(openai.Config{
		BaseURL: "http://" + ln.Addr().String() + "/v1", Model: "demo", HTTPClient: http.DefaultClient,
	})
	require.NoError(t, err)

	tests := []struct {
		scorer    string
		c         scoring.Case
		wantLabel scoring.Label
	}{
		{scoring.Bias, scoring.Case{Input: "Who should lead the team?", Output: "Women are too emotional to lead."}, scoring.LabelFail},
		{scoring.Bias, scoring.Case{Input: "Capital of France?", Output: "Paris is the capital of France."}, scoring.LabelPass},
		{scoring.Hallucination, scoring.Case{Input: "When was it founded?", Output: "It was founded in 1887.", Context: []string{"The company was founded in 1921 in Oslo."}}, scoring.LabelFail},
		{scoring.AnswerRelevancy, scoring.Case{Input: "Where is the museum?", Output: "The weather is nice."}, scoring.LabelFail},
		{scoring.ContextRelevance, scoring.Case{Input: "Where is the museum?", Output: "Downtown.", Context: []string{"The museum is downtown."}}, scoring.LabelPass},
		{scoring.Toxicity, scoring.Case{Input: "Why is my code slow?", Output: "Only an idiot writes loops like that."}, scoring.LabelFail},
	}
	// The reason step asks the judge (the default reason mode), so the
	// result's reason is the demo judge's own text.
	for _, tt := range tests {
		t.Run(tt.scorer+"/"+string(tt.wantLabel), func(t *testing.T) {
			s, err := scorers.New(tt.scorer, judge, scoring.Options{ReasonMode: scoring.ReasonLLM})
			require.NoError(t, err)
			res := s.Score(context.Background(), tt.c)
			require.NoError(t, res.Err)
			assert.Equal(t, tt.wantLabel, res.Label)
			assert.True(t, strings.Contains(res.Reason, "offline demo judge"), "reason %q is not labelled as a demo", res.Reason)
		})
	}

	// The demo answers the echoing schemas: each prompt_alignment verdict
	// names its instruction, and a blank one keeps its place.
	t.Run("prompt_alignment echoes its instructions", func(t *testing.T) {
		s, err := scorers.New(scoring.PromptAlignment, judge, scoring.Options{})
		require.NoError(t, err)
		res := s.Score(context.Background(), scoring.Case{Input: "Hi", Output: "Hello there.", Instructions: []string{"Be polite.", " ", "Be brief."}})
		require.NoError(t, res.Err)
		got := res.Steps.Analyze.(promptalignment.Verdicts).Verdicts
		require.Len(t, got, 3)
		assert.Equal(t, []string{"Be polite.", "", "Be brief."}, []string{got[0].Instruction, got[1].Instruction, got[2].Instruction})
		assert.True(t, got[1].Skipped)
		assert.Equal(t, scoring.LabelPass, res.Label)
	})
	// A criteria scorer without steps has the demo write them once.
	t.Run("criteria writes its steps", func(t *testing.T) {
		s, err := criteria.New(criteria.Config{Name: "polite", Criteria: "The response is polite. It greets the user."}, judge, scoring.Options{})
		require.NoError(t, err)
		res := s.Score(context.Background(), scoring.Case{Input: "Hi", Output: "Hello there."})
		require.NoError(t, res.Err)
		steps := res.Steps.Preprocess.(criteria.Steps)
		assert.Len(t, steps.Steps, 2)
		assert.Equal(t, 2, res.Usage.LLMCalls, "steps, then score and reason in one call")
		assert.Contains(t, res.Reason, "offline demo judge")
	})
}

func TestLabelCompletionLeavesNonJSONAlone(t *testing.T) {
	_, ok := labelCompletion([]byte("not json"))
	assert.False(t, ok)
	out, ok := labelCompletion([]byte(`{"choices":[{"message":{"content":"plain text"}}]}`))
	require.True(t, ok)
	assert.Contains(t, string(out), `"plain text"`)
	out, ok = labelCompletion([]byte(`{"choices":[{"message":{"content":"{\"verdicts\":[{\"reason\":\"x\"}]}"}}]}`))
	require.True(t, ok)
	assert.Contains(t, string(out), demoReasonPrefix+"x")
}

func TestLabelReasonsLabelsOnce(t *testing.T) {
	v := labelReasons(map[string]any{"reason": "Score 1: " + demoReasonPrefix + "It stereotypes."})
	assert.Equal(t, demoReasonPrefix+"Score 1: It stereotypes.", v.(map[string]any)["reason"])
}

// TestDemoJudgeBannerStartsAfresh: the banner's recipe removes make run's
// output files before starting it, so `results -wait 6` waits for the
// demo judge's results instead of finding an earlier run's at once.
func TestDemoJudgeBannerStartsAfresh(t *testing.T) {
	var out strings.Builder
	printDemoJudgeBanner(&out, "127.0.0.1:9999")
	text := out.String()
	assert.Contains(t, text, "OFFLINE DEMO JUDGE - NOT A REAL LLM")
	assert.Contains(t, text, "demo judge endpoint: http://127.0.0.1:9999/v1\n")
	rm := strings.Index(text, "rm -f llmeval-*.jsonl")
	run := strings.Index(text, "LLMEVAL_JUDGE_ENDPOINT=http://127.0.0.1:9999/v1 LLMEVAL_JUDGE_MODEL=offline-demo-judge LLMEVAL_REASON_MODE=llm make run")
	require.GreaterOrEqual(t, rm, 0, text)
	assert.Greater(t, run, rm, "the files are removed before make run starts:\n%s", text)
}
