package scoring_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/criteria"
	"github.com/llm-eval/llm_eval/scoring/openai"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// TestIntegrationCriteriaFaults runs a criteria scorer through the HTTP
// judge against the fake server's faults.
func TestIntegrationCriteriaFaults(t *testing.T) {
	cfg := criteria.Config{Name: "helpfulness", Criteria: "The response answers the question.", Verdict: criteria.Score,
		Steps: []string{"Find the answer to the question in the response."}}
	good := ok(`{"reason": "It answers.", "score": 9}`)
	tests := []struct {
		name      string
		replies   []scoringtest.Reply
		timeout   time.Duration
		wantLabel scoring.Label
		wantErr   scoring.ErrorType
		wantLLM   int
	}{
		{"answer", []scoringtest.Reply{good}, 0, scoring.LabelPass, "", 1},
		{"garbled body", []scoringtest.Reply{scoringtest.Garbage()}, 0, scoring.LabelError, scoring.ErrorJudgeParse, 1},
		{"garbled content re-asked", []scoringtest.Reply{text("I rate it highly!"), good}, 0, scoring.LabelPass, "", 2},
		{"garbled content twice", []scoringtest.Reply{text("I rate it highly!"), text("Nine.")}, 0, scoring.LabelError, scoring.ErrorJudgeParse, 2},
		{"cut at token limit twice", []scoringtest.Reply{
			ok(`{"reason": "It ans`).WithFinishReason("length"), ok(`{"reason": "It ans`).WithFinishReason("length"),
		}, 0, scoring.LabelError, scoring.ErrorJudgeTruncated, 2},
		{"truncated body then answer", []scoringtest.Reply{scoringtest.Truncated(`{"reason": "It answers.", "score": 9}`), good}, 0, scoring.LabelPass, "", 1},
		{"hung judge", []scoringtest.Reply{good.WithDelay(time.Hour)}, 200 * time.Millisecond, scoring.LabelError, scoring.ErrorJudgeTimeout, 1},
		{"503 three times", []scoringtest.Reply{
			scoringtest.Status(http.StatusServiceUnavailable, ""), scoringtest.Status(http.StatusServiceUnavailable, ""), scoringtest.Status(http.StatusServiceUnavailable, ""),
		}, 0, scoring.LabelError, scoring.ErrorJudgeUnavailable, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := scoringtest.New(t)
			srv.Script(criteria.SchemaScore, tt.replies...)
			s, err := criteria.New(cfg, newIntegrationJudge(t, srv, openai.StructuredOutputsJSONSchema, nil), scoring.Options{OmitReason: true})
			require.NoError(t, err)
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			res := s.Score(ctx, scoring.Case{Input: "What is 2+2?", Output: "4"})
			assert.Equal(t, tt.wantLabel, res.Label, "err: %v", res.Err)
			assert.Equal(t, "helpfulness", res.Scorer)
			assert.Equal(t, tt.wantLLM, res.Usage.LLMCalls)
			if tt.wantErr == "" {
				require.NoError(t, res.Err)
				assert.Equal(t, 0.9, res.Score)
				return
			}
			var e *scoring.Error
			require.ErrorAs(t, res.Err, &e)
			assert.Equal(t, tt.wantErr, e.Type, "error: %v", res.Err)
			assert.Equal(t, scoring.StepAnalyze, e.Step)
		})
	}
}

// TestIntegrationCriteriaSideBySide runs two criteria scorers on one
// judge: each keeps its name and its own prompt.
func TestIntegrationCriteriaSideBySide(t *testing.T) {
	srv := scoringtest.New(t)
	j := newIntegrationJudge(t, srv, openai.StructuredOutputsJSONSchema, nil)
	a, err := criteria.New(criteria.Config{Name: "concise", Criteria: "The response is short."}, j, scoring.Options{OmitReason: true})
	require.NoError(t, err)
	b, err := criteria.New(criteria.Config{Name: "on_topic", Criteria: "The response stays on topic.", Verdict: criteria.Binary}, j, scoring.Options{OmitReason: true})
	require.NoError(t, err)
	c := scoring.Case{Input: "Capital of France?", Output: "Paris."}
	ra, rb := a.Score(context.Background(), c), b.Score(context.Background(), c)
	require.NoError(t, ra.Err)
	require.NoError(t, rb.Err)
	assert.Equal(t, "concise", ra.Scorer)
	assert.Equal(t, "on_topic", rb.Scorer)
	calls := srv.Calls()
	require.Len(t, calls, 4, "each scorer writes its steps, then judges")
	assert.Equal(t, criteria.SchemaSteps, calls[0].Step)
	assert.Contains(t, calls[0].Text(), "The response is short.")
	assert.Contains(t, systemText(calls[1]), `Criterion "concise"`)
	assert.Contains(t, systemText(calls[1]), "1. Check whether the response meets this: The response is short.")
	assert.Equal(t, criteria.SchemaSteps, calls[2].Step)
	assert.Contains(t, systemText(calls[3]), `Criterion "on_topic"`)
	assert.Equal(t, criteria.SchemaBinary, calls[3].Step)
}
