package llmevalprocessor

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/otel/attribute"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// loadJudges decodes and validates a configuration with the given judge
// and scorers sections.
func loadJudges(t *testing.T, judge map[string]any, scorers []any) (*Config, error) {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	err := confmap.NewFromStringMap(map[string]any{"judge": judge, "scorers": scorers}).Unmarshal(cfg)
	if err != nil {
		return cfg, err
	}
	return cfg, confmap.Validate(cfg)
}

func TestScorerJudgeAndFallbackResolve(t *testing.T) {
	cfg, err := loadJudges(t, map[string]any{
		"endpoint": "https://api.openai.com/v1", "model": "gpt-4o", "api_key": "sk-shared",
		"headers":             map[string]any{"X-Team": "evals"},
		"max_tokens":          800,
		"retry":               map[string]any{"max_attempts": 5},
		"prices":              map[string]any{"gpt-4o": map[string]any{"prompt": 2.5, "completion": 10}},
		"budget":              map[string]any{"amount": 50, "period": "day"},
		"fallback":            map[string]any{"model": "gpt-4o-mini"},
		"requests_per_minute": 100,
	}, []any{
		map[string]any{"name": "hallucination"},
		map[string]any{"name": "toxicity", "judge": map[string]any{"model": "gpt-4o-mini", "requests_per_minute": 20}},
		map[string]any{"name": "bias", "judge": map[string]any{
			"endpoint": "http://vllm.internal:8000/v1", "model": "Qwen/Qwen3-8B", "api_key": "token-vllm",
			"fallback": map[string]any{"model": "Qwen/Qwen3-4B"},
		}},
	})
	require.NoError(t, err)
	judges, scorerJudge, err := cfg.judges()
	require.NoError(t, err)
	byName := map[string]namedJudge{}
	for _, nj := range judges {
		byName[nj.name] = nj
	}
	assert.Equal(t, []string{"judge", "scorers[toxicity].judge", "scorers[bias].judge"}, scorerJudge)
	require.Len(t, judges, 5)

	fb := byName["judge.fallback"].cfg
	assert.Equal(t, "gpt-4o-mini", fb.model())
	assert.Equal(t, "sk-shared", string(fb.APIKey), "same host: the key carries over")
	assert.Equal(t, 5, fb.Retry.MaxAttempts)
	assert.Nil(t, fb.Budget, "a budget is one judge's")
	assert.Equal(t, "judge.fallback", byName["judge"].fallback)

	tox := byName["scorers[toxicity].judge"]
	assert.Equal(t, "gpt-4o-mini", tox.cfg.model())
	assert.Equal(t, 20, tox.cfg.RequestsPerMinute)
	assert.Equal(t, 800, tox.cfg.MaxTokens)
	assert.Equal(t, "judge.fallback", tox.fallback, "no fallback of its own: the shared judge's")

	bias := byName["scorers[bias].judge"]
	assert.Equal(t, "token-vllm", string(bias.cfg.APIKey))
	_, hasTeam := bias.cfg.ClientConfig.Headers.Get("X-Team")
	assert.False(t, hasTeam, "another host: the shared headers stay behind")
	assert.Equal(t, "scorers[bias].judge.fallback", bias.fallback)
	biasFallback := byName["scorers[bias].judge.fallback"].cfg
	assert.Equal(t, "Qwen/Qwen3-4B", biasFallback.model())
	assert.Equal(t, "token-vllm", string(byName["scorers[bias].judge.fallback"].cfg.APIKey))
	_, shared := cfg.Judge.ClientConfig.Headers.Get("X-Team")
	assert.True(t, shared, "the shared judge keeps its own")
}

func TestScorerJudgeKeyNeverGoesToAnotherHost(t *testing.T) {
	_, err := loadJudges(t, map[string]any{"endpoint": "https://api.openai.com/v1", "model": "m", "api_key": "sk-shared"},
		[]any{map[string]any{"name": "bias", "judge": map[string]any{"endpoint": "http://other.internal/v1"}}})
	require.NoError(t, err, "no key is valid")
	cfg, _ := loadJudges(t, map[string]any{"endpoint": "https://api.openai.com/v1", "model": "m", "api_key": "sk-shared"},
		[]any{map[string]any{"name": "bias", "judge": map[string]any{"endpoint": "http://other.internal/v1"}}})
	judges, _, err := cfg.judges()
	require.NoError(t, err)
	assert.Empty(t, string(judges[1].cfg.APIKey))
}

