package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"fmt"
	"slices"
	"time"

	"github.com/llm-eval/llm_eval/internal/duration"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/configcheck"
	"github.com/llm-eval/llm_eval/scoring"
)

// The keys for conversations (issue 40). In YAML:
//
//	conversation:
//	  id_attributes: [app.chat_id]   # read before the built-in ones
//	  idle_timeout: 5m               # a conversation ends this long after its last turn arrived
//	  max_turns: 50                  # messages kept per conversation (first and latest)
//	  max_conversation_bytes: 131072 # texts kept per conversation
//	  max_conversations: 10000       # open at once
//	  max_bytes: 67108864            # texts kept by all open conversations
//	scorers:
//	  - name: conversation_completeness   # targets [conversation]
//
// Conversations are held only while a scorer targets them.

// ConversationConfig groups generations and agent runs into conversations
// by the conversation id their spans carry, and bounds what is held of
// them until they are scored.
type ConversationConfig struct {
	// IDAttributes are span attributes read for the conversation id before
	// the built-in ones (gen_ai.conversation.id, session.id, ...;
	// docs/libraries.md#conversations).
	IDAttributes []string `mapstructure:"id_attributes"`
	// IdleTimeout ends a conversation when no turn of it arrived for this
	// long (default 5m).
	IdleTimeout time.Duration `mapstructure:"idle_timeout"`
	// MaxTurns bounds the messages kept of one conversation, and sent to
	// the judge: its first and its latest; those between are counted and
	// the judge is told how many (default 50).
	MaxTurns int `mapstructure:"max_turns"`
	// MaxConversationBytes bounds the texts kept of one conversation
	// (default 128 KiB); a message longer than a quarter of it is cut.
	MaxConversationBytes int `mapstructure:"max_conversation_bytes"`
	// MaxConversations bounds the conversations open at once (default
	// 10,000); turns of new ones beyond it are refused and counted.
	MaxConversations int `mapstructure:"max_conversations"`
	// MaxBytes bounds the texts kept by every open conversation together
	// (default 64 MiB); turns beyond it are refused and counted.
	MaxBytes int `mapstructure:"max_bytes"`
}

// Defaults of the conversation section. Five minutes of quiet is Phoenix's
// session delay, and long enough for a person to read an answer and type
// the next question; a conversation that goes on later is scored again as
// a new one.
const (
	defaultConversationIdle      = 5 * time.Minute
	defaultConversationBytes     = 128 << 10
	defaultMaxConversations      = 10_000
	defaultConversationsMaxBytes = 64 << 20
	// minConversationTurns keeps the first exchange, the mark of the
	// messages left out and the latest exchange (2 + 1 + 2).
	minConversationTurns      = 5
	maxConversationTurns      = 10_000
	minConversationBytes      = 4 << 10
	likelyMaxConversationIdle = 24 * time.Hour
)

func defaultConversationConfig() ConversationConfig {
	return ConversationConfig{
		IdleTimeout:          defaultConversationIdle,
		MaxTurns:             scoring.DefaultMaxTurns,
		MaxConversationBytes: defaultConversationBytes,
		MaxConversations:     defaultMaxConversations,
		MaxBytes:             defaultConversationsMaxBytes,
	}
}

// Validate checks the section; the collector prefixes the errors with
// conversation.
func (cc *ConversationConfig) Validate() error {
	var errs []error
	for i, k := range cc.IDAttributes {
		switch {
		case k == "":
			errs = append(errs, fmt.Errorf("id_attributes::%d: must not be empty", i))
		case slices.Index(cc.IDAttributes, k) < i:
			errs = append(errs, fmt.Errorf("id_attributes::%d: duplicate attribute %q", i, k))
		}
	}
	if err := duration.AtLeast(cc.IdleTimeout, minWait, likelyMaxConversationIdle); err != nil {
		errs = append(errs, fmt.Errorf("idle_timeout: %w", err))
	}
	if cc.MaxTurns < minConversationTurns || cc.MaxTurns > maxConversationTurns {
		errs = append(errs, fmt.Errorf("max_turns: must be between %d and %d, got %d", minConversationTurns, maxConversationTurns, cc.MaxTurns))
	}
	if cc.MaxConversationBytes < minConversationBytes {
		errs = append(errs, fmt.Errorf("max_conversation_bytes: must be at least %d, got %d", minConversationBytes, cc.MaxConversationBytes))
	}
	if cc.MaxConversations < 1 {
		errs = append(errs, fmt.Errorf("max_conversations: must be at least 1, got %d", cc.MaxConversations))
	}
	if cc.MaxBytes < cc.MaxConversationBytes {
		errs = append(errs, fmt.Errorf("max_bytes: must be at least max_conversation_bytes (%d), got %d", cc.MaxConversationBytes, cc.MaxBytes))
	}
	return configcheck.JoinFields(errs)
}
