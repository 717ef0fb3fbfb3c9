// Package configcheck finds the mistakes people make in an llm_eval
// configuration and says how to fix them: unknown keys with their whole
// path and the closest known key, values outside a set, misspelt scorer
// names. Durations are checked by internal/duration.
package configcheck // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/configcheck"
