package scoring_test

import (
	"context"
	"errors"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/checks"
	"github.com/llm-eval/llm_eval/scoring/guard"
	"github.com/llm-eval/llm_eval/scoring/openai"
	"github.com/llm-eval/llm_eval/scoring/scorers"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

var promptVersion = regexp.MustCompile(`^[0-9a-f]{12}$`)

// TestResultsSayWhoJudged: every judged result names the judge model that
// answered and its scorer's prompt version; the version is the scorer's
// own (it differs between scorers) and the same on every result.
func TestResultsSayWhoJudged(t *testing.T) {
	srv := scoringtest.New(t)
	judge := newIntegrationJudge(t, srv, openai.StructuredOutputsAuto, nil)
	versions := map[string]string{}
	for _, name := range []string{scoring.Bias, scoring.Hallucination, scoring.PromptAlignment} {
		s, err := scorers.New(name, judge, scoring.Options{})
		require.NoError(t, err)
		c := fixtureFor(t, name).c
		first, second := s.Score(context.Background(), c), s.Score(context.Background(), c)
		require.True(t, first.Scored(), "%s: %v", name, first.Err)
		assert.Equal(t, "judge-model", first.JudgeModel)
		assert.Regexp(t, promptVersion, first.PromptVersion)
		assert.Equal(t, first.PromptVersion, second.PromptVersion)
		versions[name] = first.PromptVersion
	}
	assert.Len(t, map[string]bool{versions[scoring.Bias]: true, versions[scoring.Hallucination]: true, versions[scoring.PromptAlignment]: true}, 3,
		"each scorer has its own prompts")

	maxWords := 300
	checks, err := scorers.NewBuilder(judge).Build(scorers.Spec{Name: scoring.Checks, Rules: []checks.Rule{{Type: "words", Max: &maxWords}}})
	require.NoError(t, err)
	res := checks.Score(context.Background(), scoring.Case{Output: "x"})
	require.True(t, res.Scored())
	assert.Empty(t, res.PromptVersion, "checks sends no prompt")
	assert.Empty(t, res.JudgeModel)
}

// TestResultNamesBothJudgesOfAFallback: an evaluation whose first call
// the primary answers and whose later calls the fallback answers (the
// primary's circuit opened in between) names both models.
func TestResultNamesBothJudgesOfAFallback(t *testing.T) {
	primarySrv, fallbackSrv := scoringtest.New(t), scoringtest.New(t)
	primary := newIntegrationJudge(t, primarySrv, openai.StructuredOutputsAuto, func(c *openai.Config) { c.Model = "big-judge" })
	secondary := newIntegrationJudge(t, fallbackSrv, openai.StructuredOutputsAuto, func(c *openai.Config) { c.Model = "small-judge" })
	calls := 0
	// The primary's circuit is open from its second call on.
	gate := judgeFunc(func(ctx context.Context, req scoring.Request) (scoring.Response, error) {
		calls++
		if calls > 1 {
			return scoring.Response{}, &scoring.Error{Type: scoring.ErrorCircuitOpen, NotSent: true, Err: errors.New("open")}
		}
		return primary.Complete(ctx, req)
	})
	s, err := scorers.New(scoring.Bias, guard.NewFallback(gate, secondary, nil), scoring.Options{})
	require.NoError(t, err)
	res := s.Score(context.Background(), fixtureFor(t, scoring.Bias).c)
	require.True(t, res.Scored(), "%v", res.Err)
	assert.Equal(t, "big-judge,small-judge", res.JudgeModel)
	assert.Len(t, primarySrv.Calls(), 1)
	assert.NotEmpty(t, fallbackSrv.Calls())
}

type judgeFunc func(context.Context, scoring.Request) (scoring.Response, error)

func (f judgeFunc) Complete(ctx context.Context, req scoring.Request) (scoring.Response, error) {
	return f(ctx, req)
}
