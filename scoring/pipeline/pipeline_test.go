package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/bias"
	"github.com/llm-eval/llm_eval/scoring/hallucination"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
	"github.com/llm-eval/llm_eval/scoring/promptalignment"
	"github.com/llm-eval/llm_eval/scoring/scorers"
)

func reply(content, finish string) testkit.Reply {
	return testkit.Reply{Resp: scoring.Response{Content: content, FinishReason: finish, PromptTokens: 100, CompletionTokens: 20}}
}

func TestReaskOnceThenSucceeds(t *testing.T) {
	j := testkit.NewJudge(nil).
		Add(bias.SchemaOpinions, testkit.ReplyOf(`{"opinions": ["a", "b"]}`, "stop")).
		Add(bias.SchemaResults, testkit.ReplyOf(`{"results": [{"result": "yes", "reason": "r"}]}`, "stop")).
		Add(bias.SchemaResults, testkit.ReplyOf(`{"results": [{"result": "yes", "reason": "r"}, {"result": "no", "reason": "s"}]}`, "stop")).
		Add(scoring.SchemaReason, testkit.ReplyOf(`{"reason": "ok"}`, "stop"))
	res := mustNew(t, scoring.Bias, j, scoring.Options{}).Score(context.Background(), scoring.Case{Output: "text"})
	if res.Label != scoring.LabelPass || res.Score != 0.5 {
		t.Fatalf("got %s %v %v", res.Label, res.Score, res.Err)
	}
	reqs := j.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d calls, want 4", len(reqs))
	}
	reask := reqs[2]
	if reask.Step != scoring.StepAnalyze || len(reask.Messages) != 4 {
		t.Fatalf("re-ask request: step %q, %d messages", reask.Step, len(reask.Messages))
	}
	if !slices.Equal(reask.Messages[:2], reqs[1].Messages) {
		t.Errorf("re-ask does not repeat the original prompt")
	}
	if m := reask.Messages[2]; m.Role != "assistant" || m.Content != `{"results": [{"result": "yes", "reason": "r"}]}` {
		t.Errorf("re-ask assistant message = %+v", m)
	}
	if m := reask.Messages[3]; m.Role != "user" || !strings.Contains(m.Content, "expected exactly 2 items") {
		t.Errorf("re-ask user message = %+v", m)
	}
	want := scoring.Usage{LLMCalls: 4, PromptTokens: 400, CompletionTokens: 80, Latency: 4 * time.Second}
	if res.Usage != want {
		t.Errorf("usage %+v, want %+v", res.Usage, want)
	}
}

func TestReaskFailureIsAnError(t *testing.T) {
	tests := []struct {
		name     string
		scorer   string
		judge    *testkit.Judge
		c        scoring.Case
		wantType scoring.ErrorType
		wantStep string
		calls    int
	}{
		{
			name:   "wrong count twice",
			scorer: scoring.Bias,
			judge: testkit.NewJudge(nil).
				Add(bias.SchemaOpinions, testkit.ReplyOf(`{"opinions": ["a", "b"]}`, "stop")).
				Add(bias.SchemaResults, testkit.ReplyOf(`{"results": [{"result": "yes"}]}`, "stop")),
			c: scoring.Case{Output: "text"}, wantType: scoring.ErrorJudgeParse, wantStep: scoring.StepAnalyze, calls: 3,
		},
		{
			name:   "prose twice in preprocess",
			scorer: scoring.Hallucination,
			judge:  testkit.NewJudge(nil).Add(hallucination.SchemaClaims, testkit.ReplyOf("I am not able to do that.", "stop")),
			c:      scoring.Case{Output: "text", Context: []string{"c"}}, wantType: scoring.ErrorJudgeParse, wantStep: scoring.StepPreprocess, calls: 2,
		},
		{
			name:   "cut at token limit twice",
			scorer: scoring.PromptAlignment,
			judge:  testkit.NewJudge(nil).Add(promptalignment.SchemaVerdicts, testkit.ReplyOf(`{"verdicts": [{"verdict": "yes", "reason": "the out`, "length")),
			c:      scoring.Case{Output: "text", Instructions: testkit.Instructions(1)}, wantType: scoring.ErrorJudgeTruncated, wantStep: scoring.StepAnalyze, calls: 2,
		},
		{
			name:   "unknown verdict twice",
			scorer: scoring.PromptAlignment,
			judge:  testkit.NewJudge(nil).Add(promptalignment.SchemaVerdicts, testkit.ReplyOf(`{"verdicts": [{"verdict": "partly"}]}`, "stop")),
			c:      scoring.Case{Output: "text", Instructions: testkit.Instructions(1)}, wantType: scoring.ErrorJudgeParse, wantStep: scoring.StepAnalyze, calls: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustNew(t, tt.scorer, tt.judge, scoring.Options{}).Score(context.Background(), tt.c)
			if res.Label != scoring.LabelError {
				t.Fatalf("label %s score %v, want error", res.Label, res.Score)
			}
			var e *scoring.Error
			if !errors.As(res.Err, &e) || e.Type != tt.wantType || e.Step != tt.wantStep {
				t.Fatalf("err = %#v, want type %s step %s", res.Err, tt.wantType, tt.wantStep)
			}
			if res.Score != 0 || res.Scored() {
				t.Errorf("error result carries a score: %v", res.Score)
			}
			if got := len(tt.judge.Requests()); got != tt.calls || res.Usage.LLMCalls != tt.calls {
				t.Errorf("calls %d (usage %d), want %d", got, res.Usage.LLMCalls, tt.calls)
			}
		})
	}
}

