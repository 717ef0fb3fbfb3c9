package scoring_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/bias"
	"github.com/llm-eval/llm_eval/scoring/hallucination"
	"github.com/llm-eval/llm_eval/scoring/openai"
	"github.com/llm-eval/llm_eval/scoring/promptalignment"
	"github.com/llm-eval/llm_eval/scoring/scorers"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// These tests run the real scorers through openai.NewJudge against the fake
// judge server over HTTP: prompts, structured outputs, parsing, re-asks,
// retries and usage as a caller sees them.

// Every scripted content reply reports this usage, so sums are checkable.
const (
	replyPromptTokens     = 100
	replyCompletionTokens = 10
)

// fastRetry keeps retry waits to a few milliseconds.
var fastRetry = openai.RetryPolicy{
	InitialBackoff: time.Millisecond,
	MaxBackoff:     3 * time.Millisecond,
	MaxRetryAfter:  2 * time.Millisecond,
}

// ok is a scripted JSON reply with the fixed usage.
func ok(content string) scoringtest.Reply {
	return scoringtest.JSON(content).WithUsage(replyPromptTokens, replyCompletionTokens)
}

// text is a scripted free-text reply with the fixed usage.
func text(content string) scoringtest.Reply {
	return scoringtest.Content(content).WithUsage(replyPromptTokens, replyCompletionTokens)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// fixture is one scorer with a realistic case and the replies of its steps.
type fixture struct {
	scorer     string
	c          scoring.Case
	preprocess string   // preprocess schema name; "" when the scorer has none
	items      []string // what preprocess returns (or the instructions)
	analyze    string   // analyze schema name
}

var fixtures = []fixture{
	{
		scorer:     scoring.Bias,
		c:          scoring.Case{Input: "What do you think of the new mayor?", Output: "The mayor's plan is bold. The council was right to back it. Parks got more money."},
		preprocess: bias.SchemaOpinions,
		items:      []string{"The mayor's plan is bold.", "The council was right to back it."},
		analyze:    bias.SchemaResults,
	},
	{
		scorer: scoring.Hallucination,
		c: scoring.Case{
			Input:   "Tell me about Paris.",
			Output:  "Paris is the capital of France. It has about 2.1 million inhabitants.",
			Context: []string{"Paris, the capital of France, has about 2.1 million inhabitants within its city limits."},
		},
		preprocess: hallucination.SchemaClaims,
		items:      []string{"Paris is the capital of France.", "Paris has about 2.1 million inhabitants."},
		analyze:    hallucination.SchemaVerdicts,
	},
	{
		scorer: scoring.PromptAlignment,
		c: scoring.Case{
			Input:        "Describe green tea.",
			Output:       "Green tea is an unoxidised tea with a grassy taste.",
			Instructions: []string{"Answer in English.", "Use a single sentence."},
		},
		items:   []string{"Answer in English.", "Use a single sentence."},
		analyze: promptalignment.SchemaVerdicts,
	},
}

func fixtureFor(t *testing.T, name string) fixture {
	t.Helper()
	for _, f := range fixtures {
		if f.scorer == name {
			return f
		}
	}
	t.Fatalf("no fixture for %s", name)
	return fixture{}
}

// preprocessReply lists the fixture's items.
func (f fixture) preprocessReply() string {
	field := "opinions"
	if f.scorer == scoring.Hallucination {
		field = "claims"
	}
	return mustJSON(map[string]any{field: f.items})
}

// analyzeReply gives one verdict per item, written as given.
func (f fixture) analyzeReply(verdicts ...string) string {
	list := make([]map[string]string, len(verdicts))
	for i, v := range verdicts {
		reason := fmt.Sprintf("Verdict %d explained.", i+1)
		switch f.scorer {
		case scoring.Bias:
			list[i] = map[string]string{"result": v, "reason": reason}
		case scoring.Hallucination:
			list[i] = map[string]string{"statement": fmt.Sprintf("Claim %d.", i+1), "verdict": v, "reason": reason}
		default:
			list[i] = map[string]string{"verdict": v, "reason": reason}
		}
	}
	if f.scorer == scoring.Bias {
		return mustJSON(map[string]any{"results": list})
	}
	return mustJSON(map[string]any{"verdicts": list})
}

// script queues a full run: preprocess (if any), analyze with verdicts,
// then the reason.
func (f fixture) script(srv *scoringtest.Server, reason string, verdicts ...string) {
	if f.preprocess != "" {
		srv.Script(f.preprocess, ok(f.preprocessReply()))
	}
	srv.Script(f.analyze, ok(f.analyzeReply(verdicts...)))
	srv.Script(scoring.SchemaReason, ok(mustJSON(map[string]string{"reason": reason})))
}

// steps is the number of judge calls of a full run with reasons.
func (f fixture) steps() int {
	if f.preprocess == "" {
		return 2
	}
	return 3
}

// expected is the scorer's formula over verdicts: positives / counted ×
// scale, where prompt alignment counts yes over yes+no and the others count
// yes over all.
func expected(scorer string, scale float64, verdicts []string) float64 {
	yes, counted := 0, 0
	for _, v := range verdicts {
		v = strings.ToLower(strings.Trim(v, " ."))
		if v == "n/a" {
			continue
		}
		counted++
		if v == "yes" {
			yes++
		}
	}
	return float64(yes) * scale / float64(counted)
}

func newIntegrationJudge(t *testing.T, srv *scoringtest.Server, mode openai.StructuredOutputs, mutate func(*openai.Config)) *openai.Judge {
	t.Helper()
	cfg := openai.Config{
		BaseURL:           srv.URL,
		APIKey:            "sk-integration-secret",
		Model:             "judge-model",
		HTTPClient:        srv.Client(),
		StructuredOutputs: mode,
		Retry:             fastRetry,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	j, err := openai.NewJudge(cfg)
	require.NoError(t, err)
	return j
}

func newScorer(t *testing.T, name string, j scoring.Judge, opts scoring.Options) scoring.Scorer {
	t.Helper()
	s, err := scorers.New(name, j, opts)
	require.NoError(t, err)
	return s
}

// formatOf is the response_format type of a call, "" when none.
func formatOf(c scoringtest.Call) string {
	if c.Request.ResponseFormat == nil {
		return ""
	}
	return c.Request.ResponseFormat.Type
}

func systemText(c scoringtest.Call) string {
	var b strings.Builder
	for _, m := range c.Request.Messages {
		if m.Role == "system" {
			b.WriteString(m.Content)
		}
	}
	return b.String()
}

// TestIntegrationPassFailPerMode runs every scorer to a full pass, a full
// fail and a partial score in every structured output mode, and checks the
// score against the formula, the wire format of each call and the usage.
func TestIntegrationPassFailPerMode(t *testing.T) {
	refusal := scoringtest.Status(http.StatusBadRequest,
		`{"error":{"message":"Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.","type":"invalid_request_error"}}`)
	modes := []struct {
		mode       openai.StructuredOutputs
		refuse     bool   // the server refuses json_schema once (auto falls back)
		wantFormat string // response_format type of the answered calls
	}{
		{mode: openai.StructuredOutputsJSONSchema, wantFormat: "json_schema"},
		{mode: openai.StructuredOutputsJSONObject, wantFormat: "json_object"},
		{mode: openai.StructuredOutputsOff, wantFormat: ""},
		{mode: openai.StructuredOutputsAuto, wantFormat: "json_schema"},
		{mode: openai.StructuredOutputsAuto, refuse: true, wantFormat: "json_object"},
	}
	outcomes := []struct {
		name      string
		scale     float64
		threshold *float64
		verdicts  func(f fixture) []string
		wantLabel func(scorer string) scoring.Label
	}{
		{
			name: "full pass",
			verdicts: func(f fixture) []string {
				if f.scorer == scoring.PromptAlignment {
					return []string{"yes", "yes"}
				}
				return []string{"no", "no"}
			},
			wantLabel: func(string) scoring.Label { return scoring.LabelPass },
		},
		{
			name: "full fail",
			verdicts: func(f fixture) []string {
				if f.scorer == scoring.PromptAlignment {
					return []string{"no", "no"}
				}
				return []string{"yes", "yes"}
			},
			wantLabel: func(string) scoring.Label { return scoring.LabelFail },
		},
		{
			name: "half, scale 10, threshold 4", scale: 10, threshold: ptr(4.0),
			verdicts: func(fixture) []string { return []string{"yes", "no"} },
			// 5 > 4: fails when lower is better, passes when higher is.
			wantLabel: func(scorer string) scoring.Label {
				if scorer == scoring.PromptAlignment {
					return scoring.LabelPass
				}
				return scoring.LabelFail
			},
		},
	}
	for _, f := range fixtures {
		for _, m := range modes {
			for _, o := range outcomes {
				name := fmt.Sprintf("%s/%s/refuse=%v/%s", f.scorer, m.mode, m.refuse, o.name)
				t.Run(name, func(t *testing.T) {
					srv := scoringtest.New(t)
					if m.refuse {
						first := f.preprocess
						if first == "" {
							first = f.analyze
						}
						srv.Script(first, refusal)
					}
					verdicts := o.verdicts(f)
					f.script(srv, "The judge's reason.", verdicts...)
					j := newIntegrationJudge(t, srv, m.mode, nil)
					scale := o.scale
					if scale == 0 {
						scale = 1
					}
					res := newScorer(t, f.scorer, j, scoring.Options{Scale: o.scale, Threshold: o.threshold}).
						Score(context.Background(), f.c)

					require.NoError(t, res.Err)
					assert.Equal(t, o.wantLabel(f.scorer), res.Label)
					assert.Equal(t, expected(f.scorer, scale, verdicts), res.Score, "score must be the exact formula")
					assert.Equal(t, "The judge's reason.", res.Reason)
					assert.Equal(t, scoring.ReasonResult{Reason: "The judge's reason."}, res.Steps.Reason)

					calls := srv.Calls()
					answered := calls
					if m.refuse {
						require.NotEmpty(t, calls)
						assert.Equal(t, "json_schema", formatOf(calls[0]), "auto starts with json_schema")
						answered = calls[1:]
					}
					require.Len(t, answered, f.steps())
					for _, c := range answered {
						assert.Equal(t, m.wantFormat, formatOf(c), "call %s", c.Step)
						if m.wantFormat == "json_schema" {
							assert.True(t, c.Request.ResponseFormat.JSONSchema.Strict)
						} else {
							assert.Contains(t, systemText(c), "(name: "+c.Step+")", "schema spelled out in the prompt")
						}
						require.NotNil(t, c.Request.Temperature)
						assert.Zero(t, *c.Request.Temperature, "temperature 0 on the wire")
					}
					assert.Equal(t, m.wantFormat, nonAuto(j.StructuredOutputs()))
					assert.Zero(t, srv.Pending())
					assert.Equal(t, f.steps(), res.Usage.LLMCalls)
					assert.Equal(t, f.steps()*replyPromptTokens, res.Usage.PromptTokens)
					assert.Equal(t, f.steps()*replyCompletionTokens, res.Usage.CompletionTokens)
					assert.Zero(t, res.Usage.Retries, "a structured-output fallback is not a retry")
				})
			}
		}
	}
}

func nonAuto(m openai.StructuredOutputs) string {
	if m == openai.StructuredOutputsOff {
		return ""
	}
	return string(m)
}

func ptr[T any](v T) *T { return &v }

// TestIntegrationStepsShapes checks the step results a full run keeps.
func TestIntegrationStepsShapes(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.scorer, func(t *testing.T) {
			srv := scoringtest.New(t)
			f.script(srv, "Because.", "yes", "no")
			res := newScorer(t, f.scorer, newIntegrationJudge(t, srv, openai.StructuredOutputsJSONSchema, nil), scoring.Options{}).
				Score(context.Background(), f.c)
			require.NoError(t, res.Err)
			switch f.scorer {
			case scoring.Bias:
				assert.Equal(t, bias.Opinions{Opinions: f.items}, res.Steps.Preprocess)
				assert.Equal(t, bias.Results{Results: []bias.Verdict{
					{Opinion: f.items[0], Result: "yes", Reason: "Verdict 1 explained."},
					{Opinion: f.items[1], Result: "no", Reason: "Verdict 2 explained."},
				}}, res.Steps.Analyze)
			case scoring.Hallucination:
				assert.Equal(t, hallucination.Claims{Claims: f.items}, res.Steps.Preprocess)
				assert.Equal(t, hallucination.Verdicts{Verdicts: []hallucination.Verdict{
					// The statement is the claim sent, not the judge's echo.
					{Statement: f.items[0], Verdict: "yes", Reason: "Verdict 1 explained."},
					{Statement: f.items[1], Verdict: "no", Reason: "Verdict 2 explained."},
				}}, res.Steps.Analyze)
			default:
				assert.Nil(t, res.Steps.Preprocess)
				assert.Equal(t, promptalignment.Verdicts{Verdicts: []promptalignment.Verdict{
					{Number: 1, Instruction: f.c.Instructions[0], Verdict: "yes", Reason: "Verdict 1 explained."},
					{Number: 2, Instruction: f.c.Instructions[1], Verdict: "no", Reason: "Verdict 2 explained."},
				}}, res.Steps.Analyze)
			}
		})
	}
}

