// Package evalstore holds the items admitted for evaluation from admission
// until they leave, and runs their evaluations on a pool of workers.
//
// An item's life is a small state machine; its states are named (State)
// and every change of state goes through one function, moveTo (item.go),
// under the store's one lock, which keeps what each state holds in step:
//
//   - StateAdmitted: taken in. Log events that wait for their span go to
//     StatePairing; a span without content that waits for its log events
//     goes to StateWaitingForEvents; any other item begins.
//   - Beginning, an item whose trace has no context yet goes to
//     StateWaitingForContext, any other to StateEvaluating.
//   - StatePairing: when the span comes, or the events alone reach
//     cross_signal_wait, the item begins.
//   - StateWaitingForEvents (outside queue_size, in the waiting area of
//     eventswait.go): when its events come it takes a queue_size slot and
//     begins (or, queue_size full, leaves queue_full); alone at
//     cross_signal_wait it goes to StateLeft, not scorable.
//   - StateWaitingForContext: when the context comes, or context_wait
//     passes, StateEvaluating.
//   - Any state but StateLeft: at its last result, at max_wait or at
//     shutdown, StateLeft.
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
// Pair (calls.go holds the table of such calls), storage is a Journal and
// telemetry an Observer, all given from outside. Each is an interface of a few methods, so the package is
// tested with plain Go values.
package evalstore // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