func TestStepsKeptOnError(t *testing.T) {
	j := testkit.NewJudge(nil).
		Add(hallucination.SchemaClaims, testkit.ReplyOf(`{"claims": ["a"]}`, "stop")).
		Add(hallucination.SchemaVerdicts, testkit.Reply{Err: errors.New("connection refused")})
	res := mustNew(t, scoring.Hallucination, j, scoring.Options{Verbose: true}).Score(context.Background(), scoring.Case{Output: "o", Context: []string{"c"}})
	if res.Label != scoring.LabelError {
		t.Fatalf("label %s", res.Label)
	}
	if got, ok := res.Steps.Preprocess.(hallucination.Claims); !ok || !slices.Equal(got.Claims, []string{"a"}) {
		t.Errorf("preprocess result lost: %+v", res.Steps.Preprocess)
	}
	if res.Steps.PreprocessPrompt == "" || res.Steps.AnalyzePrompt == "" {
		t.Errorf("prompts lost on error")
	}
	if res.Steps.Analyze != nil {
		t.Errorf("failed step has a result: %+v", res.Steps.Analyze)
	}
}

func TestJudgeErrorTyping(t *testing.T) {
	errRefused := errors.New("connection refused")
	err429 := errors.New("429")
	err401 := errors.New("401")
	tests := []struct {
		name  string
		err   error
		cause error // must stay reachable with errors.Is
		want  scoring.ErrorType
	}{
		{"typed error kept", &scoring.Error{Type: scoring.ErrorJudgeRateLimited, Err: err429}, err429, scoring.ErrorJudgeRateLimited},
		{"wrapped typed error kept", fmt.Errorf("calling judge: %w", &scoring.Error{Type: scoring.ErrorJudgeAuth, Err: err401}), err401, scoring.ErrorJudgeAuth},
		{"circuit open kept", &scoring.Error{Type: scoring.ErrorCircuitOpen, Err: errRefused}, errRefused, scoring.ErrorCircuitOpen},
		{"canceled", fmt.Errorf("post: %w", context.Canceled), context.Canceled, scoring.ErrorCanceled},
		{"deadline", &url.Error{Op: "Post", URL: "http://judge", Err: context.DeadlineExceeded}, context.DeadlineExceeded, scoring.ErrorJudgeTimeout},
		{"other", errRefused, errRefused, scoring.ErrorJudgeUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := testkit.NewJudge(nil).Add(bias.SchemaOpinions, testkit.Reply{Err: tt.err})
			res := mustNew(t, scoring.Bias, j, scoring.Options{}).Score(context.Background(), scoring.Case{Output: "o"})
			var e *scoring.Error
			if res.Label != scoring.LabelError || !errors.As(res.Err, &e) {
				t.Fatalf("got %s %v", res.Label, res.Err)
			}
			if e.Type != tt.want || e.Step != scoring.StepPreprocess {
				t.Errorf("type %s step %q, want %s preprocess", e.Type, e.Step, tt.want)
			}
			if !errors.Is(res.Err, tt.cause) {
				t.Errorf("cause lost: %v", res.Err)
			}
			if len(j.Requests()) != 1 || res.Usage.LLMCalls != 1 {
				t.Errorf("judge errors must not be re-asked: %d calls", len(j.Requests()))
			}
		})
	}
}

type panickingJudge struct{}

func (panickingJudge) Complete(context.Context, scoring.Request) (scoring.Response, error) {
	panic("boom")
}

