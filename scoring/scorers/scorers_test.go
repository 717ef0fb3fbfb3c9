package scorers_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/checks"
	"github.com/llm-eval/llm_eval/scoring/criteria"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
	"github.com/llm-eval/llm_eval/scoring/scorers"
	"github.com/llm-eval/llm_eval/scoring/taskcompletion"
)

func TestNames(t *testing.T) {
	assert.Equal(t, []string{scoring.Bias, scoring.Hallucination, scoring.PromptAlignment, scoring.TaskCompletion, scoring.ToolUse,
		scoring.AnswerRelevancy, scoring.ContextRelevance, scoring.Toxicity,
		scoring.ConversationCompleteness, scoring.KnowledgeRetention, scoring.RoleAdherence, scoring.ConversationRelevancy}, scorers.Names())
	assert.Equal(t, []string{scoring.ConversationCompleteness, scoring.KnowledgeRetention, scoring.RoleAdherence, scoring.ConversationRelevancy}, scorers.ConversationNames())
	assert.Equal(t, []string{scoring.Hallucination, scoring.ContextRelevance}, scorers.ContextNames())
	assert.Equal(t, []string{scoring.TaskCompletion, scoring.ToolUse}, scorers.TrajectoryNames())
}

// TestConfiguredScorersCannotTakeBuiltInNames checks that a criteria or
// checks scorer named as a built-in scorer or a kind of scorer is
// rejected, naming the key: telemetry could not tell them apart.
func TestConfiguredScorersCannotTakeBuiltInNames(t *testing.T) {
	b := scorers.NewBuilder(testkit.NewJudge(nil))
	for _, spec := range []scorers.Spec{
		{Name: scoring.Bias, Criteria: &criteria.Config{Criteria: "c"}},
		{Name: scoring.Criteria, Criteria: &criteria.Config{Criteria: "c"}},
		{Name: scoring.Checks, Criteria: &criteria.Config{Criteria: "c"}},
		{Name: scoring.TaskCompletion, Rules: []checks.Rule{{Type: checks.RuleNoPII}}},
		{Name: scoring.Criteria, Rules: []checks.Rule{{Type: checks.RuleNoPII}}},
	} {
		want := `name: "` + spec.Name + `" is a built-in scorer name`
		_, err := b.Build(spec)
		assert.ErrorContains(t, err, want, spec.Name)
		assert.ErrorContains(t, spec.Validate(), want, spec.Name)
	}
}

func TestBuild(t *testing.T) {
	b := scorers.NewBuilder(testkit.NewJudge(nil))
	for _, tt := range []struct {
		spec    scorers.Spec
		name    string
		wantErr string
	}{
		{scorers.Spec{Name: scoring.Hallucination}, scoring.Hallucination, ""},
		{scorers.Spec{Name: scoring.ConversationRelevancy}, scoring.ConversationRelevancy, ""},
		{scorers.Spec{Name: scoring.KnowledgeRetention, Options: scoring.Options{MaxTurns: 1}}, "", "max turns must be at least 2"},
		{scorers.Spec{Name: scoring.ConversationRelevancy, Options: scoring.Options{ConversationWindow: -1}}, "", "conversation window must not be negative"},
		{scorers.Spec{Name: "tone", Criteria: &criteria.Config{Criteria: "Polite."}}, "tone", ""},
		{scorers.Spec{Name: scoring.Checks, Rules: []checks.Rule{{Type: checks.RuleJSONValid}}}, scoring.Checks, ""},
		{scorers.Spec{Name: "json_only", Rules: []checks.Rule{{Type: checks.RuleJSONValid}}}, "json_only", ""},
		{scorers.Spec{Name: scoring.Checks}, "", "rules: the checks scorer needs at least one rule"},
		{scorers.Spec{Name: "sentiment"}, "", `unknown scorer "sentiment"`},
		{scorers.Spec{Name: "tone", Criteria: &criteria.Config{}}, "", "criteria: must be set"},
		{scorers.Spec{Name: scoring.Bias, Options: scoring.Options{Scale: -1}}, "", "scale must be a positive number"},
	} {
		s, err := b.Build(tt.spec)
		if tt.wantErr != "" {
			assert.ErrorContains(t, err, tt.wantErr, tt.spec.Name)
			continue
		}
		require.NoError(t, err, tt.spec.Name)
		assert.Equal(t, tt.name, s.Name())
		assert.NoError(t, tt.spec.Validate(), tt.spec.Name)
	}
	_, err := scorers.NewBuilder(nil).Build(scorers.Spec{Name: scoring.Bias})
	assert.ErrorContains(t, err, "judge is nil", "a builder without a judge builds checks only")
}

// TestBuildSharesRequirements checks that the task_completion scorers of
// one Builder share one requirement lister with its cache: a request is
// split into requirements once, whichever scorer and run asks.
func TestBuildSharesRequirements(t *testing.T) {
	j := testkit.NewJudge(testkit.TaskReplies("yes"))
	b := scorers.NewBuilder(j)
	var built []scoring.Scorer
	for range 2 {
		s, err := b.Build(scorers.Spec{Name: scoring.TaskCompletion, Options: scoring.Options{OmitReason: true}})
		require.NoError(t, err)
		built = append(built, s)
	}
	for _, s := range append(built, built...) {
		res := s.Score(context.Background(), testkit.AgentCase())
		require.NoError(t, res.Err)
	}
	schemas := j.Schemas()
	assert.Equal(t, 1, count(schemas, taskcompletion.SchemaTask), "one requirements call: %v", schemas)
	assert.Equal(t, 4, count(schemas, taskcompletion.SchemaVerdicts), "every run is judged: %v", schemas)

	// New builds a scorer of its own, which asks every time.
	s, err := scorers.New(scoring.TaskCompletion, j, scoring.Options{OmitReason: true})
	require.NoError(t, err)
	for range 2 {
		require.NoError(t, s.Score(context.Background(), testkit.AgentCase()).Err)
	}
	assert.Equal(t, 3, count(j.Schemas(), taskcompletion.SchemaTask))
}

func count(list []string, v string) int {
	n := 0
	for _, s := range list {
		if s == v {
			n++
		}
	}
	return n
}

// TestEveryPromptHasADemoReply checks that the offline demo judge answers
// every prompt of every scorer with an object holding the keys its schema
// requires.
func TestEveryPromptHasADemoReply(t *testing.T) {
	req := scoring.Request{Messages: []scoring.Message{{Role: "user", Content: "<<<OUTPUT\n\"Hello.\"\nOUTPUT>>>"}}}
	seen := 0
	for _, set := range scorers.Prompts() {
		for _, p := range set.All() {
			v, ok := scorers.DemoReply(p.Schema.Name, req)
			require.True(t, ok, p.Schema.Name)
			var schema struct {
				Required []string `json:"required"`
			}
			require.NoError(t, json.Unmarshal(p.Schema.Schema, &schema))
			b, err := json.Marshal(v)
			require.NoError(t, err)
			var reply map[string]any
			require.NoError(t, json.Unmarshal(b, &reply), p.Schema.Name)
			for _, k := range schema.Required {
				assert.Contains(t, reply, k, p.Schema.Name)
			}
			seen++
		}
	}
	assert.Equal(t, 2+2+1+2+1+2+1+1+3+3+2+2+8+3+1, seen, "every prompt of the scorers (reasons included), criteria and the split")
	_, ok := scorers.DemoReply("no_such_step", req)
	assert.False(t, ok)
}
