package pipeline_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
	"github.com/llm-eval/llm_eval/scoring/scorers"
)

// TestCaseDataComesLast checks the layout every step's prompt follows for
// providers' prefix caches: the system message (instructions, example,
// reply format) and the user message up to its first data block are the
// same whatever the case, so every call of a step shares them. What
// depends on the case, the data and the sentences that name its counts,
// its chunk, its score or what was left out, comes after. Every prompt of
// every scorer's set is rendered, so a new scorer's prompts are held to
// the rule too. With -v it logs how much of each step's prompt every case
// shares (BENCHMARKS.md).
func TestCaseDataComesLast(t *testing.T) {
	crit := &criterion{name: "grounded", text: "Grounded.", binary: true,
		fields: map[string]bool{"input": true, "context": true, "instructions": true}}
	base := func() pipeline.PromptData {
		d := trajectoryDataWith("The library opened in 1974.")
		d.Criterion = crit
		return d
	}
	three := []string{"First.", "Second.", "Third."}
	conversation := []scoring.Turn{
		{Role: scoring.RoleUser, Content: "I'm vegetarian. A restaurant for tonight?"},
		{Role: scoring.RoleAssistant, Content: "Le Potager serves vegetarian dishes."},
		{Role: scoring.RoleUser, Content: "I live in Lyon. A museum too?"},
		{Role: scoring.RoleAssistant, Content: "The Musée des Confluences."},
	}
	variants := []struct {
		name   string
		change func(*pipeline.PromptData)
	}{
		{"other texts", func(d *pipeline.PromptData) {
			o := trajectoryDataWith("Quite another text.")
			o.Criterion = crit
			*d = o
		}},
		{"three of each", func(d *pipeline.PromptData) { d.Items, d.Context, d.Instructions = three, three, three }},
		{"none of each", func(d *pipeline.PromptData) { d.Items, d.Context, d.Instructions = nil, nil, nil }},
		{"the output as the one item", func(d *pipeline.PromptData) { d.Items = []string{d.Output} }},
		{"a chunk of a long context", func(d *pipeline.PromptData) { d.Part, d.Parts = 2, 3 }},
		{"a context cut upstream", func(d *pipeline.PromptData) { d.ContextCut = true }},
		{"a conversation before the request", func(d *pipeline.PromptData) {
			d.Turns = pipeline.HistoryLines([]scoring.Turn{{Role: scoring.RoleUser, Content: "Find a table."}, {Role: scoring.RoleAssistant, Content: "For how many?"}})
		}},
		{"a conversation with two replies and a fact", func(d *pipeline.PromptData) {
			d.Turns = pipeline.TurnLines(conversation)
			d.Targets = []pipeline.TurnTarget{{Turn: 2, From: 1}, {Turn: 4, From: 1}}
			d.Facts = []any{map[string]any{"turn": 1, "fact": "The user is vegetarian."}}
		}},
		{"a conversation with messages left out, three replies and two facts", func(d *pipeline.PromptData) {
			d.Turns = pipeline.TurnLines(append([]scoring.Turn{conversation[0], {Role: scoring.RoleOmitted, Count: 40}}, conversation[1:]...))
			d.Targets = []pipeline.TurnTarget{{Turn: 2}, {Turn: 42, From: 30}, {Turn: 44, From: 33}}
			d.Facts = []any{map[string]any{"turn": 1, "fact": "The user is vegetarian."}, map[string]any{"turn": 43, "fact": "The user lives in Lyon."}}
		}},
		{"the user's instructions asked for", func(d *pipeline.PromptData) { d.AskUser = true }},
		{"steps left out", func(d *pipeline.PromptData) { d.Omissions = true }},
		{"no tool calls", func(d *pipeline.PromptData) { d.Calls = 0 }},
		{"tools not known", func(d *pipeline.PromptData) { d.Tools = nil }},
		{"another score", func(d *pipeline.PromptData) {
			d.Score = "0.25"
			d.Verdicts = []any{map[string]string{"claim": "x", "verdict": "no", "reason": "y"}}
		}},
		{"another system prompt", func(d *pipeline.PromptData) { d.SystemPrompt = "Answer in French." }},
	}
	// static is what a provider can cache for every call of the step: the
	// system message and the user message before its first data block.
	static := func(t *testing.T, msgs []scoring.Message) string {
		t.Helper()
		if len(msgs) != 2 {
			t.Fatalf("%d messages, want system and user", len(msgs))
		}
		user := msgs[1].Content
		i := strings.Index(user, "<<<")
		if i < 0 {
			t.Fatalf("user message has no data block:\n%s", user)
		}
		return msgs[0].Content + "\n\n" + user[:i]
	}
	n := 0
	for _, set := range scorers.Prompts() {
		var steps []string // the set's other steps name its reason step
		for _, p := range set.All() {
			if p.Schema.Name != scoring.SchemaReason {
				steps = append(steps, p.Schema.Name)
			}
		}
		slices.Sort(steps)
		for _, p := range set.All() {
			n++
			name := p.Schema.Name
			if name == scoring.SchemaReason {
				name += " after " + strings.Join(steps, ", ")
			}
			t.Run(name, func(t *testing.T) {
				msgs, err := p.Render(base())
				if err != nil {
					t.Fatal(err)
				}
				want := static(t, msgs)
				// shared is what every rendering has in common.
				shared := msgs[0].Content + "\n\n" + msgs[1].Content
				for _, v := range variants {
					d := base()
					v.change(&d)
					msgs, err := p.Render(d)
					if err != nil {
						t.Fatalf("%s: %v", v.name, err)
					}
					if got := static(t, msgs); got != want {
						t.Errorf("%s: the prompt before the first data block depends on the case; it ends\n%q\nwhere the base case's ends\n%q",
							v.name, tail(got), tail(want))
					}
					shared = shared[:testkit.CommonPrefixLen(shared, msgs[0].Content+"\n\n"+msgs[1].Content)]
				}
				t.Logf("%s: %d characters (about %d tokens) shared by every case", name, len(shared), len(shared)/4)
			})
		}
	}
	if n < 15 {
		t.Errorf("%d prompts rendered; every scorer's set should be", n)
	}
}

// tail is the end of a prompt, where two renderings part.
func tail(s string) string {
	if len(s) > 200 {
		return "..." + s[len(s)-200:]
	}
	return s
}
