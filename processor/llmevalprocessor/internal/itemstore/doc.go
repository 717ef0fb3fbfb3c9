// Package itemstore keeps the items of one llm_eval component in a
// Collector storage extension (the storage setting): it is the
// evalstore.Journal that writes them through internal/durable, holds what
// it found at start until each signal's instance takes it, and keeps the
// log records of calls still being joined.
package itemstore // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/itemstore"
