package promptalignment

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
)

// userReply scripts an analyze reply: system verdicts, then the user's
// instructions the judge found and judged.
func userReply(system []string, user ...map[string]string) map[string][]string {
	var vs []map[string]string
	for _, v := range system {
		vs = append(vs, map[string]string{"verdict": v, "reason": "r"})
	}
	if vs == nil {
		vs = []map[string]string{}
	}
	if user == nil {
		user = []map[string]string{}
	}
	return map[string][]string{SchemaVerdicts: {testkit.MustJSON(map[string]any{"verdicts": vs, "user_instructions": user})}}
}

// TestUserInstructionsAreJudged checks the instructions of the user's
// message are judged, as Mastra's prompt alignment judges the user prompt:
// by default beside the system instructions, and which messages count is
// set with Options.InstructionSources (issue 36 item 6).
func TestUserInstructionsAreJudged(t *testing.T) {
	haiku := map[string]string{"instruction": "Write a haiku about autumn", "verdict": "yes", "reason": "It is a haiku about autumn."}
	french := map[string]string{"instruction": "in French", "verdict": "no", "reason": "It is in English."}
	c := scoring.Case{
		Input:  "Write a haiku about autumn, in French.",
		Output: "Red leaves drift and fall / the maple lets go its last / cold wind in the yard",
	}
	withSystem := c
	withSystem.Instructions = []string{"Never use emoji."}
	tests := []struct {
		name        string
		sources     scoring.InstructionSources
		c           scoring.Case
		replies     map[string][]string
		wantLabel   scoring.Label
		wantScore   float64
		wantCalls   int
		wantInBlock string // in the analyze request's user message
		notInBlock  string
	}{
		{"default: the user's instructions alone", "", c, userReply(nil, haiku, french), scoring.LabelPass, 0.5, 1, `<<<INPUT`, "<<<INSTRUCTIONS\n1."},
		{"default: both", "", withSystem, userReply([]string{"yes"}, haiku, french), scoring.LabelPass, 0.67, 1, "1. \"Never use emoji.\"", ""},
		{"system only", scoring.SourcesSystem, withSystem, userReply([]string{"yes"}), scoring.LabelPass, 1, 1, "return an empty user_instructions list", ""},
		{"system only, no system prompt", scoring.SourcesSystem, c, nil, scoring.LabelNotScorable, 0, 0, "", ""},
		{"user only", scoring.SourcesUser, withSystem, userReply(nil, haiku, french), scoring.LabelPass, 0.5, 1, `"Write a haiku about autumn, in French."`, "Never use emoji."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := testkit.NewJudge(tt.replies)
			res := testkit.Scorer(t, New, j, scoring.Options{OmitReason: true, InstructionSources: tt.sources}).Score(context.Background(), tt.c)
			require.Equal(t, tt.wantLabel, res.Label, "%v %s", res.Err, res.Reason)
			assert.Equal(t, tt.wantScore, res.Score)
			reqs := j.Requests()
			require.Len(t, reqs, tt.wantCalls)
			if tt.wantCalls == 0 {
				return
			}
			user := reqs[0].Messages[1].Content
			assert.Contains(t, user, tt.wantInBlock)
			if tt.notInBlock != "" {
				assert.NotContains(t, user, tt.notInBlock)
			}
			got := res.Steps.Analyze.(Verdicts)
			if tt.sources != scoring.SourcesSystem {
				require.Len(t, got.User, 2)
				assert.Equal(t, "in French", got.User[1].Instruction)
			}
		})
	}
}

// TestUserInstructionsReadTheConversation checks a follow-up: the user's
// instructions of earlier turns that still apply reach the judge with the
// request.
func TestUserInstructionsReadTheConversation(t *testing.T) {
	j := testkit.NewJudge(userReply(nil, map[string]string{"instruction": "Answer in French from now on", "verdict": "no", "reason": "English."}))
	c := scoring.Case{
		Turns:  []scoring.Turn{{Role: scoring.RoleUser, Content: "Answer in French from now on."}, {Role: scoring.RoleAssistant, Content: "D'accord."}},
		Input:  "What is the capital of Peru?",
		Output: "Lima.",
	}
	res := testkit.Scorer(t, New, j, scoring.Options{OmitReason: true}).Score(context.Background(), c)
	require.NoError(t, res.Err)
	assert.Equal(t, 0.0, res.Score)
	assert.Contains(t, j.Requests()[0].Messages[1].Content, `{"turn":1,"role":"user","content":"Answer in French from now on."}`)
}

// TestBadInstructionSources checks an unknown setting is refused.
func TestBadInstructionSources(t *testing.T) {
	_, err := New(testkit.NewJudge(nil), scoring.Options{InstructionSources: "assistant"})
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "instruction sources"), err.Error())
}
