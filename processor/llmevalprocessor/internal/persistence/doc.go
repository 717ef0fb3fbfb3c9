// Package persistence keeps the items of one llm_eval component in a
// Collector storage extension (the storage setting), so that a crash does
// not lose them, and reads them back at start. It holds four things, each
// in its file:
//
//   - record.go: the encoding of what is stored for one admitted item;
//   - journal.go: the Journal, which writes items and results to one
//     storage client and reads them back;
//   - keeper.go: the Keeper, the evalstore.Journal of a component, which
//     holds what was found at start until each signal's instance takes it;
//   - file.go and check.go: opening the storage so that a storage file that
//     is damaged never stops the collector, and one that is sound but
//     cannot be used is never thrown away.
//
// # Records
//
// Every record starts with the two magic bytes "le" and a format version,
// and ends with a CRC-32C of everything before it, so a record cut short by a
// crash, changed on disk or written by another release is told apart from a
// good one instead of being misread. Sizes are bounded on both sides: Encode
// refuses a record over its limit, Decode refuses one before reading it.
//
// Format version 1, all integers big-endian, strings and byte fields as a
// uvarint length followed by the bytes:
//
//	item:   "le" 0x01 'I' kind(1 byte) admitted(int64 unix ns) payload(bytes) crc32c(4 bytes)
//	        payload: OTLP protobuf (span, log call), or two bytes fields,
//	        the span's then the log call's (pair), or a conversation that
//	        ended (kind 4, conversation.go)
//	conversation record: "le" 0x01 'C' ..., an exchange of an open
//	        conversation or the mark of what it left out (conversation.go)
//	result: "le" 0x01 'R' scorer label reason errorType errorMessage score(float64 bits) at(int64 unix ns) flags(1 byte) crc32c(4 bytes)
//	        flags: bit 0 a scorer ran, bit 1 the evaluation failed with an error;
//	        a reader ignores the bits it does not know
//
// # Keys
//
// One storage client per llm_eval component:
//
//	i/<id>           an admitted item (an item record)
//	r/<id>/<scorer>  a result recorded for item <id> by scorer <scorer>
//	j/<call>/<id>    a log record of a call still being joined (a log-call
//	                 item record of one log record); <call> is the trace and
//	                 span id, 48 hex digits
//	c/<id>           a record of an open conversation (internal/conversation):
//	                 an exchange, or the mark of the messages it left out
//
// <id> is 16 lower-case hex digits, increasing across restarts (the next
// id is one above the highest found at start), so keys sort in write
// order. An item is written when it is admitted (Queue, then Commit: the
// items of one batch share a transaction); a result that finishes
// while others of its item are still pending is written with the next
// write, or within ResultDelay, whichever comes first (not at all if its
// item leaves before); the item with all its results is deleted, in one
// transaction, once it has been sent on. A log
// record waiting for the rest of its call is written when the joiner takes
// it and deleted once its call has been read and admitted (or refused). A
// record of an open conversation is queued when its exchange is added
// (PutConversation; the ConsumeTraces that added it commits) and deleted
// when the exchange is left out; a conversation that ended is queued as an
// item together with the deletion of its records (QueueReplacing), so one
// transaction holds both.
//
// Every write is one storage transaction (with file_storage, one bbolt
// transaction: all of it is on disk or none of it is). Writes are
// serialized by the Journal; storage serializes them anyway. Queue, Rewrite,
// Record and the conversation writes never wait for a write in progress, so that their callers
// (the store, under its lock) never wait for the disk.
package persistence // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/persistence"
