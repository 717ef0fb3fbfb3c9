package scoring

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updatePrompts = flag.Bool("update", false, "rewrite testdata/prompts/*.golden from the rendered prompts")

var politeness = CriteriaConfig{Name: "politeness", Criteria: "The response is polite and respectful to the user."}

// politenessWithSteps is politeness with configured steps: no steps call.
var politenessWithSteps = CriteriaConfig{Name: "politeness", Criteria: politeness.Criteria,
	Steps: []string{"Look for greetings and thanks.", "Look for rude or dismissive words."}}

// stepsReply is a criteria_steps reply.
const stepsReply = `{"steps": ["Look for greetings and thanks.", "Look for rude or dismissive words."]}`

func mustCriteria(t *testing.T, cfg CriteriaConfig, j Judge, opts Options) *scorer {
	t.Helper()
	sc, err := NewCriteria(cfg, j, opts)
	if err != nil {
		t.Fatalf("NewCriteria: %v", err)
	}
	return sc.(*scorer)
}

func TestCriteriaConfigErrors(t *testing.T) {
	j := newJudge(nil)
	tests := []struct {
		name    string
		cfg     CriteriaConfig
		judge   Judge
		opts    Options
		wantErr string
	}{
		{"no name", CriteriaConfig{Criteria: "c"}, j, Options{}, "name: must be set"},
		{"bad name", CriteriaConfig{Name: "Tone Check", Criteria: "c"}, j, Options{}, `name: "Tone Check" must be lowercase`},
		{"built-in name", CriteriaConfig{Name: Bias, Criteria: "c"}, j, Options{}, `name: "bias" is a built-in scorer name`},
		{"kind name", CriteriaConfig{Name: Criteria, Criteria: "c"}, j, Options{}, "built-in"},
		{"checks name", CriteriaConfig{Name: Checks, Criteria: "c"}, j, Options{}, `name: "checks" is a built-in scorer name`},
		{"no criteria", CriteriaConfig{Name: "tone", Criteria: "  "}, j, Options{}, "criteria: must be set"},
		{"blank step", CriteriaConfig{Name: "tone", Criteria: "c", Steps: []string{"a", ""}}, j, Options{}, "steps: step 2 is empty"},
		{"unknown field", CriteriaConfig{Name: "tone", Criteria: "c", Fields: []Field{"metadata"}}, j, Options{}, `fields: unknown field "metadata"`},
		{"unknown kind", CriteriaConfig{Name: "tone", Criteria: "c", Verdict: "likert"}, j, Options{}, `verdict: unknown verdict "likert"`},
		{"nil judge", politeness, nil, Options{}, "judge is nil"},
		{"bad threshold", politeness, j, Options{Threshold: ptr(2.0)}, "threshold must be between"},
		{"bad reason mode", politeness, j, Options{ReasonMode: "poem"}, "unknown reason mode"},
		{"valid", CriteriaConfig{Name: "tone_2", Criteria: "c", Steps: []string{"a"}, Fields: []Field{FieldContext}, Verdict: CriteriaBinary}, j, Options{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewCriteria(tt.cfg, tt.judge, tt.opts)
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
	c := Case{
		Input:        "Can you help me reset my password?",
		Output:       "Sure! Open Settings, choose Security, then Reset password.",
		Context:      []string{"Passwords are reset under Settings > Security."},
		Instructions: []string{"Be concise."},
	}
	tests := []struct {
		golden string
		cfg    CriteriaConfig
		opts   Options
	}{
		{"criteria_score", CriteriaConfig{Name: "politeness", Criteria: "The response is polite and respectful to the user."}, Options{}},
		{"criteria_binary_steps_all_fields", CriteriaConfig{
			Name: "grounded_steps", Criteria: "Every step the response gives is backed by the context.",
			Steps:  []string{"List the steps in the response.", "Find each step in the context."},
			Fields: []Field{FieldInput, FieldContext, FieldInstructions}, Verdict: CriteriaBinary,
		}, Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			reply := `{"reason": "Polite and clear.", "score": 8}`
			if tt.cfg.Verdict == CriteriaBinary {
				reply = `{"reason": "Both steps are in the context.", "verdict": "yes"}`
			}
			j := newJudge(map[string][]string{SchemaCriteriaSteps: {stepsReply}, SchemaCriteriaScore: {reply}, SchemaCriteriaBinary: {reply}})
			res := mustCriteria(t, tt.cfg, j, Options{Verbose: true}).Score(context.Background(), c)
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			got := res.Steps.AnalyzePrompt + "\n"
			if res.Steps.PreprocessPrompt != "" {
				got = "=== steps ===\n" + res.Steps.PreprocessPrompt + "\n\n=== analyze ===\n" + got
			}
			path := filepath.Join("testdata", "prompts", tt.golden+".golden")
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
	c := Case{Input: "IN " + attack, Output: "OUT " + attack, Context: []string{"CTX"}, Instructions: []string{"SYS"}}
	tests := []struct {
		fields []Field
		want   []string
		absent []string
	}{
		{nil, []string{"<<<INPUT", "<<<OUTPUT"}, []string{"<<<CONTEXT", "<<<INSTRUCTIONS", "CTX", "SYS"}},
		{[]Field{FieldOutput}, []string{"<<<OUTPUT"}, []string{"<<<INPUT", "IN "}},
		{[]Field{FieldContext, FieldInstructions}, []string{"<<<CONTEXT", "<<<INSTRUCTIONS", "<<<OUTPUT"}, []string{"<<<INPUT"}},
	}
	for _, tt := range tests {
		cfg := politeness
		cfg.Fields = tt.fields
		j := newJudge(map[string][]string{SchemaCriteriaSteps: {stepsReply}, SchemaCriteriaScore: {`{"reason": "r", "score": 5}`}})
		res := mustCriteria(t, cfg, j, Options{OmitReason: true}).Score(context.Background(), c)
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		reqs := j.requests()
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
		blockLines(t, user) // every block line is one escaped JSON value
		if strings.Contains(user, `answer {"opinions"`) {
			t.Errorf("attack text unescaped")
		}
	}
}

func TestCriteriaScoring(t *testing.T) {
	tests := []struct {
		name      string
		kind      CriteriaVerdict
		reply     string
		opts      Options
		wantScore float64
		wantLabel Label
	}{
		{"full marks", CriteriaScore, `{"reason": "r", "score": 10}`, Options{}, 1, LabelPass},
		{"seven", CriteriaScore, `{"reason": "r", "score": 7}`, Options{}, 7.0 * 1 / 10, LabelPass},
		{"four fails", CriteriaScore, `{"reason": "r", "score": 4}`, Options{}, 4.0 * 1 / 10, LabelFail},
		{"boundary passes", CriteriaScore, `{"reason": "r", "score": 5}`, Options{}, 0.5, LabelPass},
		{"zero", CriteriaScore, `{"reason": "r", "score": 0}`, Options{}, 0, LabelFail},
		{"scale 10", CriteriaScore, `{"reason": "r", "score": 3}`, Options{Scale: 10}, 3, LabelFail},
		{"string score", CriteriaScore, `{"reason": "r", "score": "9/10"}`, Options{}, 9.0 * 1 / 10, LabelPass},
		{"full marks at scale 0.7", CriteriaScore, `{"reason": "r", "score": 10}`, Options{Scale: 0.7, StrictMode: true}, 0.7, LabelPass},
		{"strict short of full is 0", CriteriaScore, `{"reason": "r", "score": 9}`, Options{StrictMode: true}, 0, LabelFail},
		{"binary yes", CriteriaBinary, `{"reason": "r", "verdict": "Yes."}`, Options{}, 1, LabelPass},
		{"binary no", CriteriaBinary, `{"reason": "r", "verdict": "no"}`, Options{Scale: 10}, 0, LabelFail},
		{"binary yes strict scale 0.7", CriteriaBinary, `{"reason": "r", "verdict": "yes"}`, Options{Scale: 0.7, StrictMode: true}, 0.7, LabelPass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := politeness
			cfg.Verdict = tt.kind
			j := newJudge(map[string][]string{SchemaCriteriaSteps: {stepsReply}, SchemaCriteriaScore: {tt.reply}, SchemaCriteriaBinary: {tt.reply}})
			res := mustCriteria(t, cfg, j, tt.opts).Score(context.Background(), Case{Input: "q", Output: "a"})
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if res.Score != tt.wantScore || res.Label != tt.wantLabel {
				t.Errorf("score %v label %s, want %v %s", res.Score, res.Label, tt.wantScore, tt.wantLabel)
			}
			if want := "The score is " + formatScore(tt.wantScore) + " for politeness: r."; res.Scorer != "politeness" || res.Reason != want {
				t.Errorf("scorer %q reason %q, want %q", res.Scorer, res.Reason, want)
			}
			if got, want := j.schemas(), []string{SchemaCriteriaSteps, string(cfg.Verdict)}; len(got) != 2 || got[0] != want[0] || got[1] != "criteria_"+want[1] {
				t.Errorf("calls %v, want steps then analyze, and no reason call", got)
			}
		})
	}
}

func TestCriteriaSummaryAndNotScorable(t *testing.T) {
	j := newJudge(map[string][]string{SchemaCriteriaScore: {`{"reason": "It thanks the user and stays courteous.", "score": 9}`}})
	res := mustCriteria(t, politenessWithSteps, j, Options{ReasonMode: ReasonSummary}).Score(context.Background(), Case{Output: "a"})
	if want := "The score is 0.9 for politeness: It thanks the user and stays courteous."; res.Reason != want {
		t.Errorf("reason %q, want %q", res.Reason, want)
	}
	if res.Usage.LLMCalls != 1 {
		t.Errorf("summary mode made %d calls, want 1", res.Usage.LLMCalls)
	}
	if p := res.Steps.Analyze.(CriteriaResult).Points; p == nil || *p != 9 {
		t.Errorf("analyze result %+v", res.Steps.Analyze)
	}

	cfg := politeness
	cfg.Fields = []Field{FieldContext}
	j = newJudge(nil)
	res = mustCriteria(t, cfg, j, Options{}).Score(context.Background(), Case{Output: "a"})
	if res.Label != LabelNotScorable || !strings.Contains(res.Reason, "no context") || len(j.requests()) != 0 {
		t.Errorf("got %s %q after %d calls, want not scorable without a call", res.Label, res.Reason, len(j.requests()))
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
		replies  []scriptedReply
		wantType ErrorType
		calls    int
	}{
		{"garbled twice", []scriptedReply{reply("<html>502</html>", "stop")}, ErrorJudgeParse, 2},
		{"cut twice", []scriptedReply{reply(`{"reason": "The response is pol`, "length")}, ErrorJudgeTruncated, 2},
		{"timeout", []scriptedReply{{err: context.DeadlineExceeded}}, ErrorJudgeTimeout, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := newJudge(nil)
			for _, r := range tt.replies {
				j.add(SchemaCriteriaScore, r)
			}
			res := mustCriteria(t, politenessWithSteps, j, Options{}).Score(context.Background(), Case{Output: "a"})
			var e *Error
			if res.Label != LabelError || !errors.As(res.Err, &e) || e.Type != tt.wantType || e.Step != StepAnalyze {
				t.Fatalf("got %s %v, want %s in analyze", res.Label, res.Err, tt.wantType)
			}
			if res.Usage.LLMCalls != tt.calls {
				t.Errorf("calls %d, want %d", res.Usage.LLMCalls, tt.calls)
			}
		})
	}
	// One unusable reply is re-asked and the second one used.
	j := newJudge(nil).add(SchemaCriteriaScore, reply("not json", "stop")).add(SchemaCriteriaScore, reply(`{"reason": "r", "score": 8}`, "stop"))
	res := mustCriteria(t, politenessWithSteps, j, Options{OmitReason: true}).Score(context.Background(), Case{Output: "a"})
	if res.Err != nil || res.Score != 0.8 || res.Usage.LLMCalls != 2 {
		t.Errorf("re-ask: %s %v %v after %d calls", res.Label, res.Score, res.Err, res.Usage.LLMCalls)
	}
}
