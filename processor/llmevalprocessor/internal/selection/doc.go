// Package selection decides which items llm_eval evaluates: the trace
// sampler, and the compiled include/exclude filters of the processor and
// of each scorer, matched against an item's resource and own attributes.
package selection // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/selection"
