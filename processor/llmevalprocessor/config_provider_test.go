package llmevalprocessor

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// loadJudge decodes and validates a configuration whose judge keys are
// given (endpoint and model are added unless given).
func loadJudge(t *testing.T, judge map[string]any) (*Config, error) {
	t.Helper()
	if _, ok := judge["endpoint"]; !ok {
		judge["endpoint"] = "http://judge.internal/v1"
	}
	cfg := createDefaultConfig().(*Config)
	conf := confmap.NewFromStringMap(map[string]any{"judge": judge, "scorers": []any{map[string]any{"name": "bias"}}})
	if err := conf.Unmarshal(cfg); err != nil {
		return cfg, err
	}
	return cfg, confmap.Validate(cfg)
}

func TestProviderSettingsValidated(t *testing.T) {
	tests := []struct {
		name  string
		judge map[string]any
		want  string
	}{
		{"azure without deployment", map[string]any{"model": "m", "azure": map[string]any{"api_version": "v1"}}, "azure::deployment: must be set"},
		{"azure bad version", map[string]any{"azure": map[string]any{"deployment": "d", "api_version": "latest"}}, `azure::api_version: "latest" is neither "v1" nor a dated version`},
		{"reasoning effort not a word", map[string]any{"model": "m", "reasoning_effort": "very high"}, "reasoning_effort: \"very high\" is not one lowercase word"},
		{"extra_body sets messages", map[string]any{"model": "m", "extra_body": map[string]any{"messages": []any{}}}, "extra_body::messages: the judge sets this field itself"},
		{"extra_body sets temperature", map[string]any{"model": "m", "extra_body": map[string]any{"temperature": 0.2}}, "extra_body::temperature: the judge sets this field itself; use omit_temperature"},
		{"extra_body streams", map[string]any{"model": "m", "extra_body": map[string]any{"stream": true}}, "extra_body::stream"},
		{"no model", map[string]any{"reasoning_effort": "low"}, "model: must be set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadJudge(t, tt.judge)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), "judge", "the error names the judge section")
		})
	}
	// Azure needs no model: the deployment names it.
	cfg, err := loadJudge(t, map[string]any{"azure": map[string]any{"deployment": "judge-4o", "api_version": "2025-04-01-preview"}})
	require.NoError(t, err)
	assert.Equal(t, "judge-4o", cfg.Judge.model())
}

// TestProviderSettingsOnTheWire runs the processor with each provider's
// settings as docs/providers.md gives them and checks the judge request on
// the wire: path, query, authentication header and the body fields the
// settings add. scoring/openai's TestProvidersOnTheWire checks every
// header and the whole body of each provider row.
func TestProviderSettingsOnTheWire(t *testing.T) {
	tests := []struct {
		name       string
		judge      map[string]any
		root       bool // the endpoint is the fake's root, not .../v1
		path       string
		query      string
		authHeader string // header that carries the key, value "KEY"
		body       map[string]any
		absent     []string
	}{{
		name:  "Azure OpenAI v1",
		judge: map[string]any{"azure": map[string]any{"deployment": "judge-4o", "api_version": "v1"}},
		root:  true, path: "/openai/v1/chat/completions", authHeader: "Api-Key",
		body: map[string]any{"model": "judge-4o"},
	}, {
		name:  "Azure OpenAI classic deployment",
		judge: map[string]any{"model": "gpt-4o-mini", "azure": map[string]any{"deployment": "judge-4o"}},
		root:  true, path: "/openai/deployments/judge-4o/chat/completions", query: "api-version=2024-10-21", authHeader: "Api-Key",
		body: map[string]any{"model": "gpt-4o-mini"},
	}, {
		name:  "Ollama",
		judge: map[string]any{"model": "qwen3:8b", "reasoning_effort": "none"},
		path:  "/v1/chat/completions", authHeader: "Authorization",
		body: map[string]any{"model": "qwen3:8b", "reasoning_effort": "none"},
	}, {
		name:  "vLLM",
		judge: map[string]any{"model": "Qwen/Qwen3-8B", "chat_template_kwargs": map[string]any{"enable_thinking": false}},
		path:  "/v1/chat/completions", authHeader: "Authorization",
		body: map[string]any{"chat_template_kwargs": map[string]any{"enable_thinking": false}},
	}, {
		name:  "LiteLLM",
		judge: map[string]any{"model": "judge", "omit_temperature": true, "extra_body": map[string]any{"metadata": map[string]any{"tags": []any{"llm_eval"}}}},
		path:  "/v1/chat/completions", authHeader: "Authorization",
		body: map[string]any{"metadata": map[string]any{"tags": []any{"llm_eval"}}}, absent: []string{"temperature"},
	}, {
		name:  "Anthropic",
		judge: map[string]any{"model": "claude-haiku-4-5", "structured_outputs": "off", "max_tokens": 1024},
		path:  "/v1/chat/completions", authHeader: "Authorization",
		body: map[string]any{"max_tokens": 1024}, absent: []string{"response_format"},
	}, {
		name:  "Bedrock",
		judge: map[string]any{"model": "openai.gpt-oss-20b-1:0", "reasoning_effort": "low"},
		path:  "/v1/chat/completions", authHeader: "Authorization",
		body: map[string]any{"reasoning_effort": "low", "model": "openai.gpt-oss-20b-1:0"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := scoringtest.New(t)
			tt.judge["endpoint"] = srv.URL
			if tt.root {
				tt.judge["endpoint"] = strings.TrimSuffix(srv.URL, "/v1")
			}
			tt.judge["api_key"] = "KEY"
			cfg, err := loadJudge(t, tt.judge)
			require.NoError(t, err)
			cfg.Scorers = []ScorerConfig{defaultScorerConfig(scoring.Toxicity)}
			h, _ := judgeHarness(t, cfg)
			b := newBatch()
			b.generation(randomTraceID(), "Is the plan good?", "The plan is good.")
			h.consume(b.td)
			h.waitSpans(1)
			calls := srv.Calls()
			require.NotEmpty(t, calls)
			c := calls[0]
			assert.Equal(t, tt.path, c.Path)
			assert.Equal(t, tt.query, c.RawQuery)
			want := "KEY"
			if tt.authHeader == "Authorization" {
				want = "Bearer KEY"
			} else {
				assert.Empty(t, c.Header.Get("Authorization"), "the key goes in %s only", tt.authHeader)
			}
			assert.Equal(t, want, c.Header.Get(tt.authHeader))
			var body map[string]any
			require.NoError(t, json.Unmarshal(c.Body, &body))
			for k, v := range tt.body {
				assert.EqualValues(t, v, body[k], "body field %s", k)
			}
			for _, k := range tt.absent {
				assert.NotContains(t, body, k)
			}
		})
	}
}

