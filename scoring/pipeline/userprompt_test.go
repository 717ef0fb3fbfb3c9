package pipeline_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/criteria"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
)

// TestUserPromptGolden pins every step's user message, byte for byte, for
// plain, hostile and empty data (go test -run TestUserPromptGolden -update
// rewrites testdata/prompts/user_messages.golden; review the diff). The
// hostile text holds what the escaping must get right: block delimiters,
// quotes, backslashes, control characters, U+2028, invalid UTF-8, HTML
// characters and text beyond ASCII.
func TestUserPromptGolden(t *testing.T) {
	hostile := testkit.Attack + "\t\x01\x1f & <b>x</b> \u2028\u2029 \xff\xfe café 😀"
	type verdict struct {
		Statement string `json:"statement"`
		Verdict   string `json:"verdict"`
		Reason    string `json:"reason,omitempty"`
	}
	points := 7
	variants := []struct {
		name string
		data pipeline.PromptData
	}{
		{"plain", dataWith("The library opened in 1974.")},
		{"hostile", func() pipeline.PromptData {
			d := dataWith(hostile)
			d.Verdicts = append(d.Verdicts, verdict{Statement: hostile, Verdict: "no"}, map[string]any{"points_out_of_10": &points, "reason": "<ok>"})
			return d
		}()},
		{"empty", pipeline.PromptData{Scorer: scoring.Hallucination, Score: "0", Scale: "10"}},
		// A long context's second chunk, with an item cut upstream, and
		// no separate opinion in the text (bias judges the whole output).
		{"chunk 2 of 3, cut upstream, whole output", func() pipeline.PromptData {
			d := dataWith("The library opened in 1974.")
			d.Part, d.Parts, d.ContextCut = 2, 3, true
			d.Context = []string{"The library opened" + scoring.TruncationMarker}
			d.Items = []string{d.Output}
			return d
		}()},
	}
	criterions := []struct {
		name string
		c    *criterion
	}{
		{"output only", &criterion{name: "tone", text: "Polite.", fields: map[string]bool{}}},
		{"all fields", &criterion{name: "grounded", text: "Grounded.", binary: true,
			fields: map[string]bool{"input": true, "context": true, "instructions": true}}},
	}
	var got strings.Builder
	write := func(title string, d pipeline.PromptData, name string) {
		msgs, err := render(name, d)
		if err != nil {
			t.Fatalf("%s: %v", title, err)
		}
		got.WriteString("=== " + title + " ===\n" + msgs[1].Content + "\n\n")
	}
	for _, v := range variants {
		for _, name := range promptNames {
			write(name+" / "+v.name, v.data, name)
		}
		for _, c := range criterions {
			d := v.data
			d.Criterion = c.c
			for _, name := range []string{criteria.SchemaScore, criteria.SchemaBinary, scoring.SchemaReason} {
				write(name+" / "+c.name+" / "+v.name, d, name)
			}
		}
	}
	path := filepath.Join("..", "testdata", "prompts", "user_messages.golden")
	if *updatePrompts {
		if err := os.WriteFile(path, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got.String() != string(want) {
		t.Errorf("user messages differ from %s (run with -update and review the diff)", path)
	}
}

// criterion is a criteria scorer's criterion as its prompts read it.
type criterion struct {
	name, text string
	binary     bool
	fields     map[string]bool
}

func (c *criterion) Name() string       { return c.name }
func (c *criterion) Text() string       { return c.text }
func (c *criterion) Steps() []string    { return nil }
func (c *criterion) Binary() bool       { return c.binary }
func (c *criterion) Uses(f string) bool { return c.fields[f] }
