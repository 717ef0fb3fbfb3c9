package subject // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/subject"

import (
	"context"
	"slices"
	"time"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/conversation"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/persistence"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/resultwrite"
	"github.com/llm-eval/llm_eval/scoring"
)

// Conversation is a conversation that ended, scored as a whole by the
// scorers that target conversations. Its results leave on a span of their
// own: a child of its latest turn's span, in that turn's trace and under
// its resource. The turn's span itself left long before (spans are never
// held for a conversation).
type Conversation struct {
	conversation.Ended
	out   *SpanOut
	scope string
	// leftOut are the scorers whose sampling leaves the conversation out.
	leftOut map[string]bool
}

var (
	_ evalstore.Subject     = (*Conversation)(nil)
	_ persistence.Stored    = (*Conversation)(nil)
	_ persistence.Replacing = (*Conversation)(nil)
)

// NewConversation makes the subject of an ended conversation; scope names
// the spans its results leave on, and leftOut are the scorers whose
// sampling leaves it out.
func NewConversation(out *SpanOut, scope string, e conversation.Ended, leftOut map[string]bool) *Conversation {
	return &Conversation{Ended: e, out: out, scope: scope, leftOut: leftOut}
}

// Case is the whole conversation: every message kept, in order, with one
// omitted turn standing for the messages left out to keep it bounded, and
// the system prompt as the role it had to keep. A message or system prompt
// cut on its way here (readerCut) is marked so (Turn.Cut, Case.Cut).
func (c *Conversation) Case(sc evalstore.Scorer) scoring.Case {
	turns := make([]scoring.Turn, 0, 2*len(c.Exchanges)+1)
	for i := range c.Exchanges {
		if c.Omitted > 0 && i == c.OmittedAt {
			turns = append(turns, scoring.Turn{Role: scoring.RoleOmitted, Count: c.Omitted})
		}
		ex := &c.Exchanges[i]
		turns = append(turns, scoring.Turn{Role: scoring.RoleUser, Content: ex.Input, Cut: readerCut(ex.Input)},
			scoring.Turn{Role: scoring.RoleAssistant, Content: ex.Output, Cut: readerCut(ex.Output)})
	}
	if c.Omitted > 0 && c.OmittedAt >= len(c.Exchanges) {
		turns = append(turns, scoring.Turn{Role: scoring.RoleOmitted, Count: c.Omitted})
	}
	cs := scoring.Case{Turns: turns, Metadata: map[string]string{"conversation_id": c.Key.ID, "service": c.Key.Service}}
	switch {
	case len(sc.Instructions) > 0:
		cs.Instructions = sc.Instructions
	case sc.UseSystemInstructions:
		cs.Instructions = c.Instructions
		if slices.ContainsFunc(cs.Instructions, readerCut) {
			cs.Cut = append(cs.Cut, scoring.FieldInstructions)
		}
	}
	return cs
}

// Skips leaves out every scorer that does not score conversations, and
// those whose sampling leaves this one out.
func (c *Conversation) Skips(sc evalstore.Scorer) bool { return !sc.Conversation || c.leftOut[sc.Name] }

// Leave writes the results on the conversation's result span and sends it.
func (c *Conversation) Leave(ctx context.Context, results []evalstore.Result) {
	var out []evalstore.Result
	for _, r := range results {
		if !r.Skipped {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return
	}
	c.out.Sink.ForwardLater(ctx, resultwrite.NewConversationSpan(c.written(), out, c.out.Policy.Redact))
}

// Late sends a result that finished after the conversation left on a span
// of its own, or only counts it, as late_results says.
func (c *Conversation) Late(ctx context.Context, r evalstore.Result) {
	if !c.out.Policy.EmitsLate(r.Label()) {
		c.out.Tel.LateResultDropped(ctx, r.Scorer)
		return
	}
	c.out.Tel.LateResult(ctx, r.Scorer)
	c.out.Sink.ForwardLater(ctx, resultwrite.NewConversationSpan(c.written(), []evalstore.Result{r}, c.out.Policy.Redact))
}

// written is what the result span says of the conversation.
func (c *Conversation) written() resultwrite.Conversation {
	last := c.Last()
	return resultwrite.Conversation{
		ID: c.Key.ID,
		Last: resultwrite.Evaluated{
			TraceID: last.TraceID, SpanID: last.SpanID, Model: last.Model, AgentName: last.AgentName,
		},
		Resource: c.Resource,
		Scope:    c.scope,
		Messages: c.Messages(),
		Omitted:  c.Omitted,
	}
}

// Record implements persistence.Stored.
func (c *Conversation) Record(admitted time.Time) ([]byte, error) {
	return persistence.EncodeConversation(c.Ended, admitted)
}

// Replaces are the records of the open conversation, which go when it is
// stored as an item (persistence.Replacing).
func (c *Conversation) Replaces() []uint64 { return c.Stored }
