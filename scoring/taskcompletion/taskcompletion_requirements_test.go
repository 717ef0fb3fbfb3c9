package taskcompletion

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
)

// countingLister is a RequirementLister that remembers the requests it got.
type countingLister struct {
	mu       sync.Mutex
	requests []string
	answer   scoring.TaskRequirements
	err      error
	panics   bool
}

func (l *countingLister) ListRequirements(_ context.Context, req scoring.TaskRequest) (scoring.TaskRequirements, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.panics {
		panic("lister broke")
	}
	l.requests = append(l.requests, req.Request)
	return l.answer, l.err
}

// TestTaskCompletionRequirementsFromRequestAlone checks that two runs of
// the same request, with different steps and answers, send the same
// preprocess prompt: the requirements depend on the request only.
func TestTaskCompletionRequirementsFromRequestAlone(t *testing.T) {
	a := testkit.AgentCase()
	b := testkit.AgentCase()
	b.Output = "I could not find the weather."
	b.Trajectory = &scoring.Trajectory{Steps: []scoring.Step{testkit.Gen("", testkit.Call("x", "search", "Lyon")), testkit.FailedStep("x", "search", "", "timeout"), testkit.Gen(b.Output)}}
	var prompts []string
	for _, c := range []scoring.Case{a, b} {
		j := testkit.NewJudge(testkit.TaskReplies("yes"))
		res := testkit.Scorer(t, New, j, scoring.Options{OmitReason: true}).Score(context.Background(), c)
		require.NoError(t, res.Err)
		prompts = append(prompts, testkit.MustJSON(j.Requests()[0].Messages))
	}
	assert.Equal(t, prompts[0], prompts[1])
}

// TestTaskCompletionUsesRequirementLister checks Options.Requirements: it
// gets the prepared request, its answer is the preprocess result (a
// cached one costs no call), and its failures end the evaluation with a
// typed error.
func TestTaskCompletionUsesRequirementLister(t *testing.T) {
	redact := func(s string) string { return "[" + s + "]" }
	t.Run("cached requirements", func(t *testing.T) {
		l := &countingLister{answer: scoring.TaskRequirements{Task: "t", Requirements: []string{"requirement 1"}, Cached: true}}
		j := testkit.NewJudge(testkit.TaskReplies("yes"))
		res := testkit.Scorer(t, New, j, scoring.Options{OmitReason: true, Requirements: l, Redact: redact}).Score(context.Background(), testkit.AgentCase())
		require.NoError(t, res.Err)
		assert.Equal(t, []string{"[What's the weather in Lyon tomorrow?]"}, l.requests)
		assert.Equal(t, []string{SchemaVerdicts}, j.Schemas(), "no preprocess call")
		assert.Equal(t, 1, res.Usage.LLMCalls)
		assert.True(t, res.Steps.Preprocess.(scoring.TaskRequirements).Cached)
		assert.Equal(t, 1.0, res.Score)
	})
	t.Run("the lister's usage is the evaluation's", func(t *testing.T) {
		l := &countingLister{answer: scoring.TaskRequirements{Task: "t", Requirements: []string{"requirement 1"}, Usage: scoring.Usage{LLMCalls: 2, PromptTokens: 7}}}
		res := testkit.Scorer(t, New, testkit.NewJudge(testkit.TaskReplies("yes")), scoring.Options{OmitReason: true, Requirements: l}).Score(context.Background(), testkit.AgentCase())
		require.NoError(t, res.Err)
		assert.Equal(t, 3, res.Usage.LLMCalls)
		assert.Equal(t, 17, res.Usage.PromptTokens)
	})
	t.Run("failure", func(t *testing.T) {
		l := &countingLister{err: &scoring.Error{Type: scoring.ErrorJudgeUnavailable, Err: errors.New("down")}, answer: scoring.TaskRequirements{Usage: scoring.Usage{LLMCalls: 1}}}
		res := testkit.Scorer(t, New, testkit.NewJudge(nil), scoring.Options{Requirements: l}).Score(context.Background(), testkit.AgentCase())
		var e *scoring.Error
		require.ErrorAs(t, res.Err, &e)
		assert.Equal(t, scoring.ErrorJudgeUnavailable, e.Type)
		assert.Equal(t, scoring.StepPreprocess, e.Step)
		assert.Equal(t, 1, res.Usage.LLMCalls)
	})
	t.Run("panic", func(t *testing.T) {
		res := testkit.Scorer(t, New, testkit.NewJudge(nil), scoring.Options{Requirements: &countingLister{panics: true}}).Score(context.Background(), testkit.AgentCase())
		var e *scoring.Error
		require.ErrorAs(t, res.Err, &e)
		assert.Equal(t, scoring.ErrorInvalidCase, e.Type)
		assert.ErrorContains(t, e, "lister broke")
	})
}

