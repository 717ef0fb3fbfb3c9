package llmevaleventsconnector // import "github.com/llm-eval/llm_eval/connector/llmevaleventsconnector"

// Config configures the llm_eval_events connector. It has no settings: the
// log records follow the semantic conventions' evaluation event exactly.
type Config struct {
	// prevent unkeyed literal initialization
	_ struct{}
}

func createDefaultConfig() *Config {
	return &Config{}
}
