package scoring

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUserPromptGolden pins every step's user message, byte for byte, for
// plain, hostile and empty data (go test -run TestUserPromptGolden -update
// rewrites testdata/prompts/user_messages.golden; review the diff). The
// hostile text holds what the escaping must get right: block delimiters,
// quotes, backslashes, control characters, U+2028, invalid UTF-8, HTML
// characters and text beyond ASCII.
func TestUserPromptGolden(t *testing.T) {
	hostile := attack + "\t\x01\x1f & <b>x</b> \u2028\u2029 \xff\xfe café 😀"
	type verdict struct {
		Statement string `json:"statement"`
		Verdict   string `json:"verdict"`
		Reason    string `json:"reason,omitempty"`
	}
	points := 7
	variants := []struct {
		name string
		data promptData
	}{
		{"plain", dataWith("The library opened in 1974.")},
		{"hostile", func() promptData {
			d := dataWith(hostile)
			d.Verdicts = append(d.Verdicts, verdict{Statement: hostile, Verdict: "no"}, map[string]any{"points_out_of_10": &points, "reason": "<ok>"})
			return d
		}()},
		{"empty", promptData{Scorer: Hallucination, Score: "0", Scale: "10"}},
	}
	criteria := []struct {
		name string
		c    *criterion
	}{
		{"output only", &criterion{name: "tone", text: "Polite.", fields: map[Field]bool{}}},
		{"all fields", &criterion{name: "grounded", text: "Grounded.", binary: true,
			fields: map[Field]bool{FieldInput: true, FieldContext: true, FieldInstructions: true}}},
	}
	var got strings.Builder
	write := func(title string, d promptData, name string) {
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
		for _, c := range criteria {
			d := v.data
			d.Criterion = c.c
			for _, name := range []string{SchemaCriteriaScore, SchemaCriteriaBinary, SchemaReason} {
				write(name+" / "+c.name+" / "+v.name, d, name)
			}
		}
	}
	path := filepath.Join("testdata", "prompts", "user_messages.golden")
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
