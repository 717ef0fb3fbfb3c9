package llmevalprocessor

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadata"
	"github.com/llm-eval/llm_eval/scoring"
)

// TestStartupLineGolden: one llm_eval in a traces and a logs pipeline
// writes one startup line naming the judge host and model, the scorers,
// sampling, storage and both signals, and never the key, the endpoint's
// user information or its path. Run with -update to rewrite the golden.
func TestStartupLineGolden(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Judge.ClientConfig.Endpoint = "https://judge-user:pw-not-logged@judge.internal:8443/v1?tenant=secret-tenant"
	cfg.Judge.APIKey = configopaque.String("sk-never-logged")
	cfg.Judge.Model = "gpt-4o-mini"
	cfg.Sampling.Percentage = 10
	cfg.Storage = &fileStorageID
	cfg.Scorers = []ScorerConfig{defaultScorerConfig(scoring.Bias), defaultScorerConfig(scoring.Hallucination)}

	core, logs := observer.New(zapcore.InfoLevel)
	set := processortest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	f := NewFactory()
	tp, err := f.CreateTraces(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	lp, err := f.CreateLogs(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	host := fileStorageOn(t, t.TempDir())
	require.NoError(t, lp.Start(context.Background(), host))
	require.NoError(t, tp.Start(context.Background(), host))
	require.NoError(t, tp.Shutdown(context.Background()))
	require.NoError(t, lp.Shutdown(context.Background()))

	lines := logs.FilterMessage("llm_eval will evaluate").All()
	require.Len(t, lines, 1, "one line per llm_eval, however many signals it is in")
	enc := zapcore.NewJSONEncoder(zapcore.EncoderConfig{MessageKey: "msg", LevelKey: "level", EncodeLevel: zapcore.LowercaseLevelEncoder})
	buf, err := enc.EncodeEntry(lines[0].Entry, lines[0].Context)
	require.NoError(t, err)
	got := buf.String()
	for _, secret := range []string{"sk-never-logged", "pw-not-logged", "judge-user", "secret-tenant", "/v1"} {
		assert.NotContains(t, got, secret)
	}
	assert.Empty(t, logs.FilterMessageSnippet("api_key is empty").All(), "a key is set")

	path := filepath.Join("testdata", "golden", "startup_line.json")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o600))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), got)
}

// TestStartupWarnsOfMissingKey: a judge without credentials is named at
// start, beside the startup line, not lost above it: api.openai.com as
// sure to fail, any other remote endpoint as a warning that a local judge
// may ignore. A loopback judge, a key, an auth header or an auth extension
// get none.
func TestStartupWarnsOfMissingKey(t *testing.T) {
	tests := []struct {
		name, endpoint, key string
		header              string // a judge.headers entry set to a value
		auth                bool   // an auth extension
		warn                string // a snippet of the warning; "" for none
	}{
		{name: "openai_no_key", endpoint: "https://api.openai.com/v1", warn: "api.openai.com will refuse every judge call"},
		{name: "openai_with_key", endpoint: "https://api.openai.com/v1", key: "sk-x"},
		{name: "other_provider_no_key", endpoint: "https://openrouter.ai/api/v1", warn: "no key is sent to openrouter.ai"},
		{name: "azure_no_key", endpoint: "https://my.openai.azure.com/openai/v1", warn: "set judge.api_key (OPENAI_API_KEY"},
		{name: "ollama_in_compose_no_key", endpoint: "http://ollama:11434/v1", warn: "right for a judge that needs none (Ollama, vLLM)"},
		{name: "other_provider_with_key", endpoint: "https://openrouter.ai/api/v1", key: "sk-or-x"},
		{name: "azure_api_key_header", endpoint: "https://my.openai.azure.com/openai/v1", header: "api-key"},
		{name: "authorization_header", endpoint: "https://gateway.internal/v1", header: "Authorization"},
		{name: "auth_extension", endpoint: "https://gateway.internal/v1", auth: true},
		{name: "localhost_no_key", endpoint: "http://localhost:11434/v1"},
		{name: "loopback_ip_no_key", endpoint: "http://127.0.0.1:8000/v1"},
		{name: "loopback_ipv6_no_key", endpoint: "http://[::1]:8000/v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.Judge.ClientConfig.Endpoint, cfg.Judge.Model = tt.endpoint, "m"
			cfg.Judge.APIKey = configopaque.String(tt.key)
			if tt.header != "" {
				cfg.Judge.ClientConfig.Headers.Set(tt.header, "secret-header")
			}
			if tt.auth {
				cfg.Judge.ClientConfig.Auth = configoptional.Some(configauth.Config{AuthenticatorID: component.MustNewID("oauth2client")})
			}
			require.Equal(t, tt.warn != "", missingKeyWarning(namedJudge{name: sharedJudgeName, path: "judge", cfg: cfg.Judge}) != "")
			if tt.auth {
				return // starting needs the extension
			}
			cfg.Scorers = []ScorerConfig{defaultScorerConfig(scoring.Bias)}
			core, logs := observer.New(zapcore.InfoLevel)
			set := processortest.NewNopSettings(metadata.Type)
			set.Logger = zap.New(core)
			tp, err := NewFactory().CreateTraces(context.Background(), set, cfg, consumertest.NewNop())
			require.NoError(t, err)
			require.NoError(t, tp.Start(context.Background(), componenttest.NewNopHost()))
			require.NoError(t, tp.Shutdown(context.Background()))
			warnings := logs.FilterLevelExact(zapcore.WarnLevel).FilterMessageSnippet("judge.api_key is empty").All()
			if tt.warn == "" {
				assert.Empty(t, warnings)
				return
			}
			require.Len(t, warnings, 1)
			assert.Contains(t, warnings[0].Message, tt.warn)
			assert.NotContains(t, warnings[0].Message, "/v1", "no endpoint path")
		})
	}
}

// TestStartupWarnsOfEachJudgeWithoutKey: a fallback or a scorer's own
// judge on another host gets no key of the shared judge's: each one
// without credentials is named by its own key, the others are not.
func TestStartupWarnsOfEachJudgeWithoutKey(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Judge.ClientConfig.Endpoint, cfg.Judge.Model = "https://api.openai.com/v1", "gpt-4o-mini"
	cfg.Judge.APIKey = "sk-shared"
	cfg.Judge.Fallback = map[string]any{"endpoint": "https://openrouter.ai/api/v1", "model": "m"}
	bias, tox := defaultScorerConfig(scoring.Bias), defaultScorerConfig(scoring.Toxicity)
	bias.Judge = map[string]any{"endpoint": "https://judge.internal/v1", "api_key": "sk-own"}
	tox.Judge = map[string]any{"endpoint": "https://groq.example/openai/v1", "model": "small"}
	cfg.Scorers = []ScorerConfig{bias, tox}
	require.NoError(t, cfg.Validate())

	core, logs := observer.New(zapcore.WarnLevel)
	logStartup(zap.New(core), cfg, nil)
	var named []string
	for _, e := range logs.FilterMessageSnippet(".api_key is empty").All() {
		named = append(named, e.ContextMap()["judge"].(string))
		assert.NotContains(t, e.Message, "OPENAI_API_KEY", "only the shared judge's key comes from it")
	}
	assert.ElementsMatch(t, []string{"judge.fallback", "scorers[toxicity].judge"}, named, "toxicity falls back to the shared fallback")
	assert.Contains(t, logs.All()[0].Message, "judge.fallback.api_key is empty, so no key is sent to openrouter.ai")
}