// TestExtraBodyReportedWhereWritten: a bad extra_body key of the shared
// judge is reported once, at the shared judge, although its fallback and a
// scorer's judge inherit it; a bad key a derived judge writes itself is
// reported at that judge.
func TestExtraBodyReportedWhereWritten(t *testing.T) {
	load := func(judge map[string]any, scorerJudge map[string]any) error {
		cfg := createDefaultConfig().(*Config)
		conf := confmap.NewFromStringMap(map[string]any{"judge": judge, "scorers": []any{
			map[string]any{"name": "bias"},
			map[string]any{"name": "toxicity", "judge": scorerJudge},
		}})
		require.NoError(t, conf.Unmarshal(cfg))
		return confmap.Validate(cfg)
	}
	err := load(map[string]any{
		"endpoint": "http://judge.internal/v1", "model": "m",
		"extra_body": map[string]any{"temperature": 0.2, "metadata": "ok"},
		"fallback":   map[string]any{"model": "backup"},
	}, map[string]any{"model": "small"})
	require.Error(t, err)
	assert.Equal(t, 1, strings.Count(err.Error(), "extra_body::temperature"), err.Error())
	assert.Contains(t, err.Error(), "judge: extra_body::temperature: the judge sets this field itself")
	assert.NotContains(t, err.Error(), "fallback: extra_body")
	assert.NotContains(t, err.Error(), "scorers::1::judge: extra_body")

	// Written by the fallback and by the scorer's judge: reported there.
	err = load(map[string]any{
		"endpoint": "http://judge.internal/v1", "model": "m",
		"extra_body": map[string]any{"metadata": "ok"},
		"fallback":   map[string]any{"model": "backup", "extra_body": map[string]any{"stream": true}},
	}, map[string]any{"model": "small", "extra_body": map[string]any{"messages": []any{}}})
	require.Error(t, err)
	assert.Equal(t, 1, strings.Count(err.Error(), "extra_body::stream"), err.Error())
	assert.Contains(t, err.Error(), "judge::fallback: extra_body::stream")
	assert.Equal(t, 1, strings.Count(err.Error(), "extra_body::messages"), err.Error())
	assert.Contains(t, err.Error(), "scorers::1::judge: extra_body::messages")
	assert.NotContains(t, err.Error(), "extra_body::metadata")
}