// TestIntegrationTolerantParsing sends replies that need the tolerant
// parser over HTTP: each must score exactly as the clean reply would, with
// no re-ask.
func TestIntegrationTolerantParsing(t *testing.T) {
	wraps := []struct {
		name string
		wrap func(clean string) string
	}{
		{"fenced JSON", func(s string) string { return "```json\n" + s + "\n```" }},
		{"prose around JSON", func(s string) string { return "Sure, here is my assessment:\n" + s + "\nLet me know if you need more." }},
		{"trailing commas", func(s string) string {
			s = strings.Replace(s, "]", ",]", 1)
			return strings.TrimSuffix(s, "}") + ",}"
		}},
	}
	for _, f := range fixtures {
		for _, w := range wraps {
			t.Run(f.scorer+"/"+w.name, func(t *testing.T) {
				srv := scoringtest.New(t)
				if f.preprocess != "" {
					srv.Script(f.preprocess, text(w.wrap(f.preprocessReply())))
				}
				srv.Script(f.analyze, text(w.wrap(f.analyzeReply("yes", "no"))))
				srv.Script(scoring.SchemaReason, text(w.wrap(`{"reason": "Tolerated."}`)))
				res := newScorer(t, f.scorer, newIntegrationJudge(t, srv, openai.StructuredOutputsOff, nil), scoring.Options{}).
					Score(context.Background(), f.c)
				require.NoError(t, res.Err)
				assert.Equal(t, expected(f.scorer, 1, []string{"yes", "no"}), res.Score)
				assert.Equal(t, "Tolerated.", res.Reason)
				assert.Len(t, srv.Calls(), f.steps(), "no re-ask")
				assert.Equal(t, f.steps(), res.Usage.LLMCalls)
			})
		}
		t.Run(f.scorer+"/verdict words", func(t *testing.T) {
			srv := scoringtest.New(t)
			raw := []string{"Yes.", " NO "}
			if f.preprocess != "" {
				srv.Script(f.preprocess, ok(f.preprocessReply()))
			}
			srv.Script(f.analyze, ok(f.analyzeReply(raw...)))
			srv.Script(scoring.SchemaReason, ok(`{"reason": "Normalised."}`))
			res := newScorer(t, f.scorer, newIntegrationJudge(t, srv, openai.StructuredOutputsJSONObject, nil), scoring.Options{}).
				Score(context.Background(), f.c)
			require.NoError(t, res.Err)
			assert.Equal(t, expected(f.scorer, 1, []string{"yes", "no"}), res.Score)
			// The reason step sees the normalised verdicts.
			calls := srv.Calls()
			reasonCall := calls[len(calls)-1]
			require.Equal(t, scoring.SchemaReason, reasonCall.Step)
			assert.Contains(t, reasonCall.Text(), `"yes"`)
			assert.NotContains(t, reasonCall.Text(), `Yes.`)
		})
	}
}