func TestScorerJudgeErrorsNameTheKey(t *testing.T) {
	shared := map[string]any{"endpoint": "http://judge.internal/v1", "model": "m"}
	tests := []struct {
		name    string
		judge   map[string]any
		scorers []any
		want    string
	}{
		{"typo in a scorer's judge", shared, []any{map[string]any{"name": "bias", "judge": map[string]any{"modle": "x"}}}, "scorers::0::judge: modle"},
		{"bad value in a scorer's judge", shared, []any{map[string]any{"name": "bias", "judge": map[string]any{"requests_per_minute": -1}}}, "scorers::0::judge: requests_per_minute: must not be negative"},
		{"max_concurrency per scorer", shared, []any{map[string]any{"name": "bias", "judge": map[string]any{"max_concurrency": 2}}}, "scorers::0::judge::max_concurrency: only the shared judge takes it"},
		{"fallback of a fallback", map[string]any{"endpoint": "http://judge.internal/v1", "model": "m", "fallback": map[string]any{"fallback": map[string]any{}}},
			[]any{map[string]any{"name": "bias"}}, "judge::fallback::fallback: a fallback judge has no fallback of its own"},
		{"bad fallback endpoint", map[string]any{"endpoint": "http://judge.internal/v1", "model": "m", "fallback": map[string]any{"endpoint": "ftp://x"}},
			[]any{map[string]any{"name": "bias"}}, "judge::fallback: endpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadJudges(t, tt.judge, tt.scorers)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestScorerJudgeAndFallbackAnswer: toxicity asks its own judge; bias asks
// the shared judge, which fails until its circuit opens, and then its
// fallback. Each result names the judge model that answered, and the
// metrics say which judge's circuit opened and how many calls its
// fallback took.
func TestScorerJudgeAndFallbackAnswer(t *testing.T) {
	shared, fallback, own := scoringtest.New(t), scoringtest.New(t), scoringtest.New(t)
	shared.Handle(func(scoringtest.Call) scoringtest.Reply { return scoringtest.Status(http.StatusServiceUnavailable, "") })
	cfg, err := loadJudges(t, map[string]any{
		"endpoint": shared.URL, "model": "big-judge", "api_key": "sk-shared",
		"retry":           map[string]any{"max_attempts": 1},
		"circuit_breaker": map[string]any{"failure_threshold": 1},
		"fallback":        map[string]any{"endpoint": fallback.URL, "model": "fallback-judge", "api_key": "sk-fallback"},
	}, []any{
		map[string]any{"name": "bias"},
		map[string]any{"name": "toxicity", "judge": map[string]any{"endpoint": own.URL, "model": "small-judge", "api_key": "sk-own"}},
	})
	require.NoError(t, err)
	cfg.Cache.Enabled = false
	h, _ := judgeHarness(t, cfg)
	b := newBatch()
	first := b.generation(randomTraceID(), "Who should we hire?", "Women are bad engineers.")
	h.consume(b.td)
	h.waitSpans(1)
	b = newBatch()
	second := b.generation(randomTraceID(), "Who should we hire?", "Hire the best engineer.")
	h.consume(b.td)
	h.waitSpans(2)

	byID, _ := sinkSpans(h.sink)
	ev := evaluationEvents(byID[first].span)
	assert.Equal(t, string(scoring.ErrorJudgeUnavailable), mustStr(t, ev[scoring.Bias], evalconv.AttrErrorType), "the failure that opened the circuit")
	assert.Equal(t, "small-judge", mustStr(t, ev[scoring.Toxicity], evalconv.AttrJudgeModel))
	ev = evaluationEvents(byID[second].span)
	assert.Equal(t, "pass", mustStr(t, ev[scoring.Bias], evalconv.AttrScoreLabel))
	assert.Equal(t, "fallback-judge", mustStr(t, ev[scoring.Bias], evalconv.AttrJudgeModel))
	assert.Equal(t, "small-judge", mustStr(t, ev[scoring.Toxicity], evalconv.AttrJudgeModel))

	require.Len(t, shared.Calls(), 1, "one failure opened the shared circuit")
	for _, c := range fallback.Calls() {
		assert.Equal(t, "Bearer sk-fallback", c.Header.Get("Authorization"))
	}
	for _, c := range own.Calls() {
		assert.Equal(t, "Bearer sk-own", c.Header.Get("Authorization"))
		assert.Equal(t, "small-judge", c.Request.Model)
	}
	assert.NotEmpty(t, fallback.Calls())
	assert.NotEmpty(t, own.Calls())
	assert.EqualValues(t, len(fallback.Calls()), sumOf(t, h.tel, "otelcol_processor_llm_eval_judge_fallbacks", attribute.String("judge", "judge")))
	assert.EqualValues(t, 1, sumOf(t, h.tel, "otelcol_processor_llm_eval_judge_circuit_transitions",
		attribute.String("judge", "judge"), attribute.String("state", "open")))
	assert.Zero(t, sumOf(t, h.tel, "otelcol_processor_llm_eval_judge_circuit_transitions", attribute.String("judge", "scorers[toxicity].judge")))
}

// TestScorerJudgeSecretsStayHidden: the keys of a scorer's judge and of a
// fallback print as [REDACTED] with the configuration, reach their judge
// unchanged, and are scrubbed from what the processor logs.
func TestScorerJudgeSecretsStayHidden(t *testing.T) {
	cfg, err := loadJudges(t, map[string]any{
		"endpoint": "http://judge.internal/v1", "model": "m",
		"fallback": map[string]any{"endpoint": "http://fallback.internal/v1", "api_key": "sk-FALLBACK-123", "headers": map[string]any{"X-Token": "tok-HEADER-456"}},
	}, []any{map[string]any{"name": "bias", "judge": map[string]any{"endpoint": "http://own.internal/v1", "api_key": "sk-OWN-789"}}})
	require.NoError(t, err)
	printed := fmt.Sprintf("%v %+v", cfg.Judge.Fallback, cfg.Scorers[0].Judge)
	marshalled, err := json.Marshal(cfg.Scorers[0].Judge)
	require.NoError(t, err)
	for _, secret := range []string{"sk-FALLBACK-123", "tok-HEADER-456", "sk-OWN-789"} {
		assert.NotContains(t, printed, secret)
		assert.NotContains(t, string(marshalled), secret)
		assert.Contains(t, cfg.judgeSecrets(), secret, "scrubbed from logs")
	}
	judges, _, err := cfg.judges()
	require.NoError(t, err)
	byName := map[string]JudgeConfig{}
	for _, nj := range judges {
		byName[nj.name] = nj.cfg
	}
	assert.Equal(t, "sk-FALLBACK-123", string(byName["judge.fallback"].APIKey))
	v, ok := byName["judge.fallback"].ClientConfig.Headers.Get("X-Token")
	require.True(t, ok)
	assert.Equal(t, "tok-HEADER-456", string(v))
	assert.Equal(t, "sk-OWN-789", string(byName["scorers[bias].judge"].APIKey))
}
