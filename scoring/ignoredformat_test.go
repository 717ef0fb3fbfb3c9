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
// OpenAI-compatible endpoint does, in every structured_outputs mode: the
// prompt carries the schema, so every result must be the one the same
// fake gives when it honours the format. The log line per scorer and mode
// is the measurement docs/providers.md cites.
func TestRepliesIgnoringResponseFormatParse(t *testing.T) {
	modes := []openai.StructuredOutputs{openai.StructuredOutputsAuto, openai.StructuredOutputsJSONSchema, openai.StructuredOutputsJSONObject, openai.StructuredOutputsOff}
	for _, sc := range costScorers() {
		if sc.name == scoring.Checks {
			continue // calls no judge
		}
		cases := loadCases(t, sc.file)[:ignoredFormatCases]
		for _, mode := range modes {
			t.Run(sc.name+"/"+string(mode), func(t *testing.T) {
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
					return out
				}
				honoured, ignored := score(false), score(true)
				parsed := 0
				for i := range cases {
					require.NotEqual(t, scoring.LabelError, honoured[i].Label, "case %d with the format honoured: %v", i, honoured[i].Err)
					if ignored[i].Label != scoring.LabelError {
						parsed++
					}
					assert.Equal(t, honoured[i].Label, ignored[i].Label, "case %d: %v", i, ignored[i].Err)
					assert.Equal(t, fmt.Sprint(honoured[i].Score), fmt.Sprint(ignored[i].Score), "case %d", i)
				}
				t.Logf("response_format ignored: %d of %d evaluations parsed", parsed, len(cases))
			})
		}
	}
}
