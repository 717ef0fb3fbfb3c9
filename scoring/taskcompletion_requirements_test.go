package scoring

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingLister is a RequirementLister that remembers the requests it got.
type countingLister struct {
	mu       sync.Mutex
	requests []string
	answer   TaskRequirements
	err      error
	panics   bool
}

func (l *countingLister) ListRequirements(_ context.Context, request string) (TaskRequirements, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.panics {
		panic("lister broke")
	}
	l.requests = append(l.requests, request)
	return l.answer, l.err
}

// TestTaskCompletionRequirementsFromRequestAlone checks that two runs of
// the same request, with different steps and answers, send the same
// preprocess prompt: the requirements depend on the request only.
func TestTaskCompletionRequirementsFromRequestAlone(t *testing.T) {
	a := agentCase()
	b := agentCase()
	b.Output = "I could not find the weather."
	b.Trajectory = &Trajectory{Steps: []Step{gen("", call("x", "search", "Lyon")), failedStep("x", "search", "", "timeout"), gen(b.Output)}}
	var prompts []string
	for _, c := range []Case{a, b} {
		j := newJudge(taskReplies("yes"))
		res := mustNew(t, TaskCompletion, j, Options{OmitReason: true}).Score(context.Background(), c)
		require.NoError(t, res.Err)
		prompts = append(prompts, mustJSON(j.requests()[0].Messages))
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
		l := &countingLister{answer: TaskRequirements{Task: "t", Requirements: []string{"requirement 1"}, Cached: true}}
		j := newJudge(taskReplies("yes"))
		res := mustNew(t, TaskCompletion, j, Options{OmitReason: true, Requirements: l, Redact: redact}).Score(context.Background(), agentCase())
		require.NoError(t, res.Err)
		assert.Equal(t, []string{"[What's the weather in Lyon tomorrow?]"}, l.requests)
		assert.Equal(t, []string{SchemaTaskCompletionVerdicts}, j.schemas(), "no preprocess call")
		assert.Equal(t, 1, res.Usage.LLMCalls)
		assert.True(t, res.Steps.Preprocess.(TaskRequirements).Cached)
		assert.Equal(t, 1.0, res.Score)
	})
	t.Run("the lister's usage is the evaluation's", func(t *testing.T) {
		l := &countingLister{answer: TaskRequirements{Task: "t", Requirements: []string{"requirement 1"}, Usage: Usage{LLMCalls: 2, PromptTokens: 7}}}
		res := mustNew(t, TaskCompletion, newJudge(taskReplies("yes")), Options{OmitReason: true, Requirements: l}).Score(context.Background(), agentCase())
		require.NoError(t, res.Err)
		assert.Equal(t, 3, res.Usage.LLMCalls)
		assert.Equal(t, 17, res.Usage.PromptTokens)
	})
	t.Run("failure", func(t *testing.T) {
		l := &countingLister{err: &Error{Type: ErrorJudgeUnavailable, Err: errors.New("down")}, answer: TaskRequirements{Usage: Usage{LLMCalls: 1}}}
		res := mustNew(t, TaskCompletion, newJudge(nil), Options{Requirements: l}).Score(context.Background(), agentCase())
		var e *Error
		require.ErrorAs(t, res.Err, &e)
		assert.Equal(t, ErrorJudgeUnavailable, e.Type)
		assert.Equal(t, StepPreprocess, e.Step)
		assert.Equal(t, 1, res.Usage.LLMCalls)
	})
	t.Run("panic", func(t *testing.T) {
		res := mustNew(t, TaskCompletion, newJudge(nil), Options{Requirements: &countingLister{panics: true}}).Score(context.Background(), agentCase())
		var e *Error
		require.ErrorAs(t, res.Err, &e)
		assert.Equal(t, ErrorInvalidCase, e.Type)
		assert.ErrorContains(t, e, "lister broke")
	})
}

// TestTaskCompletionLeftOutSteps checks that requirements only left-out
// steps could decide are not counted as failures, and that "n/a" is
// accepted only when steps were left out.
func TestTaskCompletionLeftOutSteps(t *testing.T) {
	omitted := agentCase()
	omitted.Trajectory.Steps = append([]Step{{Kind: StepOmitted, Count: 40}}, omitted.Trajectory.Steps...)
	tests := []struct {
		name     string
		c        Case
		verdicts []string
		score    float64
		label    Label
		calls    int
	}{
		{"a minor requirement not shown", omitted, []string{"yes", "n/a"}, 1, LabelPass, 2},
		{"the main requirement not shown", omitted, []string{"n/a", "yes", "no"}, 0.5, LabelPass, 2},
		{"everything not shown", omitted, []string{"n/a", "n/a"}, 0, LabelNotScorable, 2},
		{"n/a without left-out steps is re-asked, then an error", agentCase(), []string{"yes", "n/a"}, 0, LabelError, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := newJudge(taskReplies(tc.verdicts...))
			res := mustNew(t, TaskCompletion, j, Options{ReasonMode: ReasonSummary}).Score(context.Background(), tc.c)
			assert.Equal(t, tc.label, res.Label, "%s %v", res.Reason, res.Err)
			assert.InDelta(t, tc.score, res.Score, 1e-12)
			assert.Len(t, j.requests(), tc.calls)
			if tc.label == LabelError {
				return
			}
			assert.Contains(t, j.requests()[1].Messages[1].Content, `answer "n/a" for a requirement that only they could decide`)
			if tc.label == LabelPass {
				assert.Contains(t, res.Reason, "not judged because steps were left out")
			}
		})
	}
}

func TestRequirementLister(t *testing.T) {
	_, err := NewRequirementLister(nil)
	assert.ErrorContains(t, err, "judge is nil")

	j := newJudge(map[string][]string{SchemaTaskCompletionTask: {`{"task": "t", "requirements": ["book it", "Book it.", "on Friday"]}`}})
	l, err := NewRequirementLister(j)
	require.NoError(t, err)
	got, err := l.ListRequirements(context.Background(), "Book it on Friday.")
	require.NoError(t, err)
	assert.Equal(t, []string{"book it", "on Friday"}, got.Requirements, "a repeated requirement is kept once")
	assert.Equal(t, 1, got.Usage.LLMCalls)

	got, err = l.ListRequirements(context.Background(), "  ")
	require.NoError(t, err)
	assert.Empty(t, got.Requirements)
	assert.Len(t, j.requests(), 1, "a blank request makes no call")
}
