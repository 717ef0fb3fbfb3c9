package main

import (
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/llm-eval/llm_eval/scoring/openai"
)

// judgeSettings are the judge flags that score and bench share.
type judgeSettings struct {
	endpoint, model, apiKeyEnv, structuredOutputs string
	explicitKeyEnv                                bool // --api-key-env was given
	timeout                                       time.Duration
	maxTokens                                     int
	azure                                         bool
	provider                                      providerFlags
}

// newJudge builds the OpenAI-compatible judge the flags describe; errors
// name the flag at fault.
func (s judgeSettings) newJudge() (*openai.Judge, error) {
	apiKey := os.Getenv(s.apiKeyEnv)
	if s.explicitKeyEnv && apiKey == "" {
		return nil, fmt.Errorf("--api-key-env: environment variable %s is empty or unset", s.apiKeyEnv)
	}
	mode, err := openai.ParseStructuredOutputs(s.structuredOutputs)
	if err != nil {
		return nil, fmt.Errorf("--structured-outputs: %w", err)
	}
	cfg := openai.Config{
		BaseURL:           s.endpoint,
		APIKey:            apiKey,
		Model:             s.model,
		HTTPClient:        &http.Client{Timeout: s.timeout},
		MaxTokens:         s.maxTokens,
		StructuredOutputs: mode,
		Azure:             s.azure,
	}
	if err := s.provider.apply(&cfg); err != nil {
		return nil, err
	}
	return openai.NewJudge(cfg)
}
