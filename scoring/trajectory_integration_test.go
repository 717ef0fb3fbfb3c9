package scoring_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/openai"
	"github.com/llm-eval/llm_eval/scoring/scorers"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
	"github.com/llm-eval/llm_eval/scoring/taskcompletion"
	"github.com/llm-eval/llm_eval/scoring/tooluse"
)

// TestIntegrationTrajectoryScorers scores the hand-made agent runs of
// testdata/judge/cases/agent_runs.jsonl over HTTP with the fake judge's default
// replies (string heuristics, not judgements): every step's request and
// reply round-trips through the OpenAI client, and each run gets the label
// those heuristics imply.
func TestIntegrationTrajectoryScorers(t *testing.T) {
	cases := loadCases(t, "agent_runs.jsonl")
	want := map[string][]scoring.Label{
		// weather, rescheduling, loop, no tools, shell
		scoring.TaskCompletion: {scoring.LabelPass, scoring.LabelPass, scoring.LabelPass, scoring.LabelPass, scoring.LabelPass},
		scoring.ToolUse:        {scoring.LabelPass, scoring.LabelPass, scoring.LabelFail, scoring.LabelNotScorable, scoring.LabelPass},
	}
	for _, mode := range []openai.StructuredOutputs{openai.StructuredOutputsJSONSchema, openai.StructuredOutputsOff} {
		for _, name := range scorers.TrajectoryNames() {
			t.Run(name+"/"+string(mode), func(t *testing.T) {
				srv := scoringtest.New(t)
				j, err := openai.NewJudge(openai.Config{BaseURL: srv.URL, Model: "judge-model", HTTPClient: srv.Client(), StructuredOutputs: mode})
				require.NoError(t, err)
				s, err := scorers.New(name, j, scoring.Options{})
				require.NoError(t, err)
				for i, c := range cases {
					res := s.Score(context.Background(), c)
					require.NoError(t, res.Err, "run %d (%s)", i, c.Metadata["run"])
					assert.Equal(t, want[name][i], res.Label, "run %d (%s): %s", i, c.Metadata["run"], res.Reason)
					assert.NotEmpty(t, res.Reason)
				}
				for _, call := range srv.Calls() {
					assert.Contains(t, []string{taskcompletion.SchemaTask, taskcompletion.SchemaVerdicts,
						tooluse.SchemaVerdicts, scoring.SchemaReason}, call.Step)
				}
			})
		}
	}

	// The loop's tool_use verdicts: the fake judge compares arguments as
	// text, so it calls the exact repeats (2 and 4) the wrong tool but not
	// call 3, whose JSON keys come in another order; and the date
	// 2027-03-12 of every search is not in the request.
	srv := scoringtest.New(t)
	j, err := openai.NewJudge(openai.Config{BaseURL: srv.URL, Model: "judge-model", HTTPClient: srv.Client()})
	require.NoError(t, err)
	s, err := scorers.New(scoring.ToolUse, j, scoring.Options{ReasonMode: scoring.ReasonSummary})
	require.NoError(t, err)
	res := s.Score(context.Background(), cases[2])
	require.NoError(t, res.Err)
	v := res.Steps.Analyze.(tooluse.Verdicts).Verdicts
	require.Len(t, v, 4)
	assert.Equal(t, []string{"yes", "no", "yes", "no"}, []string{v[0].RightTool, v[1].RightTool, v[2].RightTool, v[3].RightTool})
	assert.Equal(t, "no", v[0].ArgumentsSupported)
	assert.Equal(t, 0.0, res.Score)
	assert.Equal(t, scoring.LabelFail, res.Label)
}