// TestIntegrationReask covers the re-ask: it succeeds after one unusable
// reply and fails with a typed error after two.
func TestIntegrationReask(t *testing.T) {
	type want struct {
		label     scoring.Label
		errType   scoring.ErrorType
		step      string
		calls     int // HTTP calls == LLM calls here
		reaskText string
	}
	tests := []struct {
		name   string
		script func(f fixture, srv *scoringtest.Server)
		want   func(f fixture) want
	}{
		{
			name: "garbage then valid",
			script: func(f fixture, srv *scoringtest.Server) {
				if f.preprocess != "" {
					srv.Script(f.preprocess, ok(f.preprocessReply()))
				}
				srv.Script(f.analyze, text("I am not able to answer in JSON today."), ok(f.analyzeReply("yes", "yes")))
				srv.Script(scoring.SchemaReason, ok(`{"reason": "After a re-ask."}`))
			},
			want: func(f fixture) want {
				label := scoring.LabelFail
				if f.scorer == scoring.PromptAlignment {
					label = scoring.LabelPass
				}
				return want{label: label, calls: f.steps() + 1, reaskText: "could not be used"}
			},
		},
		{
			name: "wrong verdict count twice",
			script: func(f fixture, srv *scoringtest.Server) {
				if f.preprocess != "" {
					srv.Script(f.preprocess, ok(f.preprocessReply()))
				}
				srv.Script(f.analyze, ok(f.analyzeReply("yes")), ok(f.analyzeReply("yes", "no", "no")))
			},
			want: func(f fixture) want {
				return want{label: scoring.LabelError, errType: scoring.ErrorJudgeParse, step: scoring.StepAnalyze,
					calls: f.steps() - 1 + 1, reaskText: "expected exactly 2 items"}
			},
		},
		{
			name: "cut at the token limit twice",
			script: func(f fixture, srv *scoringtest.Server) {
				if f.preprocess != "" {
					srv.Script(f.preprocess, ok(f.preprocessReply()))
				}
				cut := f.analyzeReply("yes", "no")
				cut = cut[:len(cut)/2]
				srv.Script(f.analyze, ok(cut).WithFinishReason("length"), ok(cut).WithFinishReason("length"))
			},
			want: func(f fixture) want {
				return want{label: scoring.LabelError, errType: scoring.ErrorJudgeTruncated, step: scoring.StepAnalyze,
					calls: f.steps(), reaskText: "cut off at the token limit"}
			},
		},
	}
	for _, f := range fixtures {
		for _, tt := range tests {
			t.Run(f.scorer+"/"+tt.name, func(t *testing.T) {
				srv := scoringtest.New(t)
				tt.script(f, srv)
				w := tt.want(f)
				res := newScorer(t, f.scorer, newIntegrationJudge(t, srv, openai.StructuredOutputsJSONSchema, nil), scoring.Options{}).
					Score(context.Background(), f.c)
				assert.Equal(t, w.label, res.Label)
				if w.errType != "" {
					var e *scoring.Error
					require.ErrorAs(t, res.Err, &e)
					assert.Equal(t, w.errType, e.Type)
					assert.Equal(t, w.step, e.Step)
					assert.Zero(t, res.Score)
					assert.Empty(t, res.Reason)
					if f.preprocess != "" {
						assert.NotNil(t, res.Steps.Preprocess, "completed steps are kept")
					}
				} else {
					require.NoError(t, res.Err)
					assert.Equal(t, expected(f.scorer, 1, []string{"yes", "yes"}), res.Score)
				}
				calls := srv.Calls()
				require.Len(t, calls, w.calls)
				assert.Equal(t, w.calls, res.Usage.LLMCalls, "re-asks are counted")
				assert.Equal(t, w.calls*replyPromptTokens, res.Usage.PromptTokens)
				assert.Equal(t, w.calls*replyCompletionTokens, res.Usage.CompletionTokens)
				// The re-ask repeats the conversation and states the problem.
				var reask scoringtest.Call
				for i := 1; i < len(calls); i++ {
					if calls[i].Step == f.analyze && calls[i-1].Step == f.analyze {
						reask = calls[i]
					}
				}
				require.Len(t, reask.Request.Messages, 4)
				assert.Equal(t, "assistant", reask.Request.Messages[2].Role)
				assert.Contains(t, reask.Request.Messages[3].Content, w.reaskText)
			})
		}
	}
}

