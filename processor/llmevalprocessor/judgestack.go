package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/guard"
	"github.com/llm-eval/llm_eval/scoring/openai"
)

// judgeStack is one judge endpoint with its own guards, outermost first:
// budget -> breaker -> limiter -> OpenAI client (retries).
type judgeStack struct {
	name    string
	model   string
	price   *guard.Price // nil without a price for model
	breaker *guard.Breaker
	guarded scoring.Judge
}

// namedBreaker is a judge's circuit breaker, as telemetry observes it.
type namedBreaker struct {
	judge   string
	breaker *guard.Breaker
}

// buildJudgeStack makes the HTTP client, the OpenAI judge and the guards
// of one judge. Nothing is dialed here.
func buildJudgeStack(ctx context.Context, nj namedJudge, host component.Host, set component.TelemetrySettings, hooks judgeHooks) (*judgeStack, error) {
	jc := nj.cfg
	clientCfg := judgeClientConfig(jc)
	client, err := clientCfg.ToClient(ctx, host.GetExtensions(), judgeClientTelemetry(set))
	if err != nil {
		return nil, fmt.Errorf("%s HTTP client: %w", nj.name, err)
	}
	mode, err := openai.ParseStructuredOutputs(jc.StructuredOutputs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", nj.name, err)
	}
	oc := openai.Config{
		BaseURL:           jc.ClientConfig.Endpoint,
		APIKey:            string(jc.APIKey),
		HTTPClient:        client, // carries headers, TLS, proxy and timeout
		MaxTokens:         jc.MaxTokens,
		Seed:              jc.Seed,
		StructuredOutputs: mode,
		Retry:             jc.Retry.policy(),
		Secrets:           jc.secrets(), // headers are set by client, not by the judge
	}
	jc.providerConfig(&oc)
	if hooks.onRetry != nil {
		oc.OnRetry = func(int, error, time.Duration) { hooks.onRetry() }
	}
	openAI, err := openai.NewJudge(oc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", nj.name, err)
	}
	limiter := guard.NewLimiter(openAI, guard.LimiterConfig{
		RequestsPerMinute: jc.RequestsPerMinute,
		TokensPerMinute:   jc.TokensPerMinute,
	})
	cb := jc.CircuitBreaker
	bc := guard.BreakerConfig{
		FailureThreshold:  cb.FailureThreshold,
		OpenDuration:      cb.OpenDuration,
		AuthRetryInterval: cb.AuthRetryInterval,
		Now:               hooks.now,
	}
	if hooks.onBreakerState != nil {
		name := nj.name
		bc.OnStateChange = func(from, to guard.BreakerState, cause error) { hooks.onBreakerState(name, from, to, cause) }
	}
	breaker := guard.NewBreaker(limiter, bc)
	guarded, err := withBudget(jc, breaker, hooks.now)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", nj.name, err)
	}
	return &judgeStack{name: nj.name, model: jc.model(), price: jc.price(), breaker: breaker, guarded: guarded}, nil
}

// metered returns the stack as scorer asks it: each answered call's cost
// goes to onCost under scorer and the stack's model. Without a price or
// onCost it is the stack itself.
func (st *judgeStack) metered(scorer string, onCost func(ctx context.Context, scorer, model string, cost float64)) scoring.Judge {
	if st.price == nil || onCost == nil {
		return st.guarded
	}
	return costMeter{next: st.guarded, scorer: scorer, model: st.model, price: *st.price, record: onCost}
}

// costMeter records the cost of every call that reported usage.
type costMeter struct {
	next          scoring.Judge
	scorer, model string
	price         guard.Price
	record        func(ctx context.Context, scorer, model string, cost float64)
}

func (m costMeter) Complete(ctx context.Context, req scoring.Request) (scoring.Response, error) {
	resp, err := m.next.Complete(ctx, req)
	if resp.PromptTokens > 0 || resp.CompletionTokens > 0 {
		m.record(ctx, m.scorer, m.model, m.price.Cost(resp.PromptTokens, resp.CompletionTokens))
	}
	return resp, err
}
