package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"net"
	"net/url"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pipeline"
	"go.uber.org/zap"
)

// logStartup writes the one line that says what an llm_eval instance will
// do: judge host and model, scorers, sampling, storage and the signals it
// is in. It never carries the key, nor the endpoint's path, query or user
// information, which may hold secrets. Each judge (the shared one, a
// scorer's own, a fallback) without any credentials gets a warning beside
// it (missingKeyWarning).
func logStartup(logger *zap.Logger, cfg *Config, signals []pipeline.Signal) {
	logger.Info("llm_eval will evaluate", startupFields(cfg, signals)...)
	judges, _, err := cfg.judges()
	if err != nil { // refused by Validate before a start; the shared judge at least
		judges = []namedJudge{{name: sharedJudgeName, path: "judge", cfg: cfg.Judge}}
	}
	for _, nj := range judges {
		if msg := missingKeyWarning(nj); msg != "" {
			logger.Warn(msg, zap.String("judge", nj.name), zap.String("judge_host", judgeHost(nj.cfg.ClientConfig.Endpoint)))
		}
	}
}

// missingKeyWarning explains at start a judge that gets no credentials:
// no api_key, no Authorization or api-key header, no auth extension.
// api.openai.com refuses every such call; a hosted endpoint of another
// provider does too, but a local judge (Ollama, vLLM, the demo judge)
// needs no key, so that is a warning, and none for a loopback address.
// Otherwise the first sign would be a 401 once traffic arrives.
func missingKeyWarning(nj namedJudge) string {
	jc := nj.cfg
	if strings.TrimSpace(string(jc.APIKey)) != "" || jc.ClientConfig.Auth.HasValue() {
		return ""
	}
	for name := range jc.ClientConfig.Headers.Iter {
		switch strings.ToLower(name) {
		case "authorization", "api-key", "x-api-key":
			return ""
		}
	}
	at := strings.ReplaceAll(nj.path, "::", ".")
	key := at + ".api_key"
	if nj.name == sharedJudgeName {
		key += " (OPENAI_API_KEY with examples/collector.yaml)"
	}
	host := judgeHost(jc.ClientConfig.Endpoint)
	switch {
	case host == "api.openai.com":
		return at + ".api_key is empty, so api.openai.com will refuse every judge call and every result will be an error; " +
			"set " + key + ", or point " + at + ".endpoint at a local judge (Ollama, vLLM, or `llmeval demo-judge` to try it offline)"
	case loopback(host):
		return ""
	}
	return at + ".api_key is empty, so no key is sent to " + host + ": right for a judge that needs none (Ollama, vLLM), " +
		"but a hosted endpoint refuses every call with 401 and evaluation stays suspended until it gets one; " +
		"set " + key + " or an Authorization header in " + at + ".headers"
}

// loopback says whether host (host[:port]) is this machine.
func loopback(host string) bool {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
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
