package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/guard"
	"github.com/llm-eval/llm_eval/scoring/instructions"
	"github.com/llm-eval/llm_eval/scoring/openai"
	"github.com/llm-eval/llm_eval/scoring/scorers"
)

// judgeHooks connects the judge to the processor: telemetry callbacks and
// overrides that tests use to keep time short.
type judgeHooks struct {
	onRetry func()
	// onBreakerState is called once per circuit breaker transition of the
	// judge named judge.
	onBreakerState func(judge string, from, to guard.BreakerState, cause error)
	// onFallback is called once per call the fallback of judge takes.
	onFallback func(judge string)
	// onCost is called with the cost of each answered call that has a
	// price, by scorer and judge model.
	onCost func(ctx context.Context, scorer, model string, cost float64)
	// onSplit is called once per system instruction text split for a scorer.
	onSplit func(context.Context, splitOutcome)

	// now is the circuit breaker's clock; nil means time.Now.
	now func() time.Time
}

// judgeSet is one scorer per configured entry and the guards they share,
// which telemetry observes.
type judgeSet struct {
	scorers []scoring.Scorer
	// breakers are the circuit breakers of every judge, the shared one
	// first; none when the scorers have no judge (tests).
	breakers []namedBreaker
	cache    *guard.Cache // nil when cache.enabled is false
	// splits is the instruction split cache, nil when no scorer splits
	// system instructions (judge.go).
	splits *guard.SplitCache
}

// newJudge builds the judge client from the confighttp settings, the
// breaker, limiter and result cache in front of it, and one scorer per
// configured entry, all sharing that judge. Nothing is dialed
// here: an unreachable judge shows up as failed evaluations, not as a
// collector that does not start.
//
// Composition, outermost first:
//
//	cache (per scorer) -> scorer (redaction, max_input_chars) -> budget -> breaker -> limiter -> OpenAI judge (retries)
//
// A scorer that judges the span's system instructions first splits them
// (split_instructions), through the same breaker and limiter:
//
//	cache -> instruction split (split cache -> splitter) -> scorer -> breaker -> ...
//
// The breaker sits outside the limiter so that an open circuit fails at
// once instead of first waiting for rate budget; the cache sits outside
// everything so that a hit costs no call, no budget and no breaker slot.
// The money budget (judge.budget) sits outside the breaker, so that a call
// it refuses tells the breaker nothing about the endpoint.
func newJudge(ctx context.Context, cfg *Config, host component.Host, set component.TelemetrySettings, hooks judgeHooks) (judgeSet, error) {
	judges, scorerJudge, err := cfg.judges()
	if err != nil {
		return judgeSet{}, err
	}
	stacks := make(map[string]*judgeStack, len(judges))
	fallbackOf := make(map[string]string, len(judges))
	var js judgeSet
	for _, nj := range judges {
		st, err := buildJudgeStack(ctx, nj, host, set, hooks)
		if err != nil {
			return judgeSet{}, err
		}
		stacks[nj.name], fallbackOf[nj.name] = st, nj.fallback
		js.breakers = append(js.breakers, namedBreaker{judge: nj.name, breaker: st.breaker})
	}
	// judgeOf is what a scorer asks: its judge's stack, metered for
	// judge_cost under the scorer's name, and the fallback's behind it.
	judgeOf := func(scorer, name string) scoring.Judge {
		j := stacks[name].metered(scorer, hooks.onCost)
		if fb := fallbackOf[name]; fb != "" {
			j = guard.NewFallback(j, stacks[fb].metered(scorer, hooks.onCost), func() {
				if hooks.onFallback != nil {
					hooks.onFallback(name)
				}
			})
		}
		return j
	}
	if cfg.Cache.Enabled {
		js.cache, err = guard.NewCache(guard.CacheConfig{Size: cfg.Cache.Size, TTL: cfg.Cache.TTL})
		if err != nil {
			return judgeSet{}, fmt.Errorf("cache: %w", err)
		}
	}

	var redact func(string) string
	if cfg.Redaction.Enabled {
		r, err := cfg.Redaction.redactor()
		if err != nil {
			return judgeSet{}, fmt.Errorf("redaction: %w", err)
		}
		redact = r.Redact
	}
	js.scorers = make([]scoring.Scorer, 0, len(cfg.Scorers))
	for i, sc := range cfg.Scorers {
		judge := judgeOf(sc.Name, scorerJudge[i])
		s, err := scorers.NewBuilder(judge).Build(scorerSpec(cfg, sc, redact))
		if err != nil {
			return judgeSet{}, fmt.Errorf("scorers[%d]: %w", i, err)
		}
		if sc.isChecks() {
			// Deterministic and cheap: no judge and no cache.
			js.scorers = append(js.scorers, s)
			continue
		}
		if s, err = js.splitInstructions(cfg, sc, s, judge, redact, hooks.onSplit); err != nil {
			return judgeSet{}, fmt.Errorf("scorers[%d]: %w", i, err)
		}
		if js.cache != nil {
			s = js.cache.Wrap(s, stacks[scorerJudge[i]].model, scorerFingerprint(cfg, sc))
			s = unsentFree(s, sc)
		}
		js.scorers = append(js.scorers, s)
	}
	return js, nil
}

