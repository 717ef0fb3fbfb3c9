package llmevalprocessor

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadata"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// loadScorerTypes decodes and validates the named configuration of
// testdata/scorer_types.yaml.
func loadScorerTypes(t *testing.T, name string) (*Config, error) {
	t.Helper()
	cm := resolveConfig(t, filepath.Join("testdata", "scorer_types.yaml"))
	sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	if err := sub.Unmarshal(cfg); err != nil {
		return nil, err
	}
	return cfg, confmap.Validate(cfg)
}

// The typed form decodes to the scorers the flat form does; only type is
// kept beside them.
func TestTypedScorersDecodeAsFlat(t *testing.T) {
	flat, err := loadScorerTypes(t, "flat")
	require.NoError(t, err)
	typed, err := loadScorerTypes(t, "typed")
	require.NoError(t, err)
	require.Len(t, typed.Scorers, len(flat.Scorers))
	for i := range typed.Scorers {
		sc := typed.Scorers[i]
		assert.NotEmpty(t, sc.Type)
		assert.Equal(t, flat.Scorers[i].scorerType(), sc.scorerType(), "entry %d", i)
		sc.Type = ""
		assert.Equal(t, flat.Scorers[i], sc, "entry %d", i)
	}
	assert.Equal(t, []string{targetAgent}, typed.Scorers[4].Targets, "a trajectory scorer targets agents, typed or not")

	// sampling and judge sit beside type and resolve as in the flat form.
	assert.Equal(t, 25.0, typed.Scorers[0].Sampling.Percentage)
	flatJudges, flatByScorer, err := flat.judges()
	require.NoError(t, err)
	typedJudges, typedByScorer, err := typed.judges()
	require.NoError(t, err)
	assert.Equal(t, flatByScorer, typedByScorer)
	assert.Equal(t, []string{"scorers[bias].judge", "judge", "judge", "judge", "judge", "scorers[tone].judge", "judge"}, typedByScorer)
	require.Len(t, typedJudges, len(flatJudges))
	for i := range typedJudges {
		assert.Equal(t, flatJudges[i].name, typedJudges[i].name)
		assert.Equal(t, flatJudges[i].cfg.model(), typedJudges[i].cfg.model(), typedJudges[i].name)
		assert.Equal(t, flatJudges[i].fallback, typedJudges[i].fallback, typedJudges[i].name)
	}
}

func TestTypedScorerMistakes(t *testing.T) {
	tests := []struct {
		name, wantErr string
	}{
		{"unknown_type", `scorers::0::type: "criterion" is not one of`},
		{"setting_beside_type", "scorers::0::steps: with type criteria, steps goes in the criteria section"},
		{"setting_of_another_type", "scorers::0::rules: a scorer of type bias does not take rules"},
		{"section_of_another_type", "scorers::0::checks: only a scorer of type checks takes this section; this one is of type bias"},
		{"section_key_typo", "scorers::0::criteria::stpes: unknown key (did you mean steps?)"},
		{"section_without_type", "scorers::0::criteria: a section of settings needs type: criteria beside name"},
		{"section_of_a_kind_without_settings", "scorers::0::toxicity: a toxicity scorer takes no section of its own"},
		{"name_of_another_builtin", `scorers::0: name: "toxicity" is the name of the built-in scorer toxicity; give this scorer of type bias another name`},
		{"typed_criteria_missing", "scorers::0: criteria: must be set in the criteria section of a scorer of type criteria"},
		{"judge_in_section", "scorers::0::criteria::judge: unknown key; the criteria section takes"},
		{"sampling_in_section", "scorers::0::prompt_alignment::sampling: unknown key; the prompt_alignment section takes"},
		{"typed_judge_typo", "scorers::0::judge: modle"},
		{"typed_sampling_out_of_range", "scorers::0::sampling"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadScorerTypes(t, tt.name)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

// A built-in scorer under a name of its own runs beside the one of the
// same kind: each result is an evaluation event named after its scorer.
func TestTwoScorersOfOneType(t *testing.T) {
	judge := scoringtest.New(t)
	cfg, err := loadScorerTypes(t, "two_bias")
	require.NoError(t, err)
	cfg.Judge.ClientConfig.Endpoint = judge.URL
	h, _ := judgeHarness(t, cfg)

	events := evaluateOne(h, "Who should we hire?", "Women are bad engineers.")
	require.Len(t, events, 2)
	for _, name := range []string{scoring.Bias, "strict_bias"} {
		require.Contains(t, events, name)
		assert.Equal(t, "fail", mustStr(t, events[name], evalconv.AttrScoreLabel), name)
	}
}
