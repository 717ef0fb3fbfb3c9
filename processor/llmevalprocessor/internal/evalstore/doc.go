// Package evalstore holds the items admitted for evaluation from admission
// until they leave, and runs their evaluations on a pool of workers.
//
// An item's life is a small state machine; its states are named (State)
// and every change of state happens in this package, under the store's
// one lock:
//
//	admit ─► StatePairing (events) ──(their span, or alone at cross_signal_wait)─┐
//	  ├────► WaitingForEvents (span without content, outside queue_size) ───┐     │
//	  │         ├──(its events: takes a queue_size slot)────────────────────┼─────┤
//	  │         └──(none at cross_signal_wait: not scorable)──► Left        │     │
//	  ├────► WaitingForContext ──(context arrived, or context_wait)──┐      │     │
//	  └───────────────────────────────────────────────────► Evaluating ◄────┴─────┘
//	Evaluating ──(last result, max_wait, shutdown)──► Left
//
// A span without content is not admitted at all when the waiting area is
// full or its service is known to send no events (eventswait.go).
//
// Every held item leaves exactly once, with one result per scorer:
// the results in at the time and a marker (max_wait, shutdown, restarted)
// for each evaluation not finished. Results finishing after that go to the
// item's Late method; after shutdown they are dropped.
//
// The store knows nothing of spans or log records: what it evaluates is a
// Subject, the two halves of a call seen on both signals are joined by a
// Pair, storage is a Journal and telemetry an Observer, all given from
// outside. Each is an interface of a few methods, so the package is
// tested with plain Go values.
package evalstore // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
