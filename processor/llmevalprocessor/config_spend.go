package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/guard"
)

// PriceConfig is what one model's tokens cost, per million tokens, in the
// currency the budget is written in.
type PriceConfig struct {
	Prompt     float64 `mapstructure:"prompt"`
	Completion float64 `mapstructure:"completion"`
}

// BudgetConfig caps the money the judge may spend per hour or per day.
type BudgetConfig struct {
	// Amount is the money per period, in the currency of judge.prices.
	Amount float64 `mapstructure:"amount"`
	// Period is hour or day; periods start on the hour or at midnight UTC.
	Period string `mapstructure:"period"`
}

// Budget periods.
const (
	budgetHour = "hour"
	budgetDay  = "day"
)

// price is the judge model's price, nil when judge.prices has none.
func (jc *JudgeConfig) price() *guard.Price {
	p, ok := jc.Prices[jc.model()]
	if !ok {
		return nil
	}
	return &guard.Price{Prompt: p.Prompt, Completion: p.Completion}
}

// period is the budget period as a duration.
func (b *BudgetConfig) period() time.Duration {
	if b.Period == budgetHour {
		return guard.BudgetHour
	}
	return guard.BudgetDay
}

// validateSpend checks judge.prices and judge.budget; each error names its key.
func (jc *JudgeConfig) validateSpend() []error {
	var errs []error
	for _, model := range slices.Sorted(maps.Keys(jc.Prices)) {
		p := jc.Prices[model]
		if strings.TrimSpace(model) == "" {
			errs = append(errs, fmt.Errorf("prices: a model name is empty"))
		}
		for key, v := range map[string]float64{"prompt": p.Prompt, "completion": p.Completion} {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				errs = append(errs, fmt.Errorf("prices::%s::%s: must be a finite number, 0 or more, got %v", model, key, v))
			}
		}
	}
	b := jc.Budget
	if b == nil {
		return errs
	}
	if !(b.Amount > 0) || math.IsInf(b.Amount, 0) {
		errs = append(errs, fmt.Errorf("budget::amount: must be a positive number (money per %s), got %v", b.Period, b.Amount))
	}
	switch b.Period {
	case budgetHour, budgetDay:
	default:
		errs = append(errs, fmt.Errorf("budget::period: must be hour or day, got %q", b.Period))
	}
	if jc.price() == nil {
		errs = append(errs, fmt.Errorf("budget: judge.prices has no price for the judge model %q, so its spend cannot be counted", jc.model()))
	}
	return errs
}

// withBudget puts judge.budget in front of judge; without a budget it
// returns judge as it is.
func withBudget(jc JudgeConfig, judge scoring.Judge, now func() time.Time) (scoring.Judge, error) {
	b := jc.Budget
	if b == nil {
		return judge, nil
	}
	price := jc.price()
	if price == nil {
		return nil, fmt.Errorf("judge budget: no price for the judge model %q", jc.model())
	}
	budget, err := guard.NewBudget(judge, guard.BudgetConfig{Amount: b.Amount, Period: b.period(), Price: *price,
		MaxCompletionTokens: jc.MaxTokens, Now: now})
	if err != nil {
		return nil, fmt.Errorf("judge budget: %w", err)
	}
	return budget, nil
}
