package llmevalprocessor

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
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

// TestStartupWarnsOfMissingKey: OpenAI without a key is named at start,
// beside the startup line, not lost above it.
func TestStartupWarnsOfMissingKey(t *testing.T) {
	tests := []struct {
		name, endpoint, key string
		warn                bool
	}{
		{name: "openai_no_key", endpoint: "https://api.openai.com/v1", warn: true},
		{name: "openai_with_key", endpoint: "https://api.openai.com/v1", key: "sk-x"},
		{name: "local_no_key", endpoint: "http://localhost:11434/v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.Judge.ClientConfig.Endpoint, cfg.Judge.Model = tt.endpoint, "m"
			cfg.Judge.APIKey = configopaque.String(tt.key)
			cfg.Scorers = []ScorerConfig{defaultScorerConfig(scoring.Bias)}
			core, logs := observer.New(zapcore.InfoLevel)
			set := processortest.NewNopSettings(metadata.Type)
			set.Logger = zap.New(core)
			tp, err := NewFactory().CreateTraces(context.Background(), set, cfg, consumertest.NewNop())
			require.NoError(t, err)
			require.NoError(t, tp.Start(context.Background(), componenttest.NewNopHost()))
			require.NoError(t, tp.Shutdown(context.Background()))
			warnings := logs.FilterLevelExact(zapcore.WarnLevel).FilterMessageSnippet("judge.api_key is empty").Len()
			assert.Equal(t, map[bool]int{true: 1, false: 0}[tt.warn], warnings)
		})
	}
}
