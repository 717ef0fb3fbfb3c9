package pipeline_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/llm-eval/llm_eval/scoring/bias"
	"github.com/llm-eval/llm_eval/scoring/hallucination"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
)

func TestNormalizeVerdict(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"yes", pipeline.VerdictYes, true},
		{"Yes.", pipeline.VerdictYes, true},
		{" YES", pipeline.VerdictYes, true},
		{"yes - because the text says so", "", false},
		{"Yes/No", "", false},
		{"yes or no", "", false},
		{"**Yes**", pipeline.VerdictYes, true},
		{`"yes"`, pipeline.VerdictYes, true},
		{"no", pipeline.VerdictNo, true},
		{"No.", pipeline.VerdictNo, true},
		{"NO, it is fair", "", false},
		{"'no'", pipeline.VerdictNo, true},
		{"n/a", pipeline.VerdictNA, true},
		{"N/A", pipeline.VerdictNA, true},
		{"N/A.", pipeline.VerdictNA, true},
		{"na", "", false},
		{"not applicable", "", false},
		{"Not applicable: different domain", "", false},
		{"", "", false},
		{"   ", "", false},
		{"maybe", "", false},
		{"none", "", false},
		{"not", "", false},
		{"nope", "", false},
		{"yesterday", "", false},
		{"idk", "", false},
		{"true", "", false},
	}
	for _, tt := range tests {
		got, ok := pipeline.NormalizeVerdict(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("normalizeVerdict(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseStrings(t *testing.T) {
	tests := []struct {
		name    string
		reply   string
		want    []string
		wantErr string
	}{
		{"plain", `{"opinions": ["a", "b"]}`, []string{"a", "b"}, ""},
		{"empty list", `{"opinions": []}`, []string{}, ""},
		{"code fence", "```json\n{\"opinions\": [\"a\"]}\n```", []string{"a"}, ""},
		{"bare fence", "```\n{\"opinions\": [\"a\"]}\n```", []string{"a"}, ""},
		{"prose around", "Sure! Here they are:\n{\"opinions\": [\"a\"]}\nHope this helps.", []string{"a"}, ""},
		{"trailing commas", `{"opinions": ["a", "b",],}`, []string{"a", "b"}, ""},
		{"comma inside string kept", `{"opinions": ["a,]", "b"]}`, []string{"a,]", "b"}, ""},
		{"brace inside string", `{"opinions": ["use {x}", "b"]}`, []string{"use {x}", "b"}, ""},
		{"string where a list was expected", `{"opinions": "only one. And another."}`, nil, "must be a list"},
		{"bare list", `["a", "b"]`, []string{"a", "b"}, ""},
		{"capitalised key", `{"Opinions": ["a"]}`, []string{"a"}, ""},
		{"only list under other name", `{"items": ["a"]}`, []string{"a"}, ""},
		{"blank items dropped", `{"opinions": ["a", "  ", ""]}`, []string{"a"}, ""},
		{"prose braces then json", `Use {curly} braces. {"opinions": ["a"]}`, []string{"a"}, ""},
		{"truncated", `{"opinions": ["a", "b"`, nil, "incomplete"},
		{"not json", `I cannot help with that.`, nil, "no JSON"},
		{"empty", ``, nil, "the reply is empty"},
		{"blank", " \n\t", nil, "the reply is empty"},
		{"missing field", `{"claims": ["a"], "other": ["b"]}`, nil, `no "opinions" field`},
		{"null field", `{"opinions": null}`, nil, "must be a list"},
		{"number item", `{"opinions": ["a", 3]}`, nil, "must be a string"},
		{"number reply", `{"opinions": 3}`, nil, "must be a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pipeline.ParseStrings(tt.reply, schemaOf(bias.SchemaOpinions), "opinions")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want containing %q (got %q)", err, tt.wantErr, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseVerdicts(t *testing.T) {
	tests := []struct {
		name    string
		spec    pipeline.VerdictSpec
		reply   string
		want    int
		verdict []string
		reasons []string
		wantErr string
	}{
		{"bias plain", biasSpec, `{"results": [{"result": "yes", "reason": "r"}, {"result": "no", "reason": "s"}]}`, 2,
			[]string{"yes", "no"}, []string{"r", "s"}, ""},
		{"normalised words", biasSpec, `{"results": [{"result": "Yes.", "reason": "r"}, {"result": " **NO** ", "reason": "s"}]}`, 2,
			[]string{"yes", "no"}, []string{"r", "s"}, ""},
		{"missing reason", biasSpec, `{"results": [{"result": "yes"}]}`, 1, []string{"yes"}, []string{""}, ""},
		{"alias key", biasSpec, `{"results": [{"verdict": "no", "reason": "r"}]}`, 1, []string{"no"}, []string{"r"}, ""},
		{"single object for list", biasSpec, `{"results": {"result": "yes", "reason": "r"}}`, 1, []string{"yes"}, []string{"r"}, ""},
		{"bare item", instructionSpec, `{"verdict": "n/a", "reason": "r"}`, 1, []string{"n/a"}, []string{"r"}, ""},
		{"bare list", claimSpec, `[{"statement": "s", "verdict": "yes", "reason": "r"}]`, 1, []string{"yes"}, []string{"r"}, ""},
		{"fenced with prose and commas", claimSpec, "Here you go:\n```json\n{\"verdicts\": [{\"verdict\": \"no\", \"reason\": \"r\",},]}\n```\nDone.", 1,
			[]string{"no"}, []string{"r"}, ""},
		{"alignment n/a", instructionSpec, `{"verdicts": [{"verdict": "N/A"}, {"verdict": "n/a."}]}`, 2,
			[]string{"n/a", "n/a"}, []string{"", ""}, ""},
		{"verdict with prose", biasSpec, `{"results": [{"result": "yes - clearly", "reason": "r"}]}`, 1, nil, nil, `must be exactly "yes" or "no"`},
		{"both verdicts", biasSpec, `{"results": [{"result": "Yes/No", "reason": "r"}]}`, 1, nil, nil, `"Yes/No"`},
		{"maybe", claimSpec, `{"verdicts": [{"verdict": "maybe", "reason": "r"}]}`, 1, nil, nil, `"maybe"`},
		{"n/a spelt out", instructionSpec, `{"verdicts": [{"verdict": "not applicable"}]}`, 1, nil, nil, `must be exactly "yes", "no" or "n/a"`},
		{"too few", biasSpec, `{"results": [{"result": "yes", "reason": "r"}]}`, 2, nil, nil, "expected exactly 2 items"},
		{"too many", instructionSpec, `{"verdicts": [{"verdict": "yes"}, {"verdict": "no"}]}`, 1, nil, nil, "expected exactly 1 items"},
		{"empty list for one", claimSpec, `{"verdicts": []}`, 1, nil, nil, "got 0"},
		{"n/a not allowed for bias", biasSpec, `{"results": [{"result": "n/a"}]}`, 1, nil, nil, `must be exactly "yes" or "no"`},
		{"unknown verdict", claimSpec, `{"verdicts": [{"verdict": "partially"}]}`, 1, nil, nil, `"partially"`},
		{"boolean verdict", claimSpec, `{"verdicts": [{"verdict": true}]}`, 1, nil, nil, "must be"},
		{"missing verdict", instructionSpec, `{"verdicts": [{"reason": "r"}]}`, 1, nil, nil, `no "verdict"`},
		{"item not object", instructionSpec, `{"verdicts": ["yes"]}`, 1, nil, nil, "must be an object"},
		{"truncated", claimSpec, `{"verdicts": [{"verdict": "yes", "reason": "the con`, 1, nil, nil, "incomplete"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pipeline.ParseVerdicts(tt.reply, tt.spec, tt.want)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			var verdicts, reasons []string
			for _, j := range got {
				verdicts = append(verdicts, j.Verdict)
				reasons = append(reasons, j.Reason)
			}
			if !slices.Equal(verdicts, tt.verdict) || !slices.Equal(reasons, tt.reasons) {
				t.Errorf("got %q %q, want %q %q", verdicts, reasons, tt.verdict, tt.reasons)
			}
		})
	}
}

func TestParseReason(t *testing.T) {
	tests := []struct {
		reply   string
		want    string
		wantErr bool
	}{
		{`{"reason": "The score is 0 because all is fine."}`, "The score is 0 because all is fine.", false},
		{"```json\n{\"reason\": \"ok\",}\n```", "ok", false},
		// A reason is the reply's "reason" field, never loose prose.
		{"The score is 1 because everything broke.", "", true},
		{`{"reason": ""}`, "", true},
		{`{"reason": 3}`, "", true},
		{`{"why": "x"}`, "", true},
		{`{"reason": "cut`, "", true},
		{"   ", "", true},
		{"The score is 0.5 because item [2] broke the {format} rule.", "", true},
		{"The score is 1 because the output lists [a, b] as asked.", "", true},
		// Prose around the object may carry brackets and braces of its own.
		{`Checked [1] and {2}: {"reason": "the object wins"} [3]`, "the object wins", false},
		{`Here it is: {"reason": "wrapped in prose"}`, "wrapped in prose", false},
		{"```json\n{\"reason\": \"cut", "", true},
		{`[1, 2]`, "", true},
	}
	for _, tt := range tests {
		got, err := pipeline.ParseReason(tt.reply)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("pipeline.ParseReason(%q) = %q, %v; want %q, error %v", tt.reply, got, err, tt.want, tt.wantErr)
		}
	}
}

// FuzzParseReply checks that no reply makes parsing panic, and that every
// accepted analyze reply has exactly the count asked for with canonical
// verdicts only.
func FuzzParseReply(f *testing.F) {
	seeds := []string{
		`{"results": [{"result": "yes", "reason": "r"}]}`,
		"```json\n{\"verdicts\": [{\"verdict\": \"N/A\",},]}\n```",
		`prose {"opinions": ["a", "b",]} more prose`,
		`{"verdicts": [{"verdict": "yes", "reason": "the con`,
		`[{"verdict": "no"}]`,
		`{"verdict": "Yes."}`,
		`{"reason": "fine"}`,
		`}{][""\`,
		"```",
		`{"a": {"b": [1, 2, {"c": "\"}"}]}}`,
		`Checked [1] and [2]: {"results": [{"opinion": "a", "result": "yes", "reason": "r"}]}`,
		`{} [1] {"verdicts": [{"number": 2, "instruction": "b", "verdict": "n/a"}]}`,
		strings.Repeat("[", 200),
		"",
	}
	for _, s := range seeds {
		f.Add(s, uint8(1))
	}
	specs := []pipeline.VerdictSpec{biasSpec, claimSpec, instructionSpec}
	f.Fuzz(func(t *testing.T, reply string, n uint8) {
		want := int(n%4) + 1
		for _, spec := range specs {
			got, err := pipeline.ParseVerdicts(reply, spec, want)
			if err != nil {
				continue
			}
			if len(got) != want {
				t.Fatalf("accepted %d verdicts, want %d", len(got), want)
			}
			for _, j := range got {
				switch j.Verdict {
				case pipeline.VerdictYes, pipeline.VerdictNo:
				case pipeline.VerdictNA:
					if !spec.AllowNA {
						t.Fatalf("accepted n/a for %s", spec.Field)
					}
				default:
					t.Fatalf("non-canonical verdict %q", j.Verdict)
				}
			}
		}
		if got, err := pipeline.ParseStrings(reply, schemaOf(hallucination.SchemaClaims), "claims"); err == nil {
			for _, s := range got {
				if strings.TrimSpace(s) == "" {
					t.Fatalf("accepted blank claim")
				}
			}
		}
		if got, err := pipeline.ParseReason(reply); err == nil && strings.TrimSpace(got) == "" {
			t.Fatalf("accepted blank reason")
		}
	})
}