// scorerSpec is what the scoring library builds of a scorer entry: a
// built-in, criteria or checks scorer with its options. A judge scorer
// sends the texts redacted and cut to max_input_chars; the checks see the
// output as it is (no_pii must see what redaction hides).
func scorerSpec(cfg *Config, sc ScorerConfig, redact func(string) string) scorers.Spec {
	// A built-in scorer is built by its kind; the store names its results
	// after the configured name.
	spec := scorers.Spec{Name: sc.scorerType(), Options: scorerOptions(sc)}
	switch {
	case sc.isChecks():
		spec.Name = sc.Name
		spec.Rules = sc.Rules
		return spec
	case sc.isCriteria():
		spec.Name = sc.Name
		c := sc.criteriaConfig()
		spec.Criteria = &c
	}
	spec.Options.MaxInputChars = cfg.MaxInputChars
	spec.Options.MaxContextChunks = cfg.MaxContextChunks
	spec.Options.Redact = redact
	if sc.conversationScorer() {
		spec.Options.MaxTurns = cfg.Conversation.MaxTurns
	}
	return spec
}

// unsentFree wraps a cached scorer that never sends the case's context
// (bias, prompt alignment, toxicity, answer relevancy, ...) or the
// conversation before the request (all but answer_relevancy,
// task_completion and prompt_alignment, and the conversation scorers,
// whose case is a conversation) in one that hands it cases without them,
// so that its cache key is what the judge sees: the same call with and
// without its trace's documents (a copy delivered again after a restart,
// whose held twin came back from storage without the trace context
// index), or in two conversations, is judged once.
func unsentFree(s scoring.Scorer, sc ScorerConfig) scoring.Scorer {
	// A conversation scorer's case is its conversation: its turns stay.
	withoutContext, withoutHistory := !scorerReadsContext(sc), !sc.readsHistory() && !sc.conversationScorer()
	if !withoutContext && !withoutHistory {
		return s
	}
	return fieldsFree{next: s, context: withoutContext, history: withoutHistory}
}

// fieldsFree hands its scorer cases without the fields it never sends.
type fieldsFree struct {
	next             scoring.Scorer
	context, history bool
}

func (s fieldsFree) Name() string { return s.next.Name() }

func (s fieldsFree) Score(ctx context.Context, cs scoring.Case) scoring.Result {
	if s.context {
		cs.Context = nil
	}
	if s.history {
		cs.Turns = nil
	}
	return s.next.Score(ctx, cs)
}

// judgeWriteBufferSize is the judge client's write buffer when
// write_buffer_size is unset. A judge request is a few KB to a few tens of
// KB of prompt; at net/http's default of 4 KB most requests went out in two
// writes, and the rest of the body through a fresh 32 KB copy buffer.
const judgeWriteBufferSize = 32 << 10

// judgeClientConfig returns the HTTP client settings of the judge. When
// max_idle_conns_per_host is unset it is raised to max_concurrency: at Go's
// default of 2, a pool of workers talking to one endpoint keeps closing and
// redialing connections. An unset write_buffer_size becomes
// judgeWriteBufferSize.
func judgeClientConfig(jc JudgeConfig) confighttp.ClientConfig {
	cc := jc.ClientConfig
	if cc.WriteBufferSize == 0 {
		cc.WriteBufferSize = judgeWriteBufferSize
	}
	// Without a keepalive section keep-alives are off and no connection idles.
	if ka := cc.Keepalive.Get(); ka != nil && ka.MaxIdleConnsPerHost == 0 {
		ka.MaxIdleConnsPerHost = jc.MaxConcurrency
	}
	return cc
}

