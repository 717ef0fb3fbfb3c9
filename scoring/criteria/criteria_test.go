package criteria

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
)

var updatePrompts = flag.Bool("update", false, "rewrite testdata/prompts/*.golden from the rendered prompts")

var politeness = Config{Name: "politeness", Criteria: "The response is polite and respectful to the user."}

// politenessWithSteps is politeness with configured steps: no steps call.
var politenessWithSteps = Config{Name: "politeness", Criteria: politeness.Criteria,
	Steps: []string{"Look for greetings and thanks.", "Look for rude or dismissive words."}}

// stepsReply is a criteria_steps reply.
const stepsReply = `{"steps": ["Look for greetings and thanks.", "Look for rude or dismissive words."]}`

func mustCriteria(t *testing.T, cfg Config, j scoring.Judge, opts scoring.Options) scoring.Scorer {
	t.Helper()
	sc, err := New(cfg, j, opts)
	if err != nil {
		t.Fatalf("NewCriteria: %v", err)
	}
	return sc
}

func TestCriteriaConfigErrors(t *testing.T) {
	j := testkit.NewJudge(nil)
	tests := []struct {
		name    string
		cfg     Config
		judge   scoring.Judge
		opts    scoring.Options
		wantErr string
	}{
		{"no name", Config{Criteria: "c"}, j, scoring.Options{}, "name: must be set"},
		{"bad name", Config{Name: "Tone Check", Criteria: "c"}, j, scoring.Options{}, `name: "Tone Check" must be lowercase`},
		{"kind name", Config{Name: scoring.Criteria, Criteria: "c"}, j, scoring.Options{}, "built-in"},
		{"checks name", Config{Name: scoring.Checks, Criteria: "c"}, j, scoring.Options{}, `name: "checks" is a built-in scorer name`},
		{"no criteria", Config{Name: "tone", Criteria: "  "}, j, scoring.Options{}, "criteria: must be set"},
		{"blank step", Config{Name: "tone", Criteria: "c", Steps: []string{"a", ""}}, j, scoring.Options{}, "steps: step 2 is empty"},
		{"unknown field", Config{Name: "tone", Criteria: "c", Fields: []scoring.Field{"metadata"}}, j, scoring.Options{}, `fields: unknown field "metadata"`},
		{"unknown kind", Config{Name: "tone", Criteria: "c", Verdict: "likert"}, j, scoring.Options{}, `verdict: unknown verdict "likert"`},
		{"nil judge", politeness, nil, scoring.Options{}, "judge is nil"},
		{"bad threshold", politeness, j, scoring.Options{Threshold: testkit.Ptr(2.0)}, "threshold must be between"},
		{"bad reason mode", politeness, j, scoring.Options{ReasonMode: "poem"}, "unknown reason mode"},
		{"valid", Config{Name: "tone_2", Criteria: "c", Steps: []string{"a"}, Fields: []scoring.Field{scoring.FieldContext}, Verdict: Binary}, j, scoring.Options{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(tt.cfg, tt.judge, tt.opts)
			if tt.wantErr == "" {
				if err != nil || s.Name() != tt.cfg.Name {
					t.Fatalf("NewCriteria = %v, %v", s, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || s != nil {
				t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestCriteriaPromptGolden compares the rendered prompts with the goldens
// in testdata/prompts (go test -run TestCriteriaPromptGolden -update
// rewrites them; review the diff).
func TestCriteriaPromptGolden(t *testing.T) {
	c := scoring.Case{
		Input:        "Can you help me reset my password?",
		Output:       "Sure! Open Settings, choose Security, then Reset password.",
		Context:      []string{"Passwords are reset under Settings > Security."},
		Instructions: []string{"Be concise."},
	}
	tests := []struct {
		golden string
		cfg    Config
		opts   scoring.Options
	}{
		{"criteria_score", Config{Name: "politeness", Criteria: "The response is polite and respectful to the user."}, scoring.Options{}},
		{"criteria_binary_steps_all_fields", Config{
			Name: "grounded_steps", Criteria: "Every step the response gives is backed by the context.",
			Steps:  []string{"List the steps in the response.", "Find each step in the context."},
			Fields: []scoring.Field{scoring.FieldInput, scoring.FieldContext, scoring.FieldInstructions}, Verdict: Binary,
		}, scoring.Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			reply := `{"reason": "Polite and clear.", "score": 8}`
			if tt.cfg.Verdict == Binary {
				reply = `{"reason": "Both steps are in the context.", "verdict": "yes"}`
			}
			j := testkit.NewJudge(map[string][]string{SchemaSteps: {stepsReply}, SchemaScore: {reply}, SchemaBinary: {reply}})
			res := mustCriteria(t, tt.cfg, j, scoring.Options{Verbose: true}).Score(context.Background(), c)
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			got := res.Steps.AnalyzePrompt + "\n"
			if res.Steps.PreprocessPrompt != "" {
				got = "=== steps ===\n" + res.Steps.PreprocessPrompt + "\n\n=== analyze ===\n" + got
			}
			path := filepath.Join("..", "testdata", "prompts", tt.golden+".golden")
			if *updatePrompts {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("prompt differs from %s (run with -update and review the diff):\n%s", path, got)
			}
		})
	}
}

// TestCriteriaPromptFields checks only the configured fields reach the
// judge, and evaluated text stays inside escaped blocks.
func TestCriteriaPromptFields(t *testing.T) {
	c := scoring.Case{Input: "IN " + testkit.Attack, Output: "OUT " + testkit.Attack, Context: []string{"CTX"}, Instructions: []string{"SYS"}}
	tests := []struct {
		fields []scoring.Field
		want   []string
		absent []string
	}{
		{nil, []string{"<<<INPUT", "<<<OUTPUT"}, []string{"<<<CONTEXT", "<<<INSTRUCTIONS", "CTX", "SYS"}},
		{[]scoring.Field{scoring.FieldOutput}, []string{"<<<OUTPUT"}, []string{"<<<INPUT", "IN "}},
		{[]scoring.Field{scoring.FieldContext, scoring.FieldInstructions}, []string{"<<<CONTEXT", "<<<INSTRUCTIONS", "<<<OUTPUT"}, []string{"<<<INPUT"}},
	}
	for _, tt := range tests {
		cfg := politeness
		cfg.Fields = tt.fields
		j := testkit.NewJudge(map[string][]string{SchemaSteps: {stepsReply}, SchemaScore: {`{"reason": "r", "score": 5}`}})
		res := mustCriteria(t, cfg, j, scoring.Options{OmitReason: true}).Score(context.Background(), c)
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		reqs := j.Requests()
		if steps := reqs[0].Messages[1].Content; strings.Contains(steps, "IN ") || strings.Contains(steps, "OUT ") {
			t.Errorf("the steps call carries evaluated text:\n%s", steps)
		}
		user := reqs[len(reqs)-1].Messages[1].Content
		for _, w := range tt.want {
			if !strings.Contains(user, w) {
				t.Errorf("fields %v: prompt lacks %q", tt.fields, w)
			}
		}
		for _, a := range tt.absent {
			if strings.Contains(user, a) {
				t.Errorf("fields %v: prompt has %q", tt.fields, a)
			}
		}
		testkit.BlockLines(t, user) // every block line is one escaped JSON value
		if strings.Contains(user, `answer {"opinions"`) {
			t.Errorf("attack text unescaped")
		}
	}
}

func TestCriteriaScoring(t *testing.T) {
	tests := []struct {
		name      string
		kind      Verdict
		reply     string
		opts      scoring.Options
		wantScore float64
		wantLabel scoring.Label
	}{
		{"full marks", Score, `{"reason": "r", "score": 10}`, scoring.Options{}, 1, scoring.LabelPass},
		{"seven", Score, `{"reason": "r", "score": 7}`, scoring.Options{}, 7.0 * 1 / 10, scoring.LabelPass},
		{"four fails", Score, `{"reason": "r", "score": 4}`, scoring.Options{}, 4.0 * 1 / 10, scoring.LabelFail},
		{"boundary passes", Score, `{"reason": "r", "score": 5}`, scoring.Options{}, 0.5, scoring.LabelPass},
		{"zero", Score, `{"reason": "r", "score": 0}`, scoring.Options{}, 0, scoring.LabelFail},
		{"scale 10", Score, `{"reason": "r", "score": 3}`, scoring.Options{Scale: 10}, 3, scoring.LabelFail},
		{"string score", Score, `{"reason": "r", "score": "9/10"}`, scoring.Options{}, 9.0 * 1 / 10, scoring.LabelPass},
		{"full marks at scale 0.7", Score, `{"reason": "r", "score": 10}`, scoring.Options{Scale: 0.7, StrictMode: true}, 0.7, scoring.LabelPass},
		{"strict short of full is 0", Score, `{"reason": "r", "score": 9}`, scoring.Options{StrictMode: true}, 0, scoring.LabelFail},
		{"binary yes", Binary, `{"reason": "r", "verdict": "Yes."}`, scoring.Options{}, 1, scoring.LabelPass},
		{"binary no", Binary, `{"reason": "r", "verdict": "no"}`, scoring.Options{Scale: 10}, 0, scoring.LabelFail},
		{"binary yes strict scale 0.7", Binary, `{"reason": "r", "verdict": "yes"}`, scoring.Options{Scale: 0.7, StrictMode: true}, 0.7, scoring.LabelPass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := politeness
			cfg.Verdict = tt.kind
			j := testkit.NewJudge(map[string][]string{SchemaSteps: {stepsReply}, SchemaScore: {tt.reply}, SchemaBinary: {tt.reply}})
			res := mustCriteria(t, cfg, j, tt.opts).Score(context.Background(), scoring.Case{Input: "q", Output: "a"})
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if res.Score != tt.wantScore || res.Label != tt.wantLabel {
				t.Errorf("score %v label %s, want %v %s", res.Score, res.Label, tt.wantScore, tt.wantLabel)
			}
			if want := "The score is " + pipeline.FormatScore(tt.wantScore) + " for politeness: r."; res.Scorer != "politeness" || res.Reason != want {
				t.Errorf("scorer %q reason %q, want %q", res.Scorer, res.Reason, want)
			}
			if got, want := j.Schemas(), []string{SchemaSteps, string(cfg.Verdict)}; len(got) != 2 || got[0] != want[0] || got[1] != "criteria_"+want[1] {
				t.Errorf("calls %v, want steps then analyze, and no reason call", got)
			}
		})
	}
}

func TestCriteriaSummaryAndNotScorable(t *testing.T) {
	j := testkit.NewJudge(map[string][]string{SchemaScore: {`{"reason": "It thanks the user and stays courteous.", "score": 9}`}})
	res := mustCriteria(t, politenessWithSteps, j, scoring.Options{ReasonMode: scoring.ReasonSummary}).Score(context.Background(), scoring.Case{Output: "a"})
	if want := "The score is 0.9 for politeness: It thanks the user and stays courteous."; res.Reason != want {
		t.Errorf("reason %q, want %q", res.Reason, want)
	}
	if res.Usage.LLMCalls != 1 {
		t.Errorf("summary mode made %d calls, want 1", res.Usage.LLMCalls)
	}
	if p := res.Steps.Analyze.(Result).Points; p == nil || *p != 9 {
		t.Errorf("analyze result %+v", res.Steps.Analyze)
	}

	cfg := politeness
	cfg.Fields = []scoring.Field{scoring.FieldContext}
	j = testkit.NewJudge(nil)
	res = mustCriteria(t, cfg, j, scoring.Options{}).Score(context.Background(), scoring.Case{Output: "a"})
	if res.Label != scoring.LabelNotScorable || !strings.Contains(res.Reason, "no context") || len(j.Requests()) != 0 {
		t.Errorf("got %s %q after %d calls, want not scorable without a call", res.Label, res.Reason, len(j.Requests()))
	}
}

func TestParseCriteria(t *testing.T) {
	tests := []struct {
		reply      string
		binary     bool
		wantPoints int
		wantVerdct string
		wantErr    string
	}{
		{`{"reason": "r", "score": 7}`, false, 7, "", ""},
		{"```json\n{\"reason\": \"r\", \"score\": 7.0,}\n```", false, 7, "", ""},
		{`Here: {"Reason": "r", "Score": "6"}`, false, 6, "", ""},
		{`{"score": 6}`, false, 0, "", `no "reason"`},
		{`{"reason": " ", "verdict": "yes"}`, true, 0, "", `no "reason"`},
		{`[{"reason": "r", "score": 2}]`, false, 2, "", ""},
		{`{"reason": "r", "score": 7.5}`, false, 0, "", "whole number from 0 to 10"},
		{`{"reason": "r", "score": 11}`, false, 0, "", "whole number"},
		{`{"reason": "r", "score": -1}`, false, 0, "", "whole number"},
		{`{"reason": "r", "score": "high"}`, false, 0, "", "whole number"},
		{`{"reason": "r"}`, false, 0, "", `no "score"`},
		{`{"reason": "r", "verdict": "YES"}`, true, 0, "yes", ""},
		{`{"reason": "r", "result": "No."}`, true, 0, "no", ""},
		{`{"reason": "r", "verdict": "no - rude"}`, true, 0, "", `must be "yes" or "no"`},
		{`{"reason": "r", "verdict": "Yes/No"}`, true, 0, "", `must be "yes" or "no"`},
		{`{"reason": "r", "verdict": "n/a"}`, true, 0, "", `must be "yes" or "no"`},
		{`{"reason": "r", "verdict": "maybe"}`, true, 0, "", `must be "yes" or "no"`},
		{`{"reason": "r", "score": 3`, false, 0, "", "incomplete"},
		{`I think it is polite.`, true, 0, "", "no JSON"},
	}
	for _, tt := range tests {
		got, err := parseCriteria(tt.reply, tt.binary)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseCriteria(%q) err = %v, want %q", tt.reply, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got.points != tt.wantPoints || got.Verdict != tt.wantVerdct {
			t.Errorf("parseCriteria(%q) = %+v, %v", tt.reply, got, err)
		}
	}
}

func TestCriteriaFaults(t *testing.T) {
	tests := []struct {
		name     string
		replies  []testkit.Reply
		wantType scoring.ErrorType
		calls    int
	}{
		{"garbled twice", []testkit.Reply{testkit.ReplyOf("<html>502</html>", "stop")}, scoring.ErrorJudgeParse, 2},
		{"cut twice", []testkit.Reply{testkit.ReplyOf(`{"reason": "The response is pol`, "length")}, scoring.ErrorJudgeTruncated, 2},
		{"timeout", []testkit.Reply{{Err: context.DeadlineExceeded}}, scoring.ErrorJudgeTimeout, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := testkit.NewJudge(nil)
			for _, r := range tt.replies {
				j.Add(SchemaScore, r)
			}
			res := mustCriteria(t, politenessWithSteps, j, scoring.Options{}).Score(context.Background(), scoring.Case{Output: "a"})
			var e *scoring.Error
			if res.Label != scoring.LabelError || !errors.As(res.Err, &e) || e.Type != tt.wantType || e.Step != scoring.StepAnalyze {
				t.Fatalf("got %s %v, want %s in analyze", res.Label, res.Err, tt.wantType)
			}
			if res.Usage.LLMCalls != tt.calls {
				t.Errorf("calls %d, want %d", res.Usage.LLMCalls, tt.calls)
			}
		})
	}
	// One unusable reply is re-asked and the second one used.
	j := testkit.NewJudge(nil).Add(SchemaScore, testkit.ReplyOf("not json", "stop")).Add(SchemaScore, testkit.ReplyOf(`{"reason": "r", "score": 8}`, "stop"))
	res := mustCriteria(t, politenessWithSteps, j, scoring.Options{OmitReason: true}).Score(context.Background(), scoring.Case{Output: "a"})
	if res.Err != nil || res.Score != 0.8 || res.Usage.LLMCalls != 2 {
		t.Errorf("re-ask: %s %v %v after %d calls", res.Label, res.Score, res.Err, res.Usage.LLMCalls)
	}
}

// TestPreambleBeforeReplyObject checks that the value matching the
// criteria reply's schema wins over brackets and objects written before
// it.
func TestPreambleBeforeReplyObject(t *testing.T) {
	for _, pre := range []string{"", "[1]\n", "{}\n", "Checked [1] and [2] against the context.\n", `{"note": "draft"} then `, "[[1, 2], {}] ", "```\n[1]\n```\nThe answer:\n"} {
		c, err := parseCriteria(pre+`{"reason": "r", "score": 7}`, false)
		if err != nil || c.points != 7 {
			t.Errorf("%q: criteria = %+v, %v", pre, c, err)
		}
	}
}
