package llmevalprocessor

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

func TestSpendSettingsValidated(t *testing.T) {
	price := map[string]any{"m": map[string]any{"prompt": 0.15, "completion": 0.6}}
	tests := []struct {
		name  string
		judge map[string]any
		want  string
	}{
		{"negative price", map[string]any{"model": "m", "prices": map[string]any{"m": map[string]any{"prompt": -1}}}, "prices::m::prompt: must be a finite number, 0 or more"},
		{"budget without amount", map[string]any{"model": "m", "prices": price, "budget": map[string]any{"period": "day"}}, "budget::amount: must be a positive number"},
		{"budget per week", map[string]any{"model": "m", "prices": price, "budget": map[string]any{"amount": 10, "period": "week"}}, `budget::period: must be hour or day, got "week"`},
		{"budget without a price", map[string]any{"model": "other", "prices": price, "budget": map[string]any{"amount": 10, "period": "day"}}, `budget: judge.prices has no price for the judge model "other"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadJudge(t, tt.judge)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	cfg, err := loadJudge(t, map[string]any{"model": "m", "prices": price, "budget": map[string]any{"amount": 10, "period": "hour"}})
	require.NoError(t, err)
	assert.Equal(t, 0.6, cfg.Judge.price().Completion)
}

// fixedUsage answers every call as the default responder does, reporting
// promptTokens and completionTokens.
func fixedUsage(promptTokens, completionTokens int) func(scoringtest.Call) scoringtest.Reply {
	return func(c scoringtest.Call) scoringtest.Reply {
		return scoringtest.DefaultReply(c).WithUsage(promptTokens, completionTokens)
	}
}

// TestJudgeCostMetric also checks the provenance of judged results.
func TestJudgeCostMetric(t *testing.T) {
	srv := scoringtest.New(t)
	srv.Handle(fixedUsage(1000, 100))
	cfg := testConfig(scoring.Bias, scoring.Toxicity)
	cfg.Judge.ClientConfig.Endpoint = srv.URL
	cfg.Judge.Prices = map[string]PriceConfig{"judge-model": {Prompt: 2.5, Completion: 10}, "other": {Prompt: 100}}
	h, _ := judgeHarness(t, cfg)
	b := newBatch()
	b.generation(randomTraceID(), "Who should we hire?", "Women are bad engineers. Hire the best.")
	h.consume(b.td)
	h.waitSpans(1)
	h.waitIdle()

	// Every judged result says who judged.
	byID, _ := sinkSpans(h.sink)
	require.Len(t, byID, 1)
	for _, rec := range byID {
		events := evaluationEvents(rec.span)
		require.Len(t, events, 2)
		for name, ev := range events {
			assert.Equal(t, "judge-model", mustStr(t, ev, evalconv.AttrJudgeModel), name)
			assert.Regexp(t, `^[0-9a-f]{12}$`, mustStr(t, ev, evalconv.AttrPromptVersion), name)
		}
		assert.NotEqual(t, mustStr(t, events[scoring.Bias], evalconv.AttrPromptVersion), mustStr(t, events[scoring.Toxicity], evalconv.AttrPromptVersion))
	}

	perCall := (1000*2.5 + 100*10) / 1e6
	calls := map[string]int64{}
	for _, s := range []string{scoring.Bias, scoring.Toxicity} {
		calls[s] = sumOf(t, h.tel, "otelcol_processor_llm_eval_judge_calls", attribute.String("scorer", s))
		require.Positive(t, calls[s])
		got := pointsSum[float64](t, h.tel, "otelcol_processor_llm_eval_judge_cost", attribute.String("scorer", s), attribute.String("judge_model", "judge-model"))
		assert.InDelta(t, float64(calls[s])*perCall, got, 1e-12, "scorer %s", s)
	}
	assert.InDelta(t, float64(len(srv.Calls()))*perCall, pointsSum[float64](t, h.tel, "otelcol_processor_llm_eval_judge_cost"), 1e-12,
		"every call the judge received is priced once")
}

// TestBudgetNeverOverrunThroughTheProcessor sends many generations through
// a processor whose judge has a small budget. What the judge billed (the
// usage it reported, at the configured price) must stay within the
// budget, and the evaluations refused must say budget_exhausted.
func TestBudgetNeverOverrunThroughTheProcessor(t *testing.T) {
	srv := scoringtest.New(t)
	srv.Handle(fixedUsage(1500, 200))
	price := PriceConfig{Prompt: 2.5, Completion: 10}
	perCall := (1500*price.Prompt + 200*price.Completion) / 1e6 // 0.00575
	const amount = 0.1                                          // about 17 calls
	cfg := testConfig(scoring.Bias, scoring.Toxicity)
	cfg.Judge.ClientConfig.Endpoint = srv.URL
	cfg.Judge.MaxTokens = 400
	cfg.Judge.Prices = map[string]PriceConfig{"judge-model": price}
	cfg.Judge.Budget = &BudgetConfig{Amount: amount, Period: budgetDay}
	cfg.Cache.Enabled = false
	h, _ := judgeHarness(t, cfg)
	const spans = 30
	b := newBatch()
	for i := range spans {
		b.generation(randomTraceID(), fmt.Sprintf("Question %d about the plan?", i), fmt.Sprintf("Answer %d: the plan is good and works.", i))
	}
	h.consume(b.td)
	h.waitSpans(spans)
	h.waitIdle()

	billed := float64(len(srv.Calls())) * perCall
	assert.LessOrEqual(t, billed, amount, "the judge billed more than the budget")
	assert.Positive(t, len(srv.Calls()))
	byID, _ := sinkSpans(h.sink)
	exhausted := 0
	for _, s := range byID {
		for _, ev := range evaluationEvents(s.span) {
			if v, ok := ev.Get(evalconv.AttrErrorType); ok && v.Str() == string(scoring.ErrorBudgetExhausted) {
				exhausted++
			}
		}
	}
	assert.Positive(t, exhausted, "evaluations past the budget say budget_exhausted")
	assert.EqualValues(t, exhausted, sumOf(t, h.tel, "otelcol_processor_llm_eval_evaluations", attribute.String("error_type", string(scoring.ErrorBudgetExhausted))))
	assert.InDelta(t, billed, pointsSum[float64](t, h.tel, "otelcol_processor_llm_eval_judge_cost"), 1e-9, "judge_cost counts what was billed")
}
