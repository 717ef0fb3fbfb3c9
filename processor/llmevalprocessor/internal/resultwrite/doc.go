// Package resultwrite writes evaluation results as OpenTelemetry data: a
// gen_ai.evaluation.result event and the flat llm_eval.<scorer>.*
// attributes on a span, a child span for a result that arrived after its
// span left, and gen_ai.evaluation.result log records.
package resultwrite // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/resultwrite"
