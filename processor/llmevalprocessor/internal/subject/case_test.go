package subject

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/conversation"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/resultwrite"
	"github.com/llm-eval/llm_eval/scoring"
)

// TestCaseCarriesTheConversationAndTheReadersCut checks what a call's
// case holds beside its request: the conversation before it (the genai
// reader's window is the scorers', scoring.DefaultHistoryTurns), and the
// reader's cut at 1 MiB: a text ending with scoring.TruncationMarker was
// cut by the reader (it neutralises a marker a text it did not cut ends
// with, TestClipTextMarksOnlyItsCut in genai), so the marker stays on a
// context item, and an input, output or system instruction so cut is
// listed in Case.Cut for the scorers to keep its marker (issue 36 item 1).
func TestCaseCarriesTheConversationAndTheReadersCut(t *testing.T) {
	assert.Equal(t, scoring.DefaultHistoryTurns, genai.MaxHistoryTurns)
	gen := genai.Generation{
		Input:     "Yes, go ahead.",
		Output:    "Booked.",
		History:   []genai.Turn{{Role: "user", Content: "Find a flight."}, {Role: "assistant", Content: "TAP at 9:40?"}},
		Documents: []string{"Flight list" + scoring.TruncationMarker},
	}
	c := caseFromGeneration(gen, resultwrite.Evaluated{}, evalstore.Scorer{FromTrace: true})
	assert.Equal(t, []scoring.Turn{{Role: scoring.RoleUser, Content: "Find a flight."}, {Role: scoring.RoleAssistant, Content: "TAP at 9:40?"}}, c.Turns)
	assert.Equal(t, []string{"Flight list" + scoring.TruncationMarker}, c.Context)
	assert.Empty(t, c.Cut)
	assert.Empty(t, caseFromGeneration(genai.Generation{Input: "Hi"}, resultwrite.Evaluated{}, evalstore.Scorer{}).Turns)

	cut := genai.Generation{
		Input:              "Summarise" + scoring.TruncationMarker,
		Output:             "A long answer" + scoring.TruncationMarker,
		SystemInstructions: []string{"Be brief.", "A long prompt" + scoring.TruncationMarker},
	}
	c = caseFromGeneration(cut, resultwrite.Evaluated{}, evalstore.Scorer{UseSystemInstructions: true})
	assert.ElementsMatch(t, []scoring.Field{scoring.FieldInput, scoring.FieldOutput, scoring.FieldInstructions}, c.Cut)
	c = caseFromGeneration(cut, resultwrite.Evaluated{}, evalstore.Scorer{Instructions: []string{"Configured."}})
	assert.ElementsMatch(t, []scoring.Field{scoring.FieldInput, scoring.FieldOutput}, c.Cut, "configured instructions are not the reader's")
}

// TestConversationCaseMarksTheReadersCut: in an ended conversation's case
// a message or system prompt the reader cut at 1 MiB (ending with
// scoring.TruncationMarker) is marked cut, so the scorers keep its marker
// and flag the result truncated; the other messages are not.
func TestConversationCaseMarksTheReadersCut(t *testing.T) {
	c := &Conversation{Ended: conversation.Ended{
		Exchanges: []conversation.Exchange{
			{Input: "Plan a trip" + scoring.TruncationMarker, Output: "Where to?"},
			{Input: "Lisbon", Output: "Here is a plan" + scoring.TruncationMarker},
		},
		Instructions: []string{"Be a travel agent" + scoring.TruncationMarker},
	}}
	cs := c.Case(evalstore.Scorer{UseSystemInstructions: true})
	var cut []bool
	for _, tn := range cs.Turns {
		cut = append(cut, tn.Cut)
	}
	assert.Equal(t, []bool{true, false, false, true}, cut)
	assert.Equal(t, []scoring.Field{scoring.FieldInstructions}, cs.Cut)
	assert.Empty(t, c.Case(evalstore.Scorer{Instructions: []string{"Configured."}}).Cut, "configured instructions are not the reader's")
}
