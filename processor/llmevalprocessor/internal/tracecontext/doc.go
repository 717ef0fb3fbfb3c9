// Package tracecontext remembers, per trace, the retrieved documents and
// tool results of the spans the llm_eval processor has seen, so a
// generation can be judged against context recorded on other spans of its
// trace (a RETRIEVER sibling, an execute_tool child of the agent).
//
// # Design note for the processor
//
// The index never holds or changes a span: it keeps copies of context texts
// and a compact parent link (span id, parent id: 32 bytes, appended to a
// per-trace list and only turned into a map when a query walks it) per span
// of the traces it knows. A trace becomes known when a GenAI span of it is
// added (a context source, a generation, an agent or a chain); links of
// other spans are only kept for known traces, so traffic without GenAI spans costs one map lookup per
// span and no memory. Spans are normally exported when they end, and a
// parent ends after its children, so the ancestors of a generation or of a
// retrieval arrive in the same or a later batch, after the trace is known.
//
// Per batch, the processor calls:
//
//   - Add for every span genai.Classify calls KindContext (with the texts of
//     genai.ReadContext), KindGeneration or KindAggregate (agents, chains,
//     workflows: a LangChain chain span may end, and arrive, before the
//     retriever below it), before the span leaves the batch. Add reports whether the trace gained context,
//     which is the signal to re-check generations waiting for it;
//   - LinkAll once for every batch, after its spans were classified, to
//     record the parent links of the other spans of known traces (one lock
//     per batch), also for batches without any GenAI span: the plain spans
//     between a generation and its retriever often come alone. It returns
//     the known traces it linked, whose waiting generations may now reach
//     context.
//
// Only traces whose generations can be scored need the index: the
// processor can skip spans of traces its sampler rejects (the decision is a
// function of the trace id), which keeps unsampled traffic at zero cost.
//
// At dispatch, ContextFor returns the de-duplicated documents for one
// generation (ScopeSiblings or ScopeTrace) or for an agent span
// (ScopeSubtree).
//
// When a scorer judges agent trajectories, Add also takes the span's step
// record (genai.ReadStep: a model call with its tool calls, a tool
// execution, a nested agent), kept under the same bounds as the texts: each
// text cut to MaxDocumentBytes and marked, interned with the documents of
// the trace (a tool span's result is held once when its step and its
// document read the same text), the record dropped whole
// and counted when its trace reached MaxTraceBytes. StepsBelow returns the
// steps of one agent span's run in start order, and Trajectory assembles
// them into the run's scoring.Trajectory (trajectory.go). Without such a scorer no step is read or kept.
//
// Bounds: the number of traces, the bytes held (texts plus an estimate of
// the bookkeeping), a per-document and per-trace byte cap, and a TTL since
// the trace was last added to. Eviction removes the least recently added-to
// trace first; Stats counts evictions by cause and what the caps dropped.
// Parent walks are bounded in depth, so cycles in parent ids and parents
// that never arrive cost a bounded walk and nothing else. All methods are
// safe for concurrent use.
package tracecontext // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/tracecontext"