func TestPanicsBecomeErrors(t *testing.T) {
	res := mustNew(t, scoring.Bias, panickingJudge{}, scoring.Options{}).Score(context.Background(), scoring.Case{Output: "o"})
	if res.Label != scoring.LabelError || !strings.Contains(res.Err.Error(), "judge panicked: boom") {
		t.Errorf("judge panic: %s %v", res.Label, res.Err)
	}
	redact := func(string) string { panic("bad redactor") }
	res = mustNew(t, scoring.Bias, testkit.NewJudge(nil), scoring.Options{Redact: redact}).Score(context.Background(), scoring.Case{Output: "o"})
	var e *scoring.Error
	if res.Label != scoring.LabelError || !errors.As(res.Err, &e) || e.Type != scoring.ErrorInvalidCase {
		t.Errorf("redact panic: %s %v", res.Label, res.Err)
	}
}

func TestCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, name := range scorers.Names() {
		j := testkit.NewJudge(testkit.BiasReplies("yes"))
		res := mustNew(t, name, j, scoring.Options{}).Score(ctx, scoring.Case{Output: "o", Context: []string{"c"}, Instructions: []string{"i"}})
		var e *scoring.Error
		if res.Label != scoring.LabelError || !errors.As(res.Err, &e) || e.Type != scoring.ErrorCanceled {
			t.Errorf("%s: got %s %v", name, res.Label, res.Err)
		}
		if len(j.Requests()) != 0 {
			t.Errorf("%s: judge called with a canceled context", name)
		}
	}

	// Canceled while the first call is in flight: no further call is made.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	j := testkit.NewJudge(testkit.BiasReplies("yes"))
	j.OnCall = func(scoring.Request) { cancel() }
	res := mustNew(t, scoring.Bias, j, scoring.Options{}).Score(ctx, scoring.Case{Output: "o"})
	var e *scoring.Error
	if res.Label != scoring.LabelError || !errors.As(res.Err, &e) || e.Type != scoring.ErrorCanceled || e.Step != scoring.StepAnalyze {
		t.Errorf("got %s %#v", res.Label, res.Err)
	}
	if n := len(j.Requests()); n != 1 {
		t.Errorf("%d calls after cancel, want 1", n)
	}

	// Deadline passed before scoring.
	dctx, dcancel := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer dcancel()
	res = mustNew(t, scoring.Bias, testkit.NewJudge(nil), scoring.Options{}).Score(dctx, scoring.Case{Output: "o"})
	if !errors.As(res.Err, &e) || e.Type != scoring.ErrorJudgeTimeout {
		t.Errorf("deadline: got %s %v", res.Label, res.Err)
	}
}

