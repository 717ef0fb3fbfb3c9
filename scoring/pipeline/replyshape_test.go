package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/bias"
	"github.com/llm-eval/llm_eval/scoring/criteria"
	"github.com/llm-eval/llm_eval/scoring/hallucination"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
	"github.com/llm-eval/llm_eval/scoring/promptalignment"
	"github.com/llm-eval/llm_eval/scoring/tooluse"
)

// TestPreambleBeforeReplyObject checks that the value matching the step's
// schema wins over brackets and objects written before it, in every step
// that reads a reply.
func TestPreambleBeforeReplyObject(t *testing.T) {
	preambles := []string{
		"",
		"[1]\n",
		"{}\n",
		"Checked [1] and [2] against the context.\n",
		`{"note": "draft"} then `,
		"[[1, 2], {}] ",
		"```\n[1]\n```\nThe answer:\n",
	}
	for _, pre := range preambles {
		t.Run(pre, func(t *testing.T) {
			got, err := pipeline.ParseStrings(pre+`{"opinions": ["a", "b"]}`, schemaOf(bias.SchemaOpinions), "opinions")
			if err != nil || !slices.Equal(got, []string{"a", "b"}) {
				t.Errorf("opinions = %q, %v", got, err)
			}
			vs, err := pipeline.ParseVerdicts(pre+`{"results": [{"opinion": "a", "result": "yes", "reason": "r"}]}`, biasSpec, 1)
			if err != nil || len(vs) != 1 || vs[0].Verdict != pipeline.VerdictYes {
				t.Errorf("bias verdicts = %+v, %v", vs, err)
			}
			vs, err = pipeline.ParseVerdicts(pre+"```json\n"+`{"verdicts": [{"statement": "c", "verdict": "no", "reason": "r"}]}`+"\n```", claimSpec, 1)
			if err != nil || len(vs) != 1 || vs[0].Verdict != pipeline.VerdictNo {
				t.Errorf("claim verdicts = %+v, %v", vs, err)
			}
			reason, err := pipeline.ParseReason(pre + `{"reason": "because"}`)
			if err != nil || reason != "because" {
				t.Errorf("reason = %q, %v", reason, err)
			}
		})
	}
}

// TestReplyShapeFromSchema checks that every schema gives the parser its
// required keys and the verdict values its enums allow.
func TestReplyShapeFromSchema(t *testing.T) {
	tests := []struct {
		schema   *scoring.Schema
		required []string
		key      string
		values   []string
	}{
		{schemaOf(bias.SchemaResults), []string{"results"}, "result", []string{"yes", "no"}},
		{schemaOf(hallucination.SchemaVerdicts), []string{"verdicts"}, "verdict", []string{"yes", "no"}},
		{schemaOf(promptalignment.SchemaVerdicts), []string{"verdicts", "user_instructions"}, "verdict", []string{"yes", "no", "n/a"}},
		{schemaOf(criteria.SchemaBinary), []string{"reason", "verdict"}, "verdict", []string{"yes", "no"}},
		{schemaOf(tooluse.SchemaVerdicts), []string{"verdicts", "missing_tools"}, "result_used", []string{"yes", "no", "n/a"}},
		{schemaOf(scoring.SchemaReason), []string{"reason"}, "reason", nil},
	}
	for _, tt := range tests {
		t.Run(tt.schema.Name, func(t *testing.T) {
			if got := pipeline.Required(tt.schema); !slices.Equal(got, tt.required) {
				t.Errorf("required = %q, want %q", got, tt.required)
			}
			if got := pipeline.Allowed(tt.schema, tt.key); !slices.Equal(got, tt.values) {
				t.Errorf("allowed(%q) = %q, want %q", tt.key, got, tt.values)
			}
		})
	}
}

// badReplyScorer is a scorer whose analyze step gets the bad replies:
// its schema, the list key, how one verdict item for item n (from 1)
// reads, and the judge script and case that reach the analyze step with
// two items.
type badReplyScorer struct {
	name   string
	schema string
	list   string
	item   func(n int) string
	script map[string][]string
	c      scoring.Case
}

var badReplyScorers = []badReplyScorer{
	{scoring.Bias, bias.SchemaResults, "results",
		func(n int) string { return fmt.Sprintf(`{"opinion": "opinion %d", "result": "no", "reason": "r"}`, n) },
		map[string][]string{bias.SchemaOpinions: {`{"opinions": ["opinion 1", "opinion 2"]}`}},
		scoring.Case{Output: "o"}},
	{scoring.Hallucination, hallucination.SchemaVerdicts, "verdicts",
		func(n int) string { return fmt.Sprintf(`{"statement": "claim %d", "verdict": "no", "reason": "r"}`, n) },
		map[string][]string{hallucination.SchemaClaims: {`{"claims": ["claim 1", "claim 2"]}`}},
		scoring.Case{Output: "o", Context: []string{"c"}}},
	{scoring.PromptAlignment, promptalignment.SchemaVerdicts, "verdicts",
		func(n int) string {
			return fmt.Sprintf(`{"number": %d, "instruction": "instruction %d", "verdict": "yes", "reason": "r"}`, n, n)
		},
		map[string][]string{},
		scoring.Case{Output: "o", Instructions: testkit.Instructions(2)}},
}

