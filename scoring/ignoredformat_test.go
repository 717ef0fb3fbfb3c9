package scoring_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/openai"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// ignoredFormatCases is how many samples of each scorer's fixture
// TestRepliesIgnoringResponseFormatParse scores per mode.
const ignoredFormatCases = 5

// TestRepliesIgnoringResponseFormatParse scores the fixtures of every judge
// scorer against a fake that ignores response_format, as Anthropic's
// OpenAI-compatible endpoint does, in every structured_outputs mode. In
// auto, json_object and off the prompt ends up carrying the schema (auto
// steps down on the first reply that is not the JSON object asked for),
// so every result must be the one the same fake gives when it honours the
// format. A fixed json_schema trusts the endpoint to enforce it and never
// spells the schema out: against this fake its evaluations fail with
// judge_parse_error, which docs/providers.md warns about. The log line per
// scorer and mode is the measurement docs/providers.md cites.
func TestRepliesIgnoringResponseFormatParse(t *testing.T) {
	modes := []openai.StructuredOutputs{openai.StructuredOutputsAuto, openai.StructuredOutputsJSONSchema, openai.StructuredOutputsJSONObject, openai.StructuredOutputsOff}
	for _, sc := range costScorers() {
		if sc.name == scoring.Checks {
			continue // calls no judge
		}
		cases := loadCases(t, sc.file)[:ignoredFormatCases]
		for _, mode := range modes {
			t.Run(sc.name+"/"+string(mode), func(t *testing.T) {
				calls := map[bool]int{}
				score := func(ignore bool) []scoring.Result {
					srv := scoringtest.New(t)
					if ignore {
						srv.IgnoreResponseFormat()
					}
					j, err := openai.NewJudge(openai.Config{BaseURL: srv.URL, Model: "judge-model", HTTPClient: srv.Client(), StructuredOutputs: mode})
					require.NoError(t, err)
					s, err := sc.build(j, scoring.Options{ReasonMode: scoring.ReasonLLM})
					require.NoError(t, err)
					out := make([]scoring.Result, len(cases))
					for i, c := range cases {
						out[i] = s.Score(context.Background(), c)
					}
					calls[ignore] = len(srv.Calls())
					return out
				}
				honoured, ignored := score(false), score(true)
				parsed := 0
				for i := range cases {
					require.NotEqual(t, scoring.LabelError, honoured[i].Label, "case %d with the format honoured: %v", i, honoured[i].Err)
					if ignored[i].Label != scoring.LabelError {
						parsed++
					}
					if mode == openai.StructuredOutputsJSONSchema {
						if honoured[i].Scored() {
							var se *scoring.Error
							require.ErrorAs(t, ignored[i].Err, &se, "case %d", i)
							assert.Equal(t, scoring.ErrorJudgeParse, se.Type, "case %d", i)
						}
						continue
					}
					assert.Equal(t, honoured[i].Label, ignored[i].Label, "case %d: %v", i, ignored[i].Err)
					assert.Equal(t, fmt.Sprint(honoured[i].Score), fmt.Sprint(ignored[i].Score), "case %d", i)
				}
				t.Logf("response_format ignored: %d of %d evaluations parsed, %d judge calls (%d when honoured)", parsed, len(cases), calls[true], calls[false])
			})
		}
	}
}
