package guard

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
)

// billingJudge answers every call with a usage it draws at random within
// what the call can really cost (prompt between a quarter of its bytes and
// all of them, reply up to maxReply tokens), after a short delay so that
// calls overlap, and adds up what it billed.
type billingJudge struct {
	price    Price
	maxReply int
	delay    time.Duration
	noUsage  bool

	mu     sync.Mutex
	billed float64
	calls  int
}

func (j *billingJudge) Complete(ctx context.Context, req scoring.Request) (scoring.Response, error) {
	time.Sleep(j.delay)
	bytes := 0
	for _, m := range req.Messages {
		bytes += len(m.Content)
	}
	resp := scoring.Response{Content: "{}", PromptTokens: bytes/4 + rand.IntN(bytes-bytes/4+1), CompletionTokens: 1 + rand.IntN(j.maxReply)}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.calls++
	j.billed += j.price.Cost(resp.PromptTokens, resp.CompletionTokens)
	if j.noUsage {
		resp.PromptTokens, resp.CompletionTokens = 0, 0
	}
	return resp, nil
}

func budgetRequest(n int) scoring.Request {
	return scoring.Request{Step: "analyze", Messages: []scoring.Message{
		{Role: "system", Content: "You judge."}, {Role: "user", Content: strings.Repeat("x", n)},
	}}
}

// TestBudgetNeverOverrun: many callers at once spend a budget down; what
// the judge billed must never pass it, and the budget must have been used,
// not refused early: what is left is less than two calls' worst case.
func TestBudgetNeverOverrun(t *testing.T) {
	price := Price{Prompt: 2.5, Completion: 10} // per million tokens
	for _, tt := range []struct {
		name    string
		noUsage bool
	}{{"usage reported", false}, {"no usage reported", true}} {
		t.Run(tt.name, func(t *testing.T) {
			judge := &billingJudge{price: price, maxReply: 300, delay: time.Millisecond, noUsage: tt.noUsage}
			clk := newGuardClock()
			const amount = 0.05
			b, err := NewBudget(judge, BudgetConfig{Amount: amount, Period: BudgetHour, Price: price, MaxCompletionTokens: 300, Now: clk.Now})
			require.NoError(t, err)
			var refused atomic.Int64
			var wg sync.WaitGroup
			for w := range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 200 {
						_, err := b.Complete(context.Background(), budgetRequest(500+(w*31+i*17)%1500))
						if err != nil {
							var se *scoring.Error
							if assert.ErrorAs(t, err, &se) {
								assert.Equal(t, scoring.ErrorBudgetExhausted, se.Type)
								assert.True(t, se.NotSent)
								assert.ErrorIs(t, err, ErrBudgetExhausted)
							}
							refused.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			st := b.Stats()
			assert.LessOrEqual(t, judge.billed, amount, "the judge billed more than the budget")
			assert.LessOrEqual(t, st.Spent, amount)
			assert.Zero(t, st.Reserved, "no call in flight")
			assert.Positive(t, refused.Load(), "the budget ran out")
			assert.Equal(t, refused.Load(), st.Refused)
			worst := price.Cost(WorstCaseTokens(budgetRequest(2000)), 300)
			if !tt.noUsage {
				assert.Greater(t, judge.billed, amount-2*worst, "calls were refused while budget was left")
			}
		})
	}
}

func TestBudgetResumesNextPeriod(t *testing.T) {
	price := Price{Prompt: 1e6, Completion: 0} // one unit per prompt token
	judge := &billingJudge{price: price, maxReply: 1}
	clk := newGuardClock()
	clk.Advance(59 * time.Minute) // 00:59 UTC
	b, err := NewBudget(judge, BudgetConfig{Amount: 1000, Period: BudgetHour, Price: price, MaxCompletionTokens: 1, Now: clk.Now})
	require.NoError(t, err)
	req := budgetRequest(100) // worst case 126 prompt tokens
	n := 0
	for ; n < 100; n++ {
		if _, err := b.Complete(context.Background(), req); err != nil {
			require.ErrorIs(t, err, ErrBudgetExhausted)
			assert.Contains(t, err.Error(), "resumes at 2026-01-01T01:00:00Z")
			break
		}
	}
	require.Less(t, n, 100, "the budget ran out")
	callsBefore := judge.calls
	_, err = b.Complete(context.Background(), req)
	require.ErrorIs(t, err, ErrBudgetExhausted, "still refused in the same hour")
	assert.Equal(t, callsBefore, judge.calls, "a refused call is not sent")

	clk.Advance(time.Minute) // 01:00: a new period
	_, err = b.Complete(context.Background(), req)
	require.NoError(t, err)
	st := b.Stats()
	assert.Equal(t, time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC), st.PeriodStart)
	assert.Zero(t, st.Refused)
	assert.Equal(t, callsBefore+1, judge.calls)
}

func TestBudgetDayPeriodStartsAtMidnightUTC(t *testing.T) {
	clk := newGuardClock()
	clk.Advance(37*time.Hour + 5*time.Minute)
	b, err := NewBudget(&billingJudge{maxReply: 1}, BudgetConfig{Amount: 1, Period: BudgetDay, Now: clk.Now})
	require.NoError(t, err)
	assert.Equal(t, time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), b.Stats().PeriodStart)
}

func TestBudgetCallLargerThanBudget(t *testing.T) {
	b, err := NewBudget(&billingJudge{maxReply: 1}, BudgetConfig{Amount: 0.001, Period: BudgetDay, Price: Price{Prompt: 1000, Completion: 1000}})
	require.NoError(t, err)
	_, err = b.Complete(context.Background(), budgetRequest(1000))
	require.ErrorIs(t, err, ErrBudgetExhausted)
	assert.Contains(t, err.Error(), "more than the whole budget")
}

// A call the inner guards refused (NotSent) costs nothing.
func TestBudgetNotSentCostsNothing(t *testing.T) {
	inner := judgeFunc(func(context.Context, scoring.Request) (scoring.Response, error) {
		return scoring.Response{}, &scoring.Error{Type: scoring.ErrorCircuitOpen, NotSent: true, Err: errors.New("open")}
	})
	b, err := NewBudget(inner, BudgetConfig{Amount: 1, Period: BudgetHour, Price: Price{Prompt: 1, Completion: 1}})
	require.NoError(t, err)
	_, err = b.Complete(context.Background(), budgetRequest(10))
	require.Error(t, err)
	assert.Zero(t, b.Stats().Spent)
	assert.Zero(t, b.Stats().Reserved)
}

func TestNewBudgetValidates(t *testing.T) {
	for name, cfg := range map[string]BudgetConfig{
		"no amount":       {Period: BudgetHour},
		"negative amount": {Amount: -1, Period: BudgetHour},
		"bad period":      {Amount: 1, Period: time.Minute},
		"negative price":  {Amount: 1, Period: BudgetDay, Price: Price{Prompt: -1}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := NewBudget(&billingJudge{}, cfg)
			require.Error(t, err)
		})
	}
}

type judgeFunc func(context.Context, scoring.Request) (scoring.Response, error)

func (f judgeFunc) Complete(ctx context.Context, req scoring.Request) (scoring.Response, error) {
	return f(ctx, req)
}