func TestRequestsCarryStepAndSchema(t *testing.T) {
	tests := []struct {
		scorer  string
		replies map[string][]string
		c       scoring.Case
		want    [][2]string
	}{
		{scoring.Bias, testkit.BiasReplies("yes"), scoring.Case{Output: "o"},
			[][2]string{{scoring.StepPreprocess, bias.SchemaOpinions}, {scoring.StepAnalyze, bias.SchemaResults}, {scoring.StepReason, scoring.SchemaReason}}},
		{scoring.Hallucination, testkit.HallucinationReplies("yes"), scoring.Case{Output: "o", Context: []string{"c"}},
			[][2]string{{scoring.StepPreprocess, hallucination.SchemaClaims}, {scoring.StepAnalyze, hallucination.SchemaVerdicts}, {scoring.StepReason, scoring.SchemaReason}}},
		{scoring.PromptAlignment, testkit.AlignmentReplies("yes"), scoring.Case{Output: "o", Instructions: testkit.Instructions(1)},
			[][2]string{{scoring.StepAnalyze, promptalignment.SchemaVerdicts}, {scoring.StepReason, scoring.SchemaReason}}},
	}
	for _, tt := range tests {
		j := testkit.NewJudge(tt.replies)
		res := mustNew(t, tt.scorer, j, scoring.Options{}).Score(context.Background(), tt.c)
		if res.Err != nil {
			t.Fatalf("%s: %v", tt.scorer, res.Err)
		}
		var got [][2]string
		for _, r := range j.Requests() {
			got = append(got, [2]string{r.Step, r.Schema.Name})
			if len(r.Messages) != 2 || r.Messages[0].Role != "system" || r.Messages[1].Role != "user" {
				t.Errorf("%s %s: messages %+v", tt.scorer, r.Step, r.Messages)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: requests %v, want %v", tt.scorer, got, tt.want)
		}
	}
}

func TestSummaryReason(t *testing.T) {
	tests := []struct {
		name    string
		scorer  string
		replies map[string][]string
		c       scoring.Case
		want    string
	}{
		{"bias", scoring.Bias, testkit.BiasReplies("yes", "no", "yes"), scoring.Case{Output: "o"},
			"The score is 0.67 because 2 of 3 opinions are biased: reason 1; reason 3."},
		{"bias none", scoring.Bias, testkit.BiasReplies("no"), scoring.Case{Output: "o"},
			"The score is 0 because none of the 1 opinion in the output is biased."},
		{"hallucination", scoring.Hallucination, testkit.HallucinationReplies("no", "yes"), scoring.Case{Output: "o", Context: []string{"c"}},
			"The score is 0.5 because the context contradicts or does not support 1 of 2 claims: reason 2."},
		{"hallucination none", scoring.Hallucination, testkit.HallucinationReplies("no", "no"), scoring.Case{Output: "o", Context: []string{"c"}},
			"The score is 0 because the context supports all 2 claims of the output."},
		{"alignment", scoring.PromptAlignment, testkit.AlignmentReplies("yes", "no", "n/a"), scoring.Case{Output: "o", Instructions: testkit.Instructions(3)},
			"The score is 0.5 because the output breaks 1 of 2 applicable instructions (1 not applicable): reason 2."},
		{"alignment all followed", scoring.PromptAlignment, testkit.AlignmentReplies("yes"), scoring.Case{Output: "o", Instructions: testkit.Instructions(1)},
			"The score is 1 because the output follows all 1 applicable instruction."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := testkit.NewJudge(tt.replies)
			res := mustNew(t, tt.scorer, j, scoring.Options{ReasonMode: scoring.ReasonSummary}).Score(context.Background(), tt.c)
			if res.Reason != tt.want {
				t.Errorf("reason %q\nwant   %q", res.Reason, tt.want)
			}
			for _, name := range j.Schemas() {
				if name == scoring.SchemaReason {
					t.Errorf("summary mode called the reason step")
				}
			}
			if res.Steps.Reason != nil {
				t.Errorf("summary mode recorded a reason step result")
			}
		})
	}
}

// TestSummaryAndScoreAgree checks the one-predicate rule: verdict variants
// are counted the same by the score and the summary reason.
func TestSummaryAndScoreAgree(t *testing.T) {
	j := testkit.NewJudge(testkit.BiasReplies("Yes.", " YES", "**yes**", "No.", "no"))
	res := mustNew(t, scoring.Bias, j, scoring.Options{ReasonMode: scoring.ReasonSummary}).Score(context.Background(), scoring.Case{Output: "o"})
	if res.Score != 3.0/5.0 {
		t.Errorf("score %v, want 0.6", res.Score)
	}
	if !strings.Contains(res.Reason, "3 of 5 opinions are biased") {
		t.Errorf("reason %q disagrees with the score", res.Reason)
	}
}

func TestVerboseKeepsPrompts(t *testing.T) {
	j := testkit.NewJudge(testkit.BiasReplies("yes"))
	res := mustNew(t, scoring.Bias, j, scoring.Options{Verbose: true}).Score(context.Background(), scoring.Case{Output: "o"})
	reqs := j.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d calls", len(reqs))
	}
	got := []string{res.Steps.PreprocessPrompt, res.Steps.AnalyzePrompt, res.Steps.ReasonPrompt}
	for i, r := range reqs {
		if got[i] != pipeline.PromptText(r.Messages) {
			t.Errorf("step %s prompt = %q, want what was sent", r.Step, got[i])
		}
		if !strings.Contains(got[i], "[system]\n") || !strings.Contains(got[i], "[user]\n") {
			t.Errorf("step %s prompt lacks its messages", r.Step)
		}
	}
}

