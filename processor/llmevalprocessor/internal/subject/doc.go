// Package subject holds what the store of internal/evalstore evaluates and
// where the results go: a held generation or agent span (HeldSpan), a call read
// from GenAI log events (LogCall), the Pair of both halves of one call, and a
// conversation that ended (Conversation), whose results leave on a span of
// their own.
// It builds each scorer's case, joining the context and the agent
// trajectory of the span's trace (TraceJoin), and on leaving writes the
// results with internal/resultwrite and hands them to a sink.
//
// It sees a scorer's configuration only as the plain facts of evalstore.Scorer and
// the processor's telemetry and consumers only through small interfaces,
// so it does not depend on the processor's root package.
package subject // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/subject"
