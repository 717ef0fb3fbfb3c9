// Package conversation holds the open conversations of one llm_eval
// component: the exchanges (a user's message and the assistant's reply)
// that spans carrying the same conversation id recorded, until the
// conversation has been quiet for the idle timeout and is handed on to be
// scored as a whole.
//
// A conversation is keyed by the service that sent it and its id (Key), so
// two services using the same id hold two conversations. Its exchanges are
// kept in the order the spans started, whatever order they arrive in; a
// trace's agent span stands for the generations below it, and a
// generation seen twice (a second copy, or a later step of the same
// request) counts once. An exchange whose span names no id of its own takes
// the id another span of its trace names (Langfuse and Mastra put it on the
// run's root or agent span, which ends, and so arrives, last): such an
// exchange waits for that id for at most the pending wait, and only for
// services that have sent ids before.
//
// Every bound holds at all times, and what a bound leaves out is reported
// to the Observer with its reason:
//
//   - max_turns: a conversation keeps its first messages and its latest
//     ones; the messages between them are left out, counted, and stand as
//     one omitted mark where they were (the judge is told how many);
//   - max_conversation_bytes: the same, when the texts held pass the bytes
//     of one conversation; a message longer than a quarter of them is cut;
//   - max_conversations, max_bytes: an exchange that would open a
//     conversation beyond max_conversations, or hold texts beyond max_bytes
//     in all, is refused;
//   - late: an exchange of a conversation that has ended, which started
//     before that conversation's last exchange ended, is refused: its
//     conversation was scored without it.
//
// A conversation ends when no exchange came for the idle timeout, counted
// from when its last exchange arrived; no convention the package reads
// has an explicit end. It is then handed to the OnEnd function, which
// admits it for scoring; when that cannot take it now (the store is full)
// the conversation stays open and is tried again a second later.
//
// With a Journal, every exchange is written (queued) when it is added and
// deleted when it is dropped, and the conversation's records are handed
// on with it when it ends, so a restart loses no open conversation
// (Restore). The Journal is called with the Keeper's lock held and only
// queues; OnEnd is called with the lock held too, so OnEnd (and the store
// it admits to) must never call back into the Keeper.
package conversation // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/conversation"
