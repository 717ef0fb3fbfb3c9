package guard

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/llm-eval/llm_eval/scoring"
)

// Price is what a model's tokens cost, in money per million tokens.
type Price struct {
	Prompt     float64
	Completion float64
}

// Cost is what prompt and completion tokens cost at p.
func (p Price) Cost(promptTokens, completionTokens int) float64 {
	return (float64(promptTokens)*p.Prompt + float64(completionTokens)*p.Completion) / 1e6
}

// Budget periods. A period starts on the hour or at midnight UTC.
const (
	BudgetHour = time.Hour
	BudgetDay  = 24 * time.Hour
)

// DefaultReserveCompletionTokens is the reply length a Budget reserves
// when MaxCompletionTokens is 0: without a cap on replies, a reply longer
// than this can take the spend past the budget.
const DefaultReserveCompletionTokens = 4096

// ErrBudgetExhausted is wrapped by the *Error (type ErrorBudgetExhausted)
// a Budget returns for a call it did not make.
var ErrBudgetExhausted = errors.New("judge budget exhausted")

// BudgetConfig configures a Budget.
type BudgetConfig struct {
	// Amount is the money the judge may spend per Period; it must be > 0.
	Amount float64
	// Period is BudgetHour or BudgetDay.
	Period time.Duration
	// Price is the judge model's price.
	Price Price
	// MaxCompletionTokens is the judge's cap on a reply (max_tokens), which
	// a call reserves; 0 reserves DefaultReserveCompletionTokens.
	MaxCompletionTokens int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// BudgetStats are a Budget's figures of the current period.
type BudgetStats struct {
	PeriodStart time.Time
	Spent       float64 // reported usage of finished calls, at Price
	Reserved    float64 // worst case of the calls in flight
	Refused     int64   // calls refused in this period
}

// Budget stops calling the judge once a period's money is spent, and lets
// calls through again when the next period starts. It never lets the
// spend pass Amount: before a call it reserves the call's worst case
// (every byte of the prompt a token, plus a few per message, and a reply
// of MaxCompletionTokens) and refuses the call when the spend, the calls
// in flight and this reservation would pass Amount. When the reply comes
// the reservation is replaced by the reported usage (by the reservation
// itself when the endpoint reports none). A refused call is an *Error of
// type ErrorBudgetExhausted with NotSent set. It is safe for concurrent
// use.
type Budget struct {
	next scoring.Judge
	cfg  BudgetConfig

	mu          sync.Mutex
	periodStart time.Time
	spent       float64
	reserved    float64
	inFlight    int
	refused     int64
}

// NewBudget returns a Budget in front of next.
func NewBudget(next scoring.Judge, cfg BudgetConfig) (*Budget, error) {
	if !(cfg.Amount > 0) || math.IsInf(cfg.Amount, 0) {
		return nil, fmt.Errorf("budget amount %v: must be a positive number", cfg.Amount)
	}
	if cfg.Period != BudgetHour && cfg.Period != BudgetDay {
		return nil, fmt.Errorf("budget period %v: must be an hour or a day", cfg.Period)
	}
	if cfg.Price.Prompt < 0 || cfg.Price.Completion < 0 {
		return nil, errors.New("budget price: must not be negative")
	}
	if cfg.MaxCompletionTokens <= 0 {
		cfg.MaxCompletionTokens = DefaultReserveCompletionTokens
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Budget{next: next, cfg: cfg}, nil
}

// Stats returns the figures of the current period.
func (b *Budget) Stats() BudgetStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll(b.cfg.Now())
	return BudgetStats{PeriodStart: b.periodStart, Spent: b.spent, Reserved: b.reserved, Refused: b.refused}
}

// Per-message tokens a chat template adds around each message's text
// (role markers, separators), and the bytes the judge adds to a prompt
// when it spells the schema out, counted in the worst case.
const (
	messageOverheadTokens  = 8
	schemaInstructionBytes = 160
)

// WorstCaseTokens is the prompt a request can cost at most: with a
// byte-level tokenizer no token holds less than a byte, so every byte of
// the messages counts as a token, the schema twice (spelled out in the
// prompt and sent as response_format), plus each message's overhead.
func WorstCaseTokens(req scoring.Request) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content) + messageOverheadTokens
	}
	if req.Schema != nil {
		n += 2*len(req.Schema.Schema) + schemaInstructionBytes
	}
	return n
}

// Complete reserves the call's worst case and calls the inner judge, or
// refuses the call when the period's budget cannot cover it.
func (b *Budget) Complete(ctx context.Context, req scoring.Request) (scoring.Response, error) {
	if err := ctx.Err(); err != nil {
		return scoring.Response{}, guardContextError(err)
	}
	worstPrompt := WorstCaseTokens(req)
	reservation := b.cfg.Price.Cost(worstPrompt, b.cfg.MaxCompletionTokens)
	b.mu.Lock()
	period := b.roll(b.cfg.Now())
	if b.spent+b.reserved+reservation > b.cfg.Amount {
		b.refused++
		spent := b.spent
		b.mu.Unlock()
		if reservation > b.cfg.Amount {
			return scoring.Response{}, &scoring.Error{Type: scoring.ErrorBudgetExhausted, NotSent: true, Err: fmt.Errorf(
				"%w: this call can cost up to %.4g, more than the whole budget of %.4g a %s", ErrBudgetExhausted,
				reservation, b.cfg.Amount, periodName(b.cfg.Period))}
		}
		return scoring.Response{}, &scoring.Error{Type: scoring.ErrorBudgetExhausted, NotSent: true, Err: fmt.Errorf(
			"%w: %.4g of %.4g spent this %s, resumes at %s", ErrBudgetExhausted, spent, b.cfg.Amount,
			periodName(b.cfg.Period), period.Add(b.cfg.Period).UTC().Format(time.RFC3339))}
	}
	b.reserved += reservation
	b.inFlight++
	b.mu.Unlock()

	resp, err := b.next.Complete(ctx, req)

	cost := b.cfg.Price.Cost(resp.PromptTokens, resp.CompletionTokens)
	if err == nil && resp.PromptTokens == 0 && resp.CompletionTokens == 0 {
		cost = reservation // no usage reported: charge the worst case
	}
	var se *scoring.Error
	if errors.As(err, &se) && se.NotSent {
		cost = 0
	}
	b.mu.Lock()
	// A call that finishes in the next period is charged to that one,
	// whose admissions counted its reservation.
	b.roll(b.cfg.Now())
	b.reserved -= reservation
	if b.inFlight--; b.inFlight == 0 {
		b.reserved = 0 // no rounding error left behind
	}
	b.spent += cost
	b.mu.Unlock()
	return resp, err
}

// roll starts a new period when now is past the current one, and returns
// the current period's start. The reservations of calls still in flight
// carry over: those calls are charged to the new period when they finish.
func (b *Budget) roll(now time.Time) time.Time {
	start := now.UTC().Truncate(b.cfg.Period)
	if !start.Equal(b.periodStart) {
		b.periodStart, b.spent, b.refused = start, 0, 0
	}
	return start
}

func periodName(d time.Duration) string {
	if d == BudgetHour {
		return "hour"
	}
	return "day"
}
