package conversation

import (
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llm-eval/llm_eval/scoring"
)

// Key identifies one conversation: the service.name of the application
// that sent it and the conversation id its spans carry.
type Key struct {
	Service string
	ID      string
}

// Exchange is one turn of a conversation as one span recorded it: the
// user's message and the assistant's reply to it.
type Exchange struct {
	TraceID pcommon.TraceID
	SpanID  pcommon.SpanID
	// Start and End are the span's: a conversation is ordered by Start.
	Start, End time.Time
	// Received is when the exchange reached the collector; the idle
	// timeout runs from the last one of a conversation.
	Received time.Time
	// Agent: read from an agent span, which stands for the generations of
	// its run.
	Agent     bool
	Model     string
	AgentName string
	Input     string // the user's message
	Output    string // the assistant's reply
	// Instructions are the system prompt the assistant had; the
	// conversation keeps those of its latest exchange.
	Instructions []string
	// Resource is the span's resource. It is borrowed: read during Offer
	// only (the conversation copies the latest exchange's), never kept.
	Resource pcommon.Resource
}

// messages is how many messages the exchange holds: its input and output
// when not blank.
func (e *Exchange) messages() int {
	n := 0
	if strings.TrimSpace(e.Input) != "" {
		n++
	}
	if strings.TrimSpace(e.Output) != "" {
		n++
	}
	return n
}

// What held state costs besides its texts, as BenchmarkOpenConversationMemory
// measured it (a little over, so that max_bytes bounds the heap): an
// exchange's struct, its slot and its record id; a conversation's struct,
// map entry, list element and bookkeeping. A conversation's resource is
// counted by its attributes (resourceBytes).
const (
	exchangeOverhead     = 300
	conversationOverhead = 512
)

// textBytes are the bytes of the exchange's texts held in memory.
func (e *Exchange) textBytes() int {
	return len(e.Input) + len(e.Output) + len(e.Model) + len(e.AgentName)
}

// instructionBytes are the bytes of a system prompt held once per
// conversation.
func instructionBytes(in []string) int {
	n := 0
	for _, s := range in {
		n += len(s)
	}
	return n
}

// CutMark ends a message cut to fit a conversation's bytes. It is the
// scorers' truncation marker, so the case builder marks the message cut
// and the result says it is truncated.
const CutMark = scoring.TruncationMarker

// cut bounds s to limit bytes on a rune boundary, ending it with CutMark,
// and reports whether it cut.
func cut(s string, limit int) (string, bool) {
	if len(s) <= limit {
		return s, false
	}
	end := max(limit-len(CutMark), 0)
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + CutMark, true
}

// Ended is a conversation handed on to be scored.
type Ended struct {
	Key Key
	// Exchanges are every exchange kept, in the order their spans started.
	Exchanges []Exchange
	// Omitted messages were left out to keep the conversation within its
	// bounds; they sat before Exchanges[OmittedAt].
	Omitted   int
	OmittedAt int
	// Instructions are the system prompt of the latest exchange that had one.
	Instructions []string
	// Resource is the latest exchange's resource: the results are written
	// under it.
	Resource pcommon.Resource
	// Stored are the ids of the conversation's records in the Journal,
	// which go when the ended conversation is stored in their place.
	Stored []uint64
}

// Last is the conversation's latest exchange: its span is the one the
// results are about.
func (e Ended) Last() Exchange {
	if len(e.Exchanges) == 0 {
		return Exchange{}
	}
	return e.Exchanges[len(e.Exchanges)-1]
}

// Messages is how many messages the conversation had, those left out
// included.
func (e Ended) Messages() int {
	n := e.Omitted
	for i := range e.Exchanges {
		n += e.Exchanges[i].messages()
	}
	return n
}