// TestInheritedJudgeSettingReportedWhereWritten: a bad setting written
// once under judge: is reported once, there, although the fallback and a
// scorer's judge inherit it; one the fallback or the scorer's judge
// writes itself is reported where it is written, and so is a problem
// that only the overriding judge has (one of a pair of keys overridden).
func TestInheritedJudgeSettingReportedWhereWritten(t *testing.T) {
	load := func(judge, fallback, scorerJudge map[string]any) error {
		cfg := createDefaultConfig().(*Config)
		judge["endpoint"], judge["model"], judge["fallback"] = "http://judge.internal/v1", "m", fallback
		conf := confmap.NewFromStringMap(map[string]any{"judge": judge, "scorers": []any{
			map[string]any{"name": "bias"},
			map[string]any{"name": "toxicity", "judge": scorerJudge},
		}})
		require.NoError(t, conf.Unmarshal(cfg))
		return confmap.Validate(cfg)
	}
	tests := []struct {
		name              string
		judge, fb, scorer map[string]any
		key               string         // the problem's key, as errors name it
		at                map[string]int // where it is reported: judge path -> times
		notAt             []string
	}{
		{
			name: "reasoning_effort", judge: map[string]any{"reasoning_effort": "High"},
			key: "reasoning_effort", at: map[string]int{"judge: reasoning_effort": 1},
			notAt: []string{"fallback: reasoning_effort", "scorers::1::judge: reasoning_effort"},
		},
		{
			name: "azure deployment, a key beside it overridden", judge: map[string]any{"azure": map[string]any{"api_version": "v1"}},
			scorer: map[string]any{"azure": map[string]any{"api_version": "2024-10-21"}},
			key:    "azure::deployment", at: map[string]int{"judge: azure::deployment": 1},
			notAt: []string{"fallback: azure", "scorers::1::judge: azure"},
		},
		{
			name: "chat_template_kwargs", judge: map[string]any{"chat_template_kwargs": map[string]any{"bad": func() {}}},
			key: "chat_template_kwargs::bad", at: map[string]int{"judge: chat_template_kwargs::bad": 1},
		},
		{
			name: "prices, another model priced beside it", judge: map[string]any{"prices": map[string]any{"m": map[string]any{"prompt": -1}}},
			scorer: map[string]any{"model": "small", "prices": map[string]any{"small": map[string]any{"prompt": 1}}},
			key:    "prices::m::prompt", at: map[string]int{"judge: prices::m::prompt": 1},
		},
		{
			name: "timeout", judge: map[string]any{"timeout": "50ms"},
			key: "timeout: ", at: map[string]int{"judge: timeout": 1},
		},
		{
			name: "circuit_breaker", judge: map[string]any{"circuit_breaker": map[string]any{"failure_threshold": 0}},
			key: "failure_threshold", at: map[string]int{"judge::circuit_breaker: failure_threshold": 1},
		},
		{
			name: "written again at the fallback and the scorer's judge", judge: map[string]any{"reasoning_effort": "High"},
			fb: map[string]any{"reasoning_effort": "High"}, scorer: map[string]any{"reasoning_effort": "Low"},
			key: "reasoning_effort", at: map[string]int{"judge: reasoning_effort": 1, "judge::fallback: reasoning_effort": 1, "scorers::1::judge: reasoning_effort": 1},
		},
		{
			name: "written only at the scorer's judge", scorer: map[string]any{"azure": map[string]any{"api_version": "v1"}},
			key: "azure::deployment", at: map[string]int{"scorers::1::judge: azure::deployment": 1},
		},
		{
			name: "a pair of keys, one overridden", judge: map[string]any{"retry": map[string]any{"max_backoff": "2s"}},
			scorer: map[string]any{"retry": map[string]any{"initial_backoff": "5s"}},
			key:    "max_backoff", at: map[string]int{"scorers::1::judge::retry: max_backoff": 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fb := map[string]any{"model": "backup"}
			for k, v := range tt.fb {
				fb[k] = v
			}
			scorer := map[string]any{"model": "small"}
			for k, v := range tt.scorer {
				scorer[k] = v
			}
			judge := map[string]any{}
			for k, v := range tt.judge {
				judge[k] = v
			}
			err := load(judge, fb, scorer)
			require.Error(t, err)
			msg := err.Error()
			// Each problem is one "path: key: why" part of the message.
			parts := strings.FieldsFunc(strings.ReplaceAll(msg, "; ", "\n"), func(r rune) bool { return r == '\n' })
			want := 0
			for at, n := range tt.at {
				got := 0
				for _, p := range parts {
					if strings.HasPrefix(p, at) {
						got++
					}
				}
				assert.Equal(t, n, got, "%s in %s", at, msg)
				want += n
			}
			assert.Equal(t, want, strings.Count(msg, tt.key), "each problem once, where written: %s", msg)
			for _, at := range tt.notAt {
				assert.NotContains(t, msg, at)
			}
		})
	}
}
