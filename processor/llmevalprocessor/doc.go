//go:generate go -C ../../tools tool mdatagen ../processor/llmevalprocessor/metadata.yaml

// Package llmevalprocessor implements the llm_eval traces processor: it
// samples LLM generation spans, has an LLM judge score them and writes the
// results back onto the spans as gen_ai.evaluation.result events.
package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"