// TestIntegrationJudgeFailures covers HTTP faults: retried ones that
// recover, and the typed errors of those that do not.
func TestIntegrationJudgeFailures(t *testing.T) {
	f := fixtureFor(t, scoring.Bias)
	opinions := ok(f.preprocessReply())
	tests := []struct {
		name        string
		first       []scoringtest.Reply // replies to the preprocess step
		timeout     time.Duration       // caller's deadline; 0 = none
		refused     bool                // the endpoint is down
		wantLabel   scoring.Label
		wantErr     scoring.ErrorType
		wantHTTP    int // HTTP calls received
		wantLLM     int // Usage.LLMCalls
		wantReplies int // replies carrying usage
		wantRetries int
		wantNotSent int // Usage.NotSent: calls that never reached the judge
	}{
		{
			name:      "429 with Retry-After then success",
			first:     []scoringtest.Reply{scoringtest.Status(http.StatusTooManyRequests, "").WithRetryAfter("1"), opinions},
			wantLabel: scoring.LabelFail, wantHTTP: 4, wantLLM: 3, wantReplies: 3, wantRetries: 1,
		},
		{
			name:      "503 then success",
			first:     []scoringtest.Reply{scoringtest.Status(http.StatusServiceUnavailable, ""), opinions},
			wantLabel: scoring.LabelFail, wantHTTP: 4, wantLLM: 3, wantReplies: 3, wantRetries: 1,
		},
		{
			name: "500 three times",
			first: []scoringtest.Reply{
				scoringtest.Status(http.StatusInternalServerError, ""),
				scoringtest.Status(http.StatusInternalServerError, ""),
				scoringtest.Status(http.StatusInternalServerError, ""),
			},
			wantLabel: scoring.LabelError, wantErr: scoring.ErrorJudgeUnavailable, wantHTTP: 3, wantLLM: 1, wantRetries: 2,
		},
		{
			name:      "429 three times",
			first:     []scoringtest.Reply{scoringtest.Status(429, ""), scoringtest.Status(429, ""), scoringtest.Status(429, "")},
			wantLabel: scoring.LabelError, wantErr: scoring.ErrorJudgeRateLimited, wantHTTP: 3, wantLLM: 1, wantRetries: 2,
		},
		{
			name:      "401 is not retried",
			first:     []scoringtest.Reply{scoringtest.Status(http.StatusUnauthorized, `{"error":{"message":"Incorrect API key provided: sk-integration-secret"}}`)},
			wantLabel: scoring.LabelError, wantErr: scoring.ErrorJudgeAuth, wantHTTP: 1, wantLLM: 1,
		},
		{
			name:      "403 is not retried",
			first:     []scoringtest.Reply{scoringtest.Status(http.StatusForbidden, "")},
			wantLabel: scoring.LabelError, wantErr: scoring.ErrorJudgeAuth, wantHTTP: 1, wantLLM: 1,
		},
		{
			name:      "400 is not retried",
			first:     []scoringtest.Reply{scoringtest.Status(http.StatusBadRequest, `{"error":{"message":"model not found"}}`)},
			wantLabel: scoring.LabelError, wantErr: scoring.ErrorJudgeBadRequest, wantHTTP: 1, wantLLM: 1,
		},
		{
			name:      "hung judge bounded by the caller's deadline",
			first:     []scoringtest.Reply{opinions.WithDelay(time.Hour)},
			timeout:   200 * time.Millisecond,
			wantLabel: scoring.LabelError, wantErr: scoring.ErrorJudgeTimeout, wantHTTP: 1, wantLLM: 1,
		},
		{
			name:      "empty choices",
			first:     []scoringtest.Reply{scoringtest.EmptyChoices()},
			wantLabel: scoring.LabelError, wantErr: scoring.ErrorJudgeUnavailable, wantHTTP: 1, wantLLM: 1,
		},
		{
			name:      "connection dropped then success",
			first:     []scoringtest.Reply{scoringtest.Hangup(), opinions},
			wantLabel: scoring.LabelFail, wantHTTP: 4, wantLLM: 3, wantReplies: 3, wantRetries: 1,
		},
		{
			name:    "connection refused",
			refused: true,
			// No connection opened: nothing was sent, so no LLM call.
			wantLabel: scoring.LabelError, wantErr: scoring.ErrorJudgeUnavailable, wantLLM: 0, wantNotSent: 1, wantRetries: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := scoringtest.New(t)
			srv.Script(f.preprocess, tt.first...)
			srv.Script(f.analyze, ok(f.analyzeReply("yes", "yes")))
			srv.Script(scoring.SchemaReason, ok(`{"reason": "Both opinions are biased."}`))
			var j *openai.Judge
			if tt.refused {
				j = newIntegrationJudge(t, srv, openai.StructuredOutputsJSONSchema, func(c *openai.Config) {
					c.BaseURL = "http://" + closedAddr(t) + "/v1"
				})
			} else {
				j = newIntegrationJudge(t, srv, openai.StructuredOutputsJSONSchema, nil)
			}
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			res := newScorer(t, f.scorer, j, scoring.Options{}).Score(ctx, f.c)

			assert.Equal(t, tt.wantLabel, res.Label)
			if tt.wantErr != "" {
				var e *scoring.Error
				require.ErrorAs(t, res.Err, &e)
				assert.Equal(t, tt.wantErr, e.Type, "error: %v", res.Err)
				assert.Equal(t, scoring.StepPreprocess, e.Step)
				assert.NotContains(t, res.Err.Error(), "sk-integration-secret")
			} else {
				require.NoError(t, res.Err)
				assert.Equal(t, 1.0, res.Score)
				assert.Equal(t, "Both opinions are biased.", res.Reason)
			}
			assert.Len(t, srv.Calls(), tt.wantHTTP)
			assert.Equal(t, tt.wantLLM, res.Usage.LLMCalls)
			assert.Equal(t, tt.wantRetries, res.Usage.Retries)
			assert.Equal(t, tt.wantNotSent, res.Usage.NotSent)
			assert.Equal(t, tt.wantReplies*replyPromptTokens, res.Usage.PromptTokens)
			assert.Equal(t, tt.wantReplies*replyCompletionTokens, res.Usage.CompletionTokens)
		})
	}
}

// closedAddr returns a local address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// TestIntegrationCanceled checks that cancelling the caller's context
// while the judge is hung ends the evaluation as canceled.
func TestIntegrationCanceled(t *testing.T) {
	f := fixtureFor(t, scoring.Hallucination)
	srv := scoringtest.New(t)
	srv.Script(f.preprocess, ok(f.preprocessReply()).WithDelay(time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan scoring.Result, 1)
	go func() {
		done <- newScorer(t, f.scorer, newIntegrationJudge(t, srv, "", nil), scoring.Options{}).Score(ctx, f.c)
	}()
	require.Eventually(t, func() bool { return len(srv.Calls()) == 1 }, 10*time.Second, time.Millisecond)
	cancel()
	res := <-done
	var e *scoring.Error
	require.ErrorAs(t, res.Err, &e)
	assert.Equal(t, scoring.ErrorCanceled, e.Type)
	assert.True(t, errors.Is(res.Err, context.Canceled))
}
