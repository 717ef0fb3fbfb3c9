package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"net/url"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pipeline"
	"go.uber.org/zap"
)

// logStartup writes the one line that says what an llm_eval instance will
// do: judge host and model, scorers, sampling, storage and the signals it
// is in. It never carries the key, nor the endpoint's path, query or user
// information, which may hold secrets. A judge on api.openai.com without a
// key gets a warning beside it, since every call would be refused.
func logStartup(logger *zap.Logger, cfg *Config, signals []pipeline.Signal) {
	logger.Info("llm_eval will evaluate", startupFields(cfg, signals)...)
	if strings.TrimSpace(string(cfg.Judge.APIKey)) == "" && judgeHost(cfg.Judge.ClientConfig.Endpoint) == "api.openai.com" {
		logger.Warn("judge.api_key is empty, so api.openai.com will refuse every judge call and every result will be an error; " +
			"set it (OPENAI_API_KEY with examples/collector.yaml), or point judge.endpoint at a local judge (Ollama, vLLM, or `llmeval demo-judge` to try it offline)")
	}
}

// startupFields are the fields of the startup line.
func startupFields(cfg *Config, signals []pipeline.Signal) []zap.Field {
	scorers := make([]string, len(cfg.Scorers))
	for i, sc := range cfg.Scorers {
		scorers[i] = sc.Name
	}
	storage := "off (held spans are lost on restart)"
	if cfg.Storage != nil {
		storage = cfg.Storage.String()
	}
	names := make([]string, len(signals))
	for i, s := range signals {
		names[i] = s.String()
	}
	slices.Sort(names)
	return []zap.Field{
		zap.String("judge_host", judgeHost(cfg.Judge.ClientConfig.Endpoint)),
		zap.String("judge_model", cfg.Judge.model()),
		zap.Strings("scorers", scorers),
		zap.Float64("sampling_percentage", cfg.Sampling.Percentage),
		zap.String("storage", storage),
		zap.Strings("signals", names),
	}
}

// judgeHost is the host and port of the judge endpoint, without scheme,
// user information, path or query.
func judgeHost(endpoint string) string {
	u, err := url.Parse(strings.TrimSpace(endpoint))
	if err != nil || u.Host == "" {
		return "(invalid endpoint)"
	}
	return u.Host
}
