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
	"github.com/llm-eval/llm_eval/scoring/criteria"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

func TestLoadCriteriaConfig(t *testing.T) {
	cm := resolveConfig(t, filepath.Join("testdata", "criteria.yaml"))

	polite := defaultScorerConfig("politeness")
	polite.Criteria = "The response is polite and never blames the user."
	polite.Threshold = ptr(0.7)
	grounded := defaultScorerConfig("grounded_steps")
	grounded.Criteria = "Every step the response gives is backed by the context."
	grounded.Steps = []string{"List the steps in the response.", "Find each step in the context."}
	grounded.Fields = []string{"input", "context"}
	grounded.Verdict = "binary"
	grounded.ReasonMode = "summary"
	two := createDefaultConfig().(*Config)
	two.Judge.ClientConfig.Endpoint, two.Judge.Model = "http://j/v1", "m"
	two.Scorers = []ScorerConfig{defaultScorerConfig(scoring.Bias), polite, grounded}

	tests := []struct {
		name    string
		want    *Config
		wantErr string
	}{
		{name: "two_criteria", want: two},
		{name: "criteria_missing", wantErr: `scorers::3: criteria: must be set: "politeness" is not a built-in scorer`},
		{name: "criteria_bad_field", wantErr: `scorers::0: fields: unknown field "tools"`},
		{name: "criteria_bad_verdict", wantErr: `scorers::0: verdict: unknown verdict "stars"`},
		{name: "criteria_bad_name", wantErr: `scorers::0: name: "Tone Check" must be lowercase`},
		{name: "criteria_blank_step", wantErr: "scorers::0: steps: step 2 is empty"},
		{name: "criteria_on_builtin", wantErr: `scorers::0: criteria: only custom criteria scorers take criteria`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			sub, err := cm.Sub(component.NewIDWithName(metadata.Type, tt.name).String())
			require.NoError(t, err)
			err = sub.Unmarshal(cfg)
			if err == nil {
				err = confmap.Validate(cfg)
			}
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg)
		})
	}
}

// TestCriteriaScorersSideBySide runs two criteria scorers next to a
// built-in one through the real judge construction: each result is an
// evaluation event named after its scorer, and each asked its own prompt.
func TestCriteriaScorersSideBySide(t *testing.T) {
	judge := scoringtest.New(t)
	cfg := testConfig(scoring.Bias)
	polite := defaultScorerConfig("politeness")
	polite.Criteria = "The response is polite."
	polite.IncludeReason = false
	onTopic := defaultScorerConfig("on_topic")
	onTopic.Criteria = "The response answers the question asked."
	onTopic.Verdict = string(criteria.Binary)
	onTopic.ReasonMode = string(scoring.ReasonSummary)
	cfg.Scorers = append(cfg.Scorers, polite, onTopic)
	cfg.Judge.ClientConfig.Endpoint = judge.URL
	h, _ := judgeHarness(t, cfg)

	b := newBatch()
	id := b.generation(randomTraceID(), "Where is my parcel?", "It left the depot this morning.")
	h.consume(b.td)
	h.waitSpans(1)

	byID, _ := sinkSpans(h.sink)
	events := evaluationEvents(byID[id].span)
	require.Len(t, events, 3)
	for _, name := range []string{"politeness", "on_topic"} {
		require.Contains(t, events, name)
		assert.Equal(t, "pass", mustStr(t, events[name], evalconv.AttrScoreLabel), name)
		assert.Equal(t, 1.0, mustDouble(t, events[name], evalconv.AttrScoreValue), name)
	}
	steps := map[string]int{}
	for _, c := range judge.Calls() {
		steps[c.Step]++
	}
	assert.Equal(t, 1, steps[criteria.SchemaScore], "politeness: one call, no reason")
	assert.Equal(t, 1, steps[criteria.SchemaBinary], "on_topic: one call, summary reason")
}
