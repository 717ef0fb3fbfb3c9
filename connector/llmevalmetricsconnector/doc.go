//go:generate mdatagen metadata.yaml

// Package llmevalmetricsconnector implements the llm_eval_metrics connector:
// it reads gen_ai.evaluation.result span events and log records and turns
// them into an evaluation score histogram and a results counter.
package llmevalmetricsconnector // import "github.com/llm-eval/llm_eval/connector/llmevalmetricsconnector"
