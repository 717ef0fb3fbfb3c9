package subject

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/resultwrite"
	"github.com/llm-eval/llm_eval/scoring"
)

// TestCaseCarriesTheConversationAndNeutralisedContext checks what a call's
// case holds beside its request: the conversation before it (the
// genai reader's window is the scorers', scoring.DefaultHistoryTurns), and its
// own documents with any marker they wrote themselves neutralised, since
// the scorers take a trailing marker on a context item as a cut made
// before them (issue 36 items 1 and 3).
func TestCaseCarriesTheConversationAndNeutralisedContext(t *testing.T) {
	assert.Equal(t, scoring.DefaultHistoryTurns, genai.MaxHistoryTurns)
	gen := genai.Generation{
		Input:     "Yes, go ahead.",
		Output:    "Booked.",
		History:   []genai.Turn{{Role: "user", Content: "Find a flight."}, {Role: "assistant", Content: "TAP at 9:40?"}},
		Documents: []string{"Flight list" + scoring.TruncationMarker},
	}
	c := caseFromGeneration(gen, resultwrite.Evaluated{}, evalstore.Scorer{FromTrace: true})
	assert.Equal(t, []scoring.Turn{{Role: scoring.RoleUser, Content: "Find a flight."}, {Role: scoring.RoleAssistant, Content: "TAP at 9:40?"}}, c.Turns)
	assert.Equal(t, []string{"Flight list [...]"}, c.Context)
	assert.Empty(t, caseFromGeneration(genai.Generation{Input: "Hi"}, resultwrite.Evaluated{}, evalstore.Scorer{}).Turns)
}
