// Package resultwrite is the way out of the processor: it writes
// evaluation results as OpenTelemetry data (a gen_ai.evaluation.result
// event and the flat llm_eval.<scorer>.* attributes on a span, a child
// span for a result that arrived after its span left, gen_ai.evaluation.result
// log records) and sends spans and records to the next consumer, counted
// as the processor's output.
package resultwrite // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/resultwrite"