// TestBadRepliesReaskThenParseError feeds each analyze step replies that
// must never yield a score: the scorer re-asks once and then reports
// judge_parse_error with a message saying what was wrong.
func TestBadRepliesReaskThenParseError(t *testing.T) {
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	for _, sc := range badReplyScorers {
		wrap := func(items ...string) string { return `{"` + sc.list + `": [` + strings.Join(items, ", ") + `]}` }
		huge := wrap(sc.item(1), strings.Replace(sc.item(2), `"r"`, `"`+strings.Repeat("x", 1<<20)+`"`, 1))
		deepObject := strings.Repeat(`{"`+sc.list+`": `, 10000) + "[]" + strings.Repeat("}", 10000)
		tests := []struct {
			name    string
			reply   string
			wantErr string
		}{
			{"empty", "", "the reply is empty"},
			{"blank", "  \n ", "the reply is empty"},
			{"one megabyte", huge, "bytes long"},
			{"nested 10000 deep", deep, "nested"},
			{"objects nested 10000 deep", deepObject, "nested"},
			{"one short", wrap(sc.item(1)), "expected exactly 2 items"},
			{"one long", wrap(sc.item(1), sc.item(2), sc.item(2)), "expected exactly 2 items"},
			{"duplicated echo", wrap(sc.item(2), sc.item(2)), "judged twice"},
			{"fenced cut reply with prose after", "```json\n" + strings.TrimSuffix(wrap(sc.item(1)), "]}") + ",\n```\nI judged [1] and [2].", "incomplete"},
			{"prose only", "Both items are fine.", "no JSON"},
			{"both verdicts", wrap(strings.Replace(sc.item(1), `"r"`, `"r", "verdict": "Yes/No", "result": "Yes/No"`, 1), sc.item(2)), `"Yes/No"`},
		}
		for _, tt := range tests {
			t.Run(sc.name+"/"+tt.name, func(t *testing.T) {
				script := map[string][]string{sc.schema: {tt.reply}, scoring.SchemaReason: {`{"reason": "judge reason"}`}}
				for k, v := range sc.script {
					script[k] = v
				}
				j := testkit.NewJudge(script)
				res := mustNew(t, sc.name, j, scoring.Options{}).Score(context.Background(), sc.c)
				if res.Label != scoring.LabelError || res.Score != 0 {
					t.Fatalf("label %s score %v, want error", res.Label, res.Score)
				}
				var se *scoring.Error
				if !errors.As(res.Err, &se) || se.Type != scoring.ErrorJudgeParse || se.Step != scoring.StepAnalyze {
					t.Fatalf("err = %v, want judge_parse_error in analyze", res.Err)
				}
				if !strings.Contains(se.Error(), tt.wantErr) {
					t.Errorf("err = %v, want it to say %q", se, tt.wantErr)
				}
				if got := j.Schemas(); len(got) < 2 || got[len(got)-1] != sc.schema || got[len(got)-2] != sc.schema ||
					slices.Contains(got, scoring.SchemaReason) {
					t.Errorf("calls = %v, want the analyze step asked twice and no reason call", got)
				}
			})
		}
	}
}

// TestFencedReplyWithProseAfter checks that a good reply in a code fence
// followed by prose, brackets included, is read and scored.
func TestFencedReplyWithProseAfter(t *testing.T) {
	j := testkit.NewJudge(testkit.BiasReplies("yes", "no"))
	j.Set(bias.SchemaResults, testkit.Reply{Resp: scoring.Response{Content: "```json\n" +
		`{"results": [{"opinion": "opinion 1", "result": "yes", "reason": "r1"}, {"opinion": "opinion 2", "result": "no", "reason": "r2"}]}` +
		"\n```\nI checked [1] and [2]; see {notes}.", FinishReason: "stop"}})
	res := mustNew(t, scoring.Bias, j, scoring.Options{}).Score(context.Background(), scoring.Case{Output: "o"})
	if res.Err != nil || res.Score != 0.5 {
		t.Fatalf("score %v err %v, want 0.5", res.Score, res.Err)
	}
	if n := len(j.Requests()); n != 3 {
		t.Errorf("%d calls, want 3 (no re-ask)", n)
	}
}

// TestPartialReplyObjectPreferred checks that, when no value has every
// required key, the one with the most of them is read, not a bracket of
// prose before it: a judge without structured outputs may leave out an
// empty list such as tool_use's missing_tools.
func TestPartialReplyObjectPreferred(t *testing.T) {
	v, err := pipeline.ExtractJSON(`Checked [1] and {"x": 1}: {"verdicts": [{"call": 1}]} [2]`, schemaOf(tooluse.SchemaVerdicts))
	m, ok := v.(map[string]any)
	if err != nil || !ok || !pipeline.HasKey(m, "verdicts") {
		t.Errorf("got %v, %v; want the object with verdicts", v, err)
	}
	v, err = pipeline.ExtractJSON("See [1].\n```json\n[2]\n```\n"+`{"verdicts": []}`, schemaOf(tooluse.SchemaVerdicts))
	if m, ok := v.(map[string]any); err != nil || !ok || !pipeline.HasKey(m, "verdicts") {
		t.Errorf("got %v, %v; want the object after the fence", v, err)
	}
}
