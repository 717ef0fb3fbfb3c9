//go:generate mdatagen metadata.yaml

// Package llmevaleventsconnector implements the llm_eval_events connector:
// traces in, logs out. Every gen_ai.evaluation.result span event becomes a
// log record with that event name, the event's attributes and the evaluated
// span's trace and span id, under the span's resource and scope.
package llmevaleventsconnector // import "github.com/llm-eval/llm_eval/connector/llmevaleventsconnector"
