package genai

import (
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Conversation id attributes: where each convention names the conversation
// (session, thread, chat) a span belongs to. Each was read from what the
// real library sends (test/clients, docs/libraries.md#conversations).
const (
	// AttrConversationID is the GenAI semantic conventions' attribute. Mastra's
	// @mastra/otel-exporter writes the thread id of an agent run there, and
	// OpenLLMetry's node-server-sdk the id of withConversation.
	AttrConversationID = "gen_ai.conversation.id"
	// AttrSessionID is OpenInference's session attribute (setSession of
	// @arizeai/openinference-core) and Langfuse's trace session
	// (propagateAttributes of @langfuse/tracing).
	AttrSessionID = "session.id"
	// attrLangfuseSessionID is the alias Langfuse's ingestion also reads.
	attrLangfuseSessionID = "langfuse.session.id"
)

// DefaultConversationIDKeys are the attributes read for a span's
// conversation id, in this order, after those a user names
// (conversation.id_attributes): the GenAI semantic conventions', then the
// conventions' own.
var DefaultConversationIDKeys = []string{
	AttrConversationID,
	AttrSessionID,
	attrLangfuseSessionID,
	// OpenLLMetry association properties (withAssociationProperties of
	// @traceloop/node-server-sdk): the keys its docs and SDK use for a
	// conversation.
	"traceloop.association.properties.session_id",
	"traceloop.association.properties.conversation_id",
	"traceloop.association.properties.chat_id",
	// Vercel AI SDK 7 with @ai-sdk/otel: runtimeContext entries the call
	// lets into telemetry (includeRuntimeContext).
	"ai.settings.context.sessionId",
	"ai.settings.context.conversationId",
	// Vercel AI SDK up to 6: experimental_telemetry.metadata, the keys
	// OpenLLMetry's node-server-sdk reads as the conversation.
	"ai.telemetry.metadata.conversationId",
	"ai.telemetry.metadata.sessionId",
}

// MaxConversationIDBytes bounds a conversation id. A longer value is no id
// anyone would group by (a prompt or a payload put there by mistake): it is
// refused, and the span is evaluated on its own as without an id.
const MaxConversationIDBytes = 256

// ConversationIDReader reads the conversation id of a span from its
// attributes, trying its keys in order.
type ConversationIDReader struct {
	keys  []string
	order map[string]int
	// firsts marks, by key length, the first bytes of the keys of that
	// length: an attribute whose key matches no (length, first byte) pair is
	// skipped without a map lookup (most are).
	firsts [maxKeyLength + 1][4]uint64
	long   bool // a key is longer than maxKeyLength
}

// maxKeyLength is the longest key length the lengths table covers.
const maxKeyLength = 127

// NewConversationIDReader reads the attributes named in extra first, then
// DefaultConversationIDKeys.
func NewConversationIDReader(extra []string) *ConversationIDReader {
	r := &ConversationIDReader{order: map[string]int{}}
	for _, k := range append(slices.Clone(extra), DefaultConversationIDKeys...) {
		if _, dup := r.order[k]; dup || k == "" {
			continue
		}
		r.order[k] = len(r.keys)
		r.keys = append(r.keys, k)
		if len(k) > maxKeyLength {
			r.long = true
		} else {
			r.firsts[len(k)][k[0]>>6] |= 1 << (k[0] & 63)
		}
	}
	return r
}

// Keys are the attributes read, in order.
func (r *ConversationIDReader) Keys() []string { return r.keys }

// ConversationID is a span's conversation id as read.
type ConversationID struct {
	ID  string // the id; "" when the span names none
	Key string // the attribute it was read from
	// TooLong: the value is longer than MaxConversationIDBytes; ID is
	// empty and the span is not grouped.
	TooLong bool
}

// Read returns the conversation id of attrs: the string (or integer)
// value of the first of its keys that attrs hold with a non-empty value.
// It looks at each attribute once, however many keys there are.
func (r *ConversationIDReader) Read(attrs pcommon.Map) ConversationID {
	best, bestAt := pcommon.Value{}, len(r.keys)
	for k, v := range attrs.All() {
		if !r.mayBeKey(k) {
			continue
		}
		at, ok := r.order[k]
		if !ok || at >= bestAt {
			continue
		}
		switch v.Type() {
		case pcommon.ValueTypeStr:
			if v.Str() == "" {
				continue
			}
		case pcommon.ValueTypeInt:
		default:
			continue
		}
		best, bestAt = v, at
	}
	if bestAt == len(r.keys) {
		return ConversationID{}
	}
	out := ConversationID{Key: r.keys[bestAt]}
	if best.Type() == pcommon.ValueTypeStr && len(best.Str()) > MaxConversationIDBytes {
		out.TooLong = true
		return out
	}
	out.ID = best.AsString()
	return out
}

// mayBeKey reports whether k may be one of the keys: its length and first
// byte are those of one.
func (r *ConversationIDReader) mayBeKey(k string) bool {
	n := len(k)
	switch {
	case n == 0:
		return false
	case n > maxKeyLength:
		return r.long
	}
	return r.firsts[n][k[0]>>6]&(1<<(k[0]&63)) != 0
}