// scorerFingerprint changes whenever a setting that changes a scorer's
// result or what it sends to the judge changes, so that the cache never
// serves a result computed under other settings.
func scorerFingerprint(cfg *Config, sc ScorerConfig) string {
	threshold := "default"
	if sc.Threshold != nil {
		threshold = fmt.Sprint(*sc.Threshold)
	}
	return fmt.Sprintf("scale=%v threshold=%s strict=%t reason=%t reason_mode=%s max_input_chars=%d max_context_chunks=%d redaction=%t/%q/%q criteria=%q/%q/%q/%q split=%t instruction_sources=%s max_turns=%d",
		sc.Scale, threshold, sc.StrictMode, sc.IncludeReason, sc.ReasonMode, cfg.MaxInputChars, cfg.MaxContextChunks,
		cfg.Redaction.Enabled, cfg.Redaction.Builtin, cfg.Redaction.Patterns,
		sc.Criteria, sc.Steps, sc.Fields, sc.Verdict, sc.splitsInstructions(), sc.instructionSources(), cfg.Conversation.MaxTurns) + sc.ragFingerprint()
}

// judgeClientTelemetry returns the telemetry settings the judge's HTTP
// client is built with: without a tracer and a meter provider, so that
// confighttp does not wrap it in otelhttp. Without the wrapper (and with
// judgeWriteBufferSize) a generation's collector CPU fell by about a
// quarter in BenchmarkEvaluationCPU: the wrapper clones every request, computes
// attributes for http.client metrics the collector drops below telemetry
// level detailed, and hides the in-memory body from net/http, which then
// writes headers and body in separate syscalls through a fresh 32 KB
// buffer. The processor's own judge_* metrics count, time and break down
// every call instead; the cost is that the collector's internal traces
// have no client span per judge call.
func judgeClientTelemetry(set component.TelemetrySettings) component.TelemetrySettings {
	set.TracerProvider, set.MeterProvider = nil, nil
	return set
}

// judgeBuilder makes the judge and one scorer per configured entry at
// Start (tests pass fake scorers here).
type judgeBuilder func(ctx context.Context, cfg *Config, host component.Host, set component.TelemetrySettings, hooks judgeHooks) (judgeSet, error)

// Bounds of the instruction split cache, one per processor. A deployment
// has few distinct system prompts, and each entry holds at most twice the
// characters of the prompt sent (max_input_chars, 20,000 when 0), so 256
// entries are a few MB for ordinary prompts and about 10 MB of ASCII text
// at worst.
const (
	splitCacheSize = 256
	splitCacheTTL  = time.Hour
)

// splitInstructions puts the instruction split in front of s when the
// scorer's configuration asks for it. The first scorer that does creates
// the splitter and its cache, which every such scorer of the processor
// shares: it asks the same guarded judge the scorers ask and sends the
// system prompt through the same redaction and max_input_chars.
func (js *judgeSet) splitInstructions(cfg *Config, sc ScorerConfig, s scoring.Scorer, judge scoring.Judge, redact func(string) string, onSplit func(context.Context, splitOutcome)) (scoring.Scorer, error) {
	if !sc.splitsInstructions() {
		return s, nil
	}
	if js.splits == nil {
		splitter, err := instructions.NewSplitter(judge, instructions.Options{MaxInputChars: cfg.MaxInputChars, Redact: redact})
		if err != nil {
			return nil, err
		}
		if js.splits, err = guard.NewSplitCache(splitter, guard.CacheConfig{Size: splitCacheSize, TTL: splitCacheTTL}); err != nil {
			return nil, err
		}
	}
	return splitInstructionsOf(s, js.splits, onSplit), nil
}

// judgeStack is one judge endpoint with its own guards, outermost first:
// budget -> breaker -> limiter -> OpenAI client (retries).
type judgeStack struct {
	name    string
	model   string
	price   *guard.Price // nil without a price for model
	breaker *guard.Breaker
	guarded scoring.Judge
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
