package llmevalprocessor

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/checks"
)

func loadFileConfig(t *testing.T, name string) (*Config, error) {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	err := resolveConfig(t, filepath.Join("testdata", name)).Unmarshal(cfg)
	return cfg, err
}

func TestChecksScorerConfig(t *testing.T) {
	cfg, err := loadFileConfig(t, "checks.yaml")
	require.NoError(t, err)
	require.NoError(t, confmap.Validate(cfg))
	require.Len(t, cfg.Scorers, 1)
	sc := cfg.Scorers[0]
	assert.Equal(t, scoring.Checks, sc.Name)
	require.Len(t, sc.Rules, 4)
	assert.Equal(t, checks.RuleJSONSchema, sc.Rules[0].Type)
	assert.True(t, sc.Rules[0].AllowCodeFence)
	assert.Equal(t, "object", sc.Rules[0].Schema["type"])
	assert.Equal(t, ptr(150), sc.Rules[1].Max)
	assert.Equal(t, `(?i)as an ai`, sc.Rules[2].Pattern)

	// The built scorer needs no judge call and scores the output as configured.
	js, err := newJudge(context.Background(), cfg, componenttest.NewNopHost(), componenttest.NewNopTelemetrySettings(), judgeHooks{})
	require.NoError(t, err)
	scorers := js.scorers
	require.Len(t, scorers, 1)
	assert.Equal(t, scoring.Checks, scorers[0].Name())
	res := scorers[0].Score(context.Background(), scoring.Case{Output: "```json\n{\"answer\": \"fine\"}\n```"})
	assert.Equal(t, scoring.LabelPass, res.Label)
	assert.InDelta(t, 1.0, res.Score, 1e-12)
	res = scorers[0].Score(context.Background(), scoring.Case{Output: "As an AI, I think {\"answer\": 1}"})
	assert.Equal(t, scoring.LabelPass, res.Label, "threshold 0.5: two of four rules pass")
	assert.InDelta(t, 0.5, res.Score, 1e-12)
	assert.Zero(t, res.Usage.LLMCalls)
}

func TestChecksScorerConfigErrorsNameTheKey(t *testing.T) {
	cfg, err := loadFileConfig(t, "checks_bad.yaml")
	require.NoError(t, err)
	err = confmap.Validate(cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "scorers::1: rules::0::pattern: error parsing regexp")

	tests := []struct {
		name string
		sc   ScorerConfig
		want string
	}{
		{"no rules", ScorerConfig{Name: scoring.Checks}, "scorers::0: rules: the checks scorer needs at least one rule"},
		{"unknown rule", ScorerConfig{Name: scoring.Checks, Rules: []checks.Rule{{Type: "words", Max: ptr(3)}, {Type: "tone"}}}, `scorers::0: rules::1::type: unknown rule type "tone"`},
		{"bad schema", ScorerConfig{Name: scoring.Checks, Rules: []checks.Rule{{Type: checks.RuleJSONSchema, Schema: map[string]any{"allOf": []any{}}}}}, "scorers::0: rules::0::schema: /allOf: unsupported keyword"},
		{"rules on a judge scorer", ScorerConfig{Name: scoring.Bias, Rules: []checks.Rule{{Type: checks.RuleNoPII}}}, `scorers::0: rules: only checks scorers take rules; "bias" is a built-in scorer`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.Judge.ClientConfig.Endpoint, cfg.Judge.Model = "http://judge.internal/v1", "m"
			sc := defaultScorerConfig(tc.sc.Name)
			sc.Rules = tc.sc.Rules
			cfg.Scorers = []ScorerConfig{sc}
			err := confmap.Validate(cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestChecksRuleUnknownKeyFailsToLoad(t *testing.T) {
	conf := resolveConfig(t, filepath.Join("testdata", "checks.yaml"))
	m := conf.ToStringMap()
	m["scorers"].([]any)[0].(map[string]any)["rules"].([]any)[1].(map[string]any)["maximum"] = 3
	cfg := createDefaultConfig().(*Config)
	err := confmap.NewFromStringMap(m).Unmarshal(cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "maximum")
}