// TestTaskCompletionLeftOutSteps checks that requirements only left-out
// steps could decide are not counted as failures, and that "n/a" is
// accepted only when steps were left out.
func TestTaskCompletionLeftOutSteps(t *testing.T) {
	omitted := testkit.AgentCase()
	omitted.Trajectory.Steps = append([]scoring.Step{{Kind: scoring.StepOmitted, Count: 40}}, omitted.Trajectory.Steps...)
	tests := []struct {
		name     string
		c        scoring.Case
		verdicts []string
		score    float64
		label    scoring.Label
		calls    int
	}{
		{"a minor requirement not shown", omitted, []string{"yes", "n/a"}, 1, scoring.LabelPass, 2},
		{"the main requirement not shown", omitted, []string{"n/a", "yes", "yes"}, 1, scoring.LabelPass, 2},
		{"the main requirement not shown, one missed", omitted, []string{"n/a", "yes", "no"}, 0.25, scoring.LabelFail, 2},
		{"everything not shown", omitted, []string{"n/a", "n/a"}, 0, scoring.LabelNotScorable, 2},
		{"n/a without left-out steps is re-asked, then an error", testkit.AgentCase(), []string{"yes", "n/a"}, 0, scoring.LabelError, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := testkit.NewJudge(testkit.TaskReplies(tc.verdicts...))
			res := testkit.Scorer(t, New, j, scoring.Options{ReasonMode: scoring.ReasonSummary}).Score(context.Background(), tc.c)
			assert.Equal(t, tc.label, res.Label, "%s %v", res.Reason, res.Err)
			assert.InDelta(t, tc.score, res.Score, 1e-12)
			assert.Len(t, j.Requests(), tc.calls)
			if tc.label == scoring.LabelError {
				return
			}
			assert.Contains(t, j.Requests()[1].Messages[1].Content, `answer "n/a" for a requirement that only they could decide`)
			if tc.label != scoring.LabelNotScorable {
				assert.Contains(t, res.Reason, "not judged because steps were left out")
			}
		})
	}
}

func TestRequirementLister(t *testing.T) {
	_, err := NewRequirementLister(nil)
	assert.ErrorContains(t, err, "judge is nil")

	j := testkit.NewJudge(map[string][]string{SchemaTask: {`{"task": "t", "requirements": ["book it", "Book it.", "on Friday"]}`}})
	l, err := NewRequirementLister(j)
	require.NoError(t, err)
	got, err := l.ListRequirements(context.Background(), scoring.TaskRequest{Request: "Book it on Friday."})
	require.NoError(t, err)
	assert.Equal(t, []string{"book it", "on Friday"}, got.Requirements, "a repeated requirement is kept once")
	assert.Equal(t, 1, got.Usage.LLMCalls)

	got, err = l.ListRequirements(context.Background(), scoring.TaskRequest{Request: "  "})
	require.NoError(t, err)
	assert.Empty(t, got.Requirements)
	assert.Len(t, j.Requests(), 1, "a blank request makes no call")
}