func TestRedactAndTruncateWhatTheJudgeSees(t *testing.T) {
	redact := func(s string) string { return strings.ReplaceAll(s, "4111-1111", "[CARD]") }
	j := testkit.NewJudge(testkit.AlignmentReplies("yes", "no"))
	s := mustNew(t, scoring.PromptAlignment, j, scoring.Options{Redact: redact, MaxInputChars: 12, OmitReason: true})
	res := s.Score(context.Background(), scoring.Case{
		Input:        "pay with 4111-1111 now",
		Output:       "héllo wörld, this is long",
		Instructions: []string{"short", "card 4111-1111 must be hidden"},
		Metadata:     map[string]string{"tenant": "acme-secret"},
	})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if !res.Truncated {
		t.Errorf("Truncated not set")
	}
	user := j.Requests()[0].Messages[1].Content
	for _, want := range []string{
		testkit.MustJSON("pay with [CA" + scoring.TruncationMarker),
		testkit.MustJSON("héllo wörld," + scoring.TruncationMarker),
		testkit.MustJSON("short"),
		testkit.MustJSON("card [CARD] " + scoring.TruncationMarker),
	} {
		if !strings.Contains(user, want) {
			t.Errorf("judge prompt lacks %s:\n%s", want, user)
		}
	}
	for _, secret := range []string{"4111", "acme-secret", "this is long"} {
		if strings.Contains(user, secret) {
			t.Errorf("judge prompt contains %q", secret)
		}
	}

	j = testkit.NewJudge(testkit.AlignmentReplies("yes"))
	res = mustNew(t, scoring.PromptAlignment, j, scoring.Options{MaxInputChars: 100}).Score(context.Background(), scoring.Case{Output: "short", Instructions: []string{"x"}})
	if res.Truncated {
		t.Errorf("Truncated set on short text")
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
		cut  bool
	}{
		{"hello", 0, "hello", false},
		{"hello", 5, "hello", false},
		{"hello", 4, "hell" + scoring.TruncationMarker, true},
		{"日本語テキスト", 3, "日本語" + scoring.TruncationMarker, true},
		{"", 3, "", false},
	}
	for _, tt := range tests {
		got, cut := pipeline.Truncate(tt.in, tt.max)
		if got != tt.want || cut != tt.cut {
			t.Errorf("truncate(%q, %d) = %q, %v; want %q, %v", tt.in, tt.max, got, cut, tt.want, tt.cut)
		}
	}
}

func TestCallerSlicesUntouched(t *testing.T) {
	ctxItems := []string{"doc one", "doc two"}
	j := testkit.NewJudge(testkit.HallucinationReplies("no"))
	mustNew(t, scoring.Hallucination, j, scoring.Options{Redact: strings.ToUpper, MaxInputChars: 3}).
		Score(context.Background(), scoring.Case{Output: "o", Context: ctxItems})
	if !slices.Equal(ctxItems, []string{"doc one", "doc two"}) {
		t.Errorf("caller's context changed: %q", ctxItems)
	}
}

// TestReasonFailureKeepsScore checks that a failed reason step does not
// discard a valid score: the label stands, the reason falls back to the
// summary built from the verdicts, and the failure is reported beside it.
func TestReasonFailureKeepsScore(t *testing.T) {
	tests := []struct {
		name     string
		reason   testkit.Reply
		wantType scoring.ErrorType
		calls    int
	}{
		{"unusable twice", testkit.ReplyOf(`{"reason": ""}`, "stop"), scoring.ErrorJudgeParse, 3},
		{"cut twice", testkit.ReplyOf(`{"reason": "The score is`, "length"), scoring.ErrorJudgeTruncated, 3},
		{"judge down", testkit.Reply{Err: &scoring.Error{Type: scoring.ErrorJudgeUnavailable, Err: errors.New("503")}}, scoring.ErrorJudgeUnavailable, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := testkit.NewJudge(testkit.AlignmentReplies("yes", "no")).Set(scoring.SchemaReason, tt.reason) // only the scripted failure
			res := mustNew(t, scoring.PromptAlignment, j, scoring.Options{}).Score(context.Background(), scoring.Case{Output: "o", Instructions: testkit.Instructions(2)})
			if res.Label != scoring.LabelPass || res.Score != 0.5 || res.Err != nil {
				t.Fatalf("got %s %v %v, want pass 0.5 with no error", res.Label, res.Score, res.Err)
			}
			want := "The score is 0.5 because the output breaks 1 of 2 applicable instructions: reason 2."
			if res.Reason != want {
				t.Errorf("reason %q, want the summary %q", res.Reason, want)
			}
			var e *scoring.Error
			if !errors.As(res.ReasonErr, &e) || e.Type != tt.wantType || e.Step != scoring.StepReason {
				t.Errorf("ReasonErr = %#v, want %s in the reason step", res.ReasonErr, tt.wantType)
			}
			if !strings.Contains(res.Steps.ReasonError, string(tt.wantType)) {
				t.Errorf("Steps.ReasonError = %q, want the failure", res.Steps.ReasonError)
			}
			if res.Steps.Reason != nil {
				t.Errorf("failed reason step has a result: %+v", res.Steps.Reason)
			}
			if res.Usage.LLMCalls != tt.calls {
				t.Errorf("calls %d, want %d", res.Usage.LLMCalls, tt.calls)
			}
		})
	}
}
