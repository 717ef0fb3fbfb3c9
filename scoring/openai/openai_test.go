package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

const testKey = "sk-test-SECRET-0123456789"

var opinionsSchema = &scoring.Schema{Name: "bias_opinions", Schema: json.RawMessage(`{
  "type": "object",
  "properties": {"opinions": {"type": "array", "items": {"type": "string"}}},
  "required": ["opinions"],
  "additionalProperties": false
}`)}

func opinionsRequest() scoring.Request {
	return scoring.Request{
		Step:   "preprocess",
		Schema: opinionsSchema,
		Messages: []scoring.Message{
			{Role: "system", Content: "You list opinions."},
			{Role: "user", Content: "<<<OUTPUT\n\"Cats are better than dogs.\"\nOUTPUT>>>"},
		},
	}
}

// newTestJudge returns a judge on srv with a fake sleeper and jitter 1.
func newTestJudge(t *testing.T, baseURL string, mutate func(*Config)) (*Judge, *fakeSleeper) {
	t.Helper()
	fs := &fakeSleeper{}
	cfg := Config{BaseURL: baseURL, APIKey: testKey, Model: "judge-model"}
	cfg.Retry.sleep = fs.sleep
	cfg.Retry.jitter = func() float64 { return 1 }
	if mutate != nil {
		mutate(&cfg)
	}
	j, err := NewJudge(cfg)
	require.NoError(t, err)
	return j, fs
}

func requireErrorType(t *testing.T, err error, want scoring.ErrorType) *scoring.Error {
	t.Helper()
	var e *scoring.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, want, e.Type, "error: %v", err)
	return e
}

func topLevelProperties(t *testing.T, schema json.RawMessage) []string {
	t.Helper()
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(schema, &s))
	var names []string
	for k := range s.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func TestStructuredOutputModesOnTheWire(t *testing.T) {
	tests := []struct {
		mode       StructuredOutputs
		wantFormat string // "" = no response_format
		spelledOut bool
	}{
		{StructuredOutputsJSONSchema, "json_schema", false},
		{StructuredOutputsJSONObject, "json_object", true},
		{StructuredOutputsOff, "", true},
		{StructuredOutputsAuto, "json_schema", false},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			srv := scoringtest.New(t)
			j, _ := newTestJudge(t, srv.URL, func(c *Config) { c.StructuredOutputs = tt.mode })
			resp, err := j.Complete(context.Background(), opinionsRequest())
			require.NoError(t, err)
			assert.JSONEq(t, `{"opinions":["Cats are better than dogs."]}`, resp.Content, "default responder answers the step")

			calls := srv.Calls()
			require.Len(t, calls, 1)
			c := calls[0]
			assert.Equal(t, "bias_opinions", c.Step, "the server finds the step in every mode")
			rf := c.Request.ResponseFormat
			if tt.wantFormat == "" {
				assert.Nil(t, rf)
			} else {
				require.NotNil(t, rf)
				assert.Equal(t, tt.wantFormat, rf.Type)
			}
			if tt.wantFormat == "json_schema" {
				require.NotNil(t, rf.JSONSchema)
				assert.Equal(t, "bias_opinions", rf.JSONSchema.Name)
				assert.True(t, rf.JSONSchema.Strict)
				assert.Equal(t, []string{"opinions"}, topLevelProperties(t, rf.JSONSchema.Schema))
			}
			sys := c.Request.Messages[0].Content
			assert.Equal(t, tt.spelledOut, strings.Contains(sys, "(name: bias_opinions)"), "schema spelled out in the system message")
			if tt.spelledOut {
				assert.Contains(t, sys, `"opinions":{"type":"array"`)
				assert.Len(t, c.Request.Messages, 2, "appended to the system message, not added")
			}
		})
	}
}

func TestSchemaInstructionAddsSystemMessageWhenNone(t *testing.T) {
	srv := scoringtest.New(t)
	j, _ := newTestJudge(t, srv.URL, func(c *Config) { c.StructuredOutputs = StructuredOutputsOff })
	req := opinionsRequest()
	req.Messages = req.Messages[1:]
	_, err := j.Complete(context.Background(), req)
	require.NoError(t, err)
	msgs := srv.Calls()[0].Request.Messages
	require.Len(t, msgs, 2)
	assert.Equal(t, "system", msgs[1].Role)
	assert.Contains(t, msgs[1].Content, "(name: bias_opinions)")
	assert.Equal(t, "user", req.Messages[0].Role, "the caller's messages are untouched")
}

// refusing answers 400 to the response_format types in refuse.
func refusing(refuse ...string) func(scoringtest.Call) scoringtest.Reply {
	return func(c scoringtest.Call) scoringtest.Reply {
		if rf := c.Request.ResponseFormat; rf != nil {
			for _, r := range refuse {
				if rf.Type == r {
					return scoringtest.Status(400, `{"error":{"message":"response_format `+r+` is not supported by this model","type":"invalid_request_error"}}`)
				}
			}
		}
		return scoringtest.Reply{}
	}
}

func formats(calls []scoringtest.Call) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = "off"
		if c.Request.ResponseFormat != nil {
			out[i] = c.Request.ResponseFormat.Type
		}
	}
	return out
}

func TestAutoFallbackIsRememberedPerEndpoint(t *testing.T) {
	tests := []struct {
		name       string
		refuse     []string
		wantFirst  []string
		wantSecond []string
		wantMode   StructuredOutputs
	}{
		{"json_schema refused", []string{"json_schema"}, []string{"json_schema", "json_object"}, []string{"json_object"}, StructuredOutputsJSONObject},
		{"both refused", []string{"json_schema", "json_object"}, []string{"json_schema", "json_object", "off"}, []string{"off"}, StructuredOutputsOff},
		{"nothing refused", nil, []string{"json_schema"}, []string{"json_schema"}, StructuredOutputsJSONSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := scoringtest.New(t)
			srv.Handle(refusing(tt.refuse...))
			j, fs := newTestJudge(t, srv.URL, nil)

			resp, err := j.Complete(context.Background(), opinionsRequest())
			require.NoError(t, err)
			assert.Equal(t, 0, resp.Retries, "a fallback is not a retry")
			assert.Equal(t, tt.wantFirst, formats(srv.Calls()))

			_, err = j.Complete(context.Background(), opinionsRequest())
			require.NoError(t, err)
			assert.Equal(t, tt.wantSecond, formats(srv.Calls()[len(tt.wantFirst):]), "second request goes straight to the remembered mode")
			assert.Equal(t, tt.wantMode, j.StructuredOutputs())
			assert.Empty(t, fs.recorded(), "fallbacks do not wait")
		})
	}
}

func TestFixedModeDoesNotFallBack(t *testing.T) {
	srv := scoringtest.New(t)
	srv.Handle(refusing("json_schema"))
	j, _ := newTestJudge(t, srv.URL, func(c *Config) { c.StructuredOutputs = StructuredOutputsJSONSchema })
	_, err := j.Complete(context.Background(), opinionsRequest())
	requireErrorType(t, err, scoring.ErrorJudgeBadRequest)
	assert.Len(t, srv.Calls(), 1)
}

func TestRetries(t *testing.T) {
	httpDate := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	tests := []struct {
		name      string
		faults    []scoringtest.Reply
		wantWaits []time.Duration // with jitter 1
		checkWait func(t *testing.T, waits []time.Duration)
	}{
		{"429 without Retry-After", []scoringtest.Reply{scoringtest.Status(429, "")}, []time.Duration{500 * time.Millisecond}, nil},
		{"429 with Retry-After seconds", []scoringtest.Reply{scoringtest.Status(429, "").WithRetryAfter("7")}, []time.Duration{7 * time.Second}, nil},
		{"429 with Retry-After date, capped", []scoringtest.Reply{scoringtest.Status(429, "").WithRetryAfter(httpDate)}, []time.Duration{DefaultMaxRetryAfter}, nil},
		{"500 twice", []scoringtest.Reply{scoringtest.Status(500, ""), scoringtest.Status(500, "boom")}, []time.Duration{500 * time.Millisecond, time.Second}, nil},
		{"502", []scoringtest.Reply{scoringtest.Status(502, "")}, []time.Duration{500 * time.Millisecond}, nil},
		{"503 with Retry-After", []scoringtest.Reply{scoringtest.Status(503, "").WithRetryAfter("2")}, []time.Duration{2 * time.Second}, nil},
		{"connection dropped", []scoringtest.Reply{scoringtest.Hangup()}, []time.Duration{500 * time.Millisecond}, nil},
		{"truncated body", []scoringtest.Reply{scoringtest.Truncated(`{"opinions":[]}`)}, []time.Duration{500 * time.Millisecond}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := scoringtest.New(t)
			srv.Script("bias_opinions", tt.faults...)
			srv.Script("bias_opinions", scoringtest.JSON(`{"opinions":["ok"]}`))
			var retried []scoring.ErrorType
			j, fs := newTestJudge(t, srv.URL, func(c *Config) {
				c.OnRetry = func(_ int, err error, _ time.Duration) {
					var e *scoring.Error
					if errors.As(err, &e) {
						retried = append(retried, e.Type)
					}
				}
			})
			resp, err := j.Complete(context.Background(), opinionsRequest())
			require.NoError(t, err)
			assert.JSONEq(t, `{"opinions":["ok"]}`, resp.Content)
			assert.Equal(t, len(tt.faults), resp.Retries)
			assert.Len(t, retried, len(tt.faults))
			assert.Len(t, srv.Calls(), len(tt.faults)+1)
			assert.Equal(t, tt.wantWaits, fs.recorded())
		})
	}
}

func TestRetriesExhausted(t *testing.T) {
	tests := []struct {
		name  string
		fault scoringtest.Reply
		want  scoring.ErrorType
	}{
		{"429", scoringtest.Status(429, ""), scoring.ErrorJudgeRateLimited},
		{"500", scoringtest.Status(500, ""), scoring.ErrorJudgeUnavailable},
		{"503", scoringtest.Status(503, ""), scoring.ErrorJudgeUnavailable},
		{"hangup", scoringtest.Hangup(), scoring.ErrorJudgeUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := scoringtest.New(t)
			srv.Script(scoringtest.AnyStep, tt.fault, tt.fault, tt.fault, tt.fault)
			j, fs := newTestJudge(t, srv.URL, nil)
			resp, err := j.Complete(context.Background(), opinionsRequest())
			e := requireErrorType(t, err, tt.want)
			assert.Equal(t, "preprocess", e.Step)
			assert.Equal(t, 2, resp.Retries)
			assert.Len(t, srv.Calls(), DefaultMaxAttempts)
			assert.Len(t, fs.recorded(), DefaultMaxAttempts-1)
		})
	}
}

func TestNoRetryOnClientErrors(t *testing.T) {
	tests := []struct {
		status int
		want   scoring.ErrorType
	}{
		{400, scoring.ErrorJudgeBadRequest},
		{401, scoring.ErrorJudgeAuth},
		{403, scoring.ErrorJudgeAuth},
		{404, scoring.ErrorJudgeBadRequest},
		{422, scoring.ErrorJudgeBadRequest},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			srv := scoringtest.New(t)
			srv.Script(scoringtest.AnyStep, scoringtest.Status(tt.status, `{"error":{"message":"nope","type":"x"}}`))
			j, fs := newTestJudge(t, srv.URL, func(c *Config) { c.StructuredOutputs = StructuredOutputsOff })
			_, err := j.Complete(context.Background(), opinionsRequest())
			e := requireErrorType(t, err, tt.want)
			assert.Contains(t, e.Error(), "nope", "the judge's message is kept")
			assert.Len(t, srv.Calls(), 1)
			assert.Empty(t, fs.recorded())
		})
	}
}

func TestContextDeadlineBoundsRetries(t *testing.T) {
	srv := scoringtest.New(t)
	srv.Script(scoringtest.AnyStep, scoringtest.Status(429, "").WithRetryAfter("20"), scoringtest.JSON(`{"opinions":[]}`))
	j, fs := newTestJudge(t, srv.URL, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := j.Complete(ctx, opinionsRequest())
	requireErrorType(t, err, scoring.ErrorJudgeRateLimited)
	assert.Empty(t, fs.recorded(), "a wait past the deadline is not started")
	assert.Len(t, srv.Calls(), 1)
}

func TestCallerDeadlineDuringCallIsTimeout(t *testing.T) {
	srv := scoringtest.New(t)
	srv.Script(scoringtest.AnyStep, scoringtest.JSON(`{"opinions":[]}`).WithDelay(time.Minute))
	j, fs := newTestJudge(t, srv.URL, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := j.Complete(ctx, opinionsRequest())
	e := requireErrorType(t, err, scoring.ErrorJudgeTimeout)
	assert.ErrorIs(t, e, context.DeadlineExceeded)
	assert.Empty(t, fs.recorded())
}

func TestCallerCancelIsCanceled(t *testing.T) {
	srv := scoringtest.New(t)
	j, _ := newTestJudge(t, srv.URL, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := j.Complete(ctx, opinionsRequest())
	requireErrorType(t, err, scoring.ErrorCanceled)
}

func TestAttemptTimeoutIsRetried(t *testing.T) {
	srv := scoringtest.New(t)
	srv.Script(scoringtest.AnyStep, scoringtest.JSON(`{"opinions":["slow"]}`).WithDelay(time.Minute), scoringtest.JSON(`{"opinions":["fast"]}`))
	// Long enough for the fast reply on a loaded machine, far shorter than the slow one.
	j, fs := newTestJudge(t, srv.URL, func(c *Config) { c.Retry.AttemptTimeout = 500 * time.Millisecond })
	resp, err := j.Complete(context.Background(), opinionsRequest())
	require.NoError(t, err)
	assert.JSONEq(t, `{"opinions":["fast"]}`, resp.Content)
	assert.Equal(t, 1, resp.Retries)
	assert.Len(t, fs.recorded(), 1)
}

func TestHTTPClientTimeoutIsRetriedThenTimeout(t *testing.T) {
	srv := scoringtest.New(t)
	slow := scoringtest.JSON(`{}`).WithDelay(time.Minute)
	srv.Script(scoringtest.AnyStep, slow, slow, slow)
	j, _ := newTestJudge(t, srv.URL, func(c *Config) { c.HTTPClient = &http.Client{Timeout: 10 * time.Millisecond} })
	resp, err := j.Complete(context.Background(), opinionsRequest())
	requireErrorType(t, err, scoring.ErrorJudgeTimeout)
	assert.Equal(t, 2, resp.Retries)
}

func TestConnectionRefused(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	url := closed.URL + "/v1"
	closed.Close()
	j, fs := newTestJudge(t, url, nil)
	resp, err := j.Complete(context.Background(), opinionsRequest())
	e := requireErrorType(t, err, scoring.ErrorJudgeUnavailable)
	assert.True(t, e.NotSent, "no connection opened: the request never left")
	assert.Equal(t, 2, resp.Retries)
	assert.Len(t, fs.recorded(), 2)
}

// refuseAfter is a transport that passes the first n requests on and then
// fails to dial, as an endpoint that goes away between attempts does.
type refuseAfter struct {
	n    int
	next http.RoundTripper
}

func (r *refuseAfter) RoundTrip(req *http.Request) (*http.Response, error) {
	if r.n > 0 {
		r.n--
		return r.next.RoundTrip(req)
	}
	return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
}

// TestNotSentOnlyWhenNoAttemptReachedTheJudge: a call is NotSent (costs
// nothing, counted as refused) only when no attempt reached the endpoint.
func TestNotSentOnlyWhenNoAttemptReachedTheJudge(t *testing.T) {
	tests := []struct {
		name        string
		reached     int // attempts passed to the server before dials fail
		fault       scoringtest.Reply
		want        scoring.ErrorType
		wantNotSent bool
	}{
		{name: "refused every time", reached: 0, want: scoring.ErrorJudgeUnavailable, wantNotSent: true},
		{name: "503 then refused", reached: 1, fault: scoringtest.Status(503, ""), want: scoring.ErrorJudgeUnavailable},
		{name: "hung up every time", reached: DefaultMaxAttempts, fault: scoringtest.Hangup(), want: scoring.ErrorJudgeUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := scoringtest.New(t)
			srv.Script(scoringtest.AnyStep, tt.fault, tt.fault, tt.fault)
			j, _ := newTestJudge(t, srv.URL, func(c *Config) {
				c.HTTPClient = &http.Client{Transport: &refuseAfter{n: tt.reached, next: srv.Client().Transport}}
			})
			_, err := j.Complete(context.Background(), opinionsRequest())
			e := requireErrorType(t, err, tt.want)
			assert.Equal(t, tt.wantNotSent, e.NotSent)
			assert.Len(t, srv.Calls(), tt.reached)
		})
	}
}

func TestAPIKeyNeverInErrors(t *testing.T) {
	tests := []struct {
		name  string
		reply scoringtest.Reply
		want  scoring.ErrorType
		// shown is the part of the body the error shows, scrubbed; a body
		// that is not an OpenAI error is never shown.
		shown string
	}{
		{"401 echoing the key", scoringtest.Status(401, `{"error":{"message":"Incorrect API key provided: `+testKey+`","type":"invalid_request_error"}}`), scoring.ErrorJudgeAuth, "Incorrect API key provided: [REDACTED]"},
		{"500 plain body with the key", scoringtest.Status(500, "upstream said Bearer "+testKey), scoring.ErrorJudgeUnavailable, "HTTP 500: Internal Server Error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := scoringtest.New(t)
			srv.Script(scoringtest.AnyStep, tt.reply, tt.reply, tt.reply)
			j, _ := newTestJudge(t, srv.URL, nil)
			_, err := j.Complete(context.Background(), opinionsRequest())
			requireErrorType(t, err, tt.want)
			assert.NotContains(t, err.Error(), testKey)
			assert.NotContains(t, errors.Unwrap(err).Error(), testKey)
			assert.Contains(t, err.Error(), tt.shown)
			assert.NotContains(t, err.Error(), "upstream said")
			assert.Equal(t, "Bearer "+testKey, srv.Calls()[0].Header.Get("Authorization"), "the key is still sent")
		})
	}
}

func TestRequestParametersOnTheWire(t *testing.T) {
	srv := scoringtest.New(t)
	seed := 42
	j, _ := newTestJudge(t, srv.URL, func(c *Config) {
		c.Headers = map[string]string{"X-Tenant": "team-a", "HTTP-Referer": "llm_eval"}
		c.MaxTokens = 800
		c.Seed = &seed
	})
	_, err := j.Complete(context.Background(), opinionsRequest())
	require.NoError(t, err)
	c := srv.Calls()[0]
	assert.Equal(t, "/v1/chat/completions", c.Path)
	assert.Equal(t, "team-a", c.Header.Get("X-Tenant"))
	assert.Equal(t, "llm_eval", c.Header.Get("HTTP-Referer"))
	assert.Equal(t, "judge-model", c.Request.Model)
	require.NotNil(t, c.Request.Temperature, "temperature 0 is sent, not omitted")
	assert.Zero(t, *c.Request.Temperature, "an exact 0 on the wire, not go-openai's stand-in")
	assert.Contains(t, string(c.Body), `"temperature":0,`)
	assert.NotContains(t, string(c.Body), `1e-45`)
	require.NotNil(t, c.Request.MaxTokens)
	assert.Equal(t, 800, *c.Request.MaxTokens)
	require.NotNil(t, c.Request.Seed)
	assert.Equal(t, 42, *c.Request.Seed)
}

func TestReasoningModelParameters(t *testing.T) {
	srv := scoringtest.New(t)
	j, _ := newTestJudge(t, srv.URL, func(c *Config) { c.Model = "o3-mini"; c.MaxTokens = 500 })
	_, err := j.Complete(context.Background(), opinionsRequest())
	require.NoError(t, err)
	r := srv.Calls()[0].Request
	assert.Nil(t, r.Temperature)
	assert.Nil(t, r.MaxTokens)
	require.NotNil(t, r.MaxCompletionTokens)
	assert.Equal(t, 500, *r.MaxCompletionTokens)
}

func TestAzure(t *testing.T) {
	srv := scoringtest.New(t)
	base := strings.TrimSuffix(srv.URL, "/v1")
	j, _ := newTestJudge(t, base, func(c *Config) { c.Azure = true; c.Model = "gpt-4o.judge" })
	_, err := j.Complete(context.Background(), opinionsRequest())
	require.NoError(t, err)
	c := srv.Calls()[0]
	assert.Equal(t, "/openai/deployments/gpt-4o.judge/chat/completions", c.Path)
	assert.Equal(t, "api-version="+DefaultAzureAPIVersion, c.RawQuery)
	assert.Equal(t, testKey, c.Header.Get("api-key"))
	assert.Empty(t, c.Header.Get("Authorization"))
}

func TestUnusableReplies(t *testing.T) {
	tests := []struct {
		name  string
		reply scoringtest.Reply
		want  scoring.ErrorType
		calls int
	}{
		{"oversized", scoringtest.Oversized(`{"opinions":[]}`, 64<<10), scoring.ErrorJudgeParse, 1},
		{"garbage", scoringtest.Garbage(), scoring.ErrorJudgeParse, 1},
		{"empty choices", scoringtest.EmptyChoices(), scoring.ErrorJudgeUnavailable, 1},
		{"truncated every time", scoringtest.Truncated(`{"opinions":["a"]}`), scoring.ErrorJudgeUnavailable, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := scoringtest.New(t)
			srv.Script(scoringtest.AnyStep, tt.reply, tt.reply, tt.reply)
			j, _ := newTestJudge(t, srv.URL, func(c *Config) { c.MaxResponseBytes = 16 << 10 })
			_, err := j.Complete(context.Background(), opinionsRequest())
			requireErrorType(t, err, tt.want)
			assert.Len(t, srv.Calls(), tt.calls)
		})
	}
}

func TestReplyUnderLimitAndTrickledIsRead(t *testing.T) {
	srv := scoringtest.New(t)
	srv.Script(scoringtest.AnyStep, scoringtest.Oversized(`{"opinions":["x"]}`, 8<<10).WithTrickle(1024, time.Millisecond))
	j, _ := newTestJudge(t, srv.URL, func(c *Config) { c.MaxResponseBytes = 16 << 10 })
	resp, err := j.Complete(context.Background(), opinionsRequest())
	require.NoError(t, err)
	assert.JSONEq(t, `{"opinions":["x"]}`, strings.TrimSpace(resp.Content))
}

func TestLengthFinishAndUsageReturned(t *testing.T) {
	srv := scoringtest.New(t)
	srv.Script("bias_opinions", scoringtest.JSON(`{"opinions":["cut`).WithFinishReason("length").WithUsage(120, 30))
	j, _ := newTestJudge(t, srv.URL, nil)
	resp, err := j.Complete(context.Background(), opinionsRequest())
	require.NoError(t, err, "a reply cut at max tokens is returned, not an error")
	assert.Equal(t, scoring.Response{Content: `{"opinions":["cut`, FinishReason: "length", PromptTokens: 120, CompletionTokens: 30, Model: "judge-model"}, resp)
}

func TestNewJudgeValidates(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no endpoint", Config{Model: "m"}, "endpoint"},
		{"bad scheme", Config{BaseURL: "ftp://x", Model: "m"}, "endpoint"},
		{"no model", Config{BaseURL: "http://x/v1"}, "model"},
		{"bad mode", Config{BaseURL: "http://x/v1", Model: "m", StructuredOutputs: "xml"}, "structured_outputs"},
		{"negative max tokens", Config{BaseURL: "http://x/v1", Model: "m", MaxTokens: -1}, "max tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewJudge(tt.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestFullChatCompletionsURLAccepted(t *testing.T) {
	srv := scoringtest.New(t)
	j, _ := newTestJudge(t, srv.URL+"/chat/completions/", nil)
	assert.Equal(t, srv.URL, j.Endpoint())
	_, err := j.Complete(context.Background(), opinionsRequest())
	require.NoError(t, err)
	assert.Equal(t, "/v1/chat/completions", srv.Calls()[0].Path)
}

func TestEmptyRequestRejected(t *testing.T) {
	srv := scoringtest.New(t)
	j, _ := newTestJudge(t, srv.URL, nil)
	_, err := j.Complete(context.Background(), scoring.Request{Step: "analyze"})
	requireErrorType(t, err, scoring.ErrorJudgeBadRequest)
	assert.Empty(t, srv.Calls())
}

func TestAutoFallbackUnderConcurrency(t *testing.T) {
	srv := scoringtest.New(t)
	srv.Handle(refusing("json_schema"))
	j, _ := newTestJudge(t, srv.URL, nil)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			_, err := j.Complete(context.Background(), opinionsRequest())
			errs <- err
		}()
	}
	for range 8 {
		require.NoError(t, <-errs)
	}
	assert.Equal(t, StructuredOutputsJSONObject, j.StructuredOutputs(), "one refusal level, never skipped to off")
	objects := 0
	for _, f := range formats(srv.Calls()) {
		assert.NotEqual(t, "off", f)
		if f == "json_object" {
			objects++
		}
	}
	assert.Equal(t, 8, objects, "every call ends on json_object")
}

func TestOmitTemperature(t *testing.T) {
	srv := scoringtest.New(t)
	j, _ := newTestJudge(t, srv.URL, func(c *Config) { c.OmitTemperature = true; c.MaxTokens = 300 })
	_, err := j.Complete(context.Background(), opinionsRequest())
	require.NoError(t, err)
	r := srv.Calls()[0].Request
	assert.Nil(t, r.Temperature)
	assert.Nil(t, r.Seed, "no seed unless configured")
	require.NotNil(t, r.MaxTokens)
	assert.Equal(t, 300, *r.MaxTokens)
}

// TestEchoingJudgeLeaksNoSecretOrPrompt: an endpoint that echoes the whole
// request (headers, URL, body) in its error reply must not get any
// configured secret or the evaluated text into the error.
func TestEchoingJudgeLeaksNoSecretOrPrompt(t *testing.T) {
	const (
		headerSecret = "AZ-HEADER-SECRET-42"
		urlPassword  = "URL-PASSWORD-77"
		queryKey     = "QUERY-KEY-99"
		extraSecret  = "CLIENT-HEADER-SECRET-5"
	)
	prompt := "Cats are better than dogs." // in opinionsRequest
	plainEcho := func(status int) func(scoringtest.Call) scoringtest.Reply {
		return func(c scoringtest.Call) scoringtest.Reply {
			return scoringtest.Status(status, fmt.Sprintf("rejected %s?%s %v %s", c.Path, c.RawQuery, c.Header, c.Body))
		}
	}
	// messageEcho quotes the request in error.message itself, as vLLM's
	// and LiteLLM's validation errors do, once as sent and once decoded.
	messageEcho := func(status int) func(scoringtest.Call) scoringtest.Reply {
		return func(c scoringtest.Call) scoringtest.Reply {
			msg, _ := json.Marshal(fmt.Sprintf("invalid request %s: %s %v", c.Path+"?"+c.RawQuery, c.Body, c.Request.Messages))
			return scoringtest.Status(status, `{"error":{"message":`+string(msg)+`,"type":"invalid_request_error"}}`)
		}
	}
	for _, status := range []int{400, 401, 403, 404, 429, 500, 503} {
		for name, echo := range map[string]func(int) func(scoringtest.Call) scoringtest.Reply{"json": scoringtest.Echo, "plain": plainEcho, "message": messageEcho} {
			t.Run(name+" "+http.StatusText(status), func(t *testing.T) {
				srv := scoringtest.New(t)
				srv.Handle(echo(status))
				base := strings.Replace(srv.URL, "http://", "http://judge:"+urlPassword+"@", 1) + "?api-key=" + queryKey
				j, _ := newTestJudge(t, base, func(c *Config) {
					c.Headers = map[string]string{"api-key": headerSecret}
					c.Secrets = []string{extraSecret}
					c.Retry.MaxAttempts = 1
					if name == "message" {
						// The quoted body names response_format, which auto
						// mode takes for a refusal of the mode and falls back.
						c.StructuredOutputs = StructuredOutputsJSONSchema
					}
				})
				_, err := j.Complete(context.Background(), opinionsRequest())
				require.Error(t, err)
				calls := srv.Calls()
				require.Len(t, calls, 1)
				require.Contains(t, string(calls[0].Body), prompt, "the echo carries the prompt")
				require.Equal(t, headerSecret, calls[0].Header.Get("api-key"), "the header is still sent")
				require.Equal(t, "api-key="+queryKey, calls[0].RawQuery, "the query is still sent")
				var e *scoring.Error
				require.ErrorAs(t, err, &e)
				assert.Equal(t, status, e.Status)
				for _, leak := range []string{testKey, headerSecret, urlPassword, queryKey, prompt, "Cats", "You list opinions", calls[0].Header.Get("Authorization")} {
					assert.NotContains(t, err.Error(), leak)
				}
				if name == "message" {
					assert.Contains(t, err.Error(), "invalid request", "the endpoint's own words stay")
				}
			})
		}
	}
}

func TestErrorCarriesStatusAndRetryAfter(t *testing.T) {
	tests := []struct {
		name       string
		reply      scoringtest.Reply
		status     int
		retryAfter time.Duration
	}{
		{"429 with Retry-After", scoringtest.Status(429, "").WithRetryAfter("7"), 429, 7 * time.Second},
		{"503 with Retry-After", scoringtest.Status(503, "").WithRetryAfter("2"), 503, 2 * time.Second},
		{"401 without", scoringtest.Status(401, ""), 401, 0},
		{"hang-up has no status", scoringtest.Hangup(), 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := scoringtest.New(t)
			srv.Script(scoringtest.AnyStep, tt.reply)
			j, _ := newTestJudge(t, srv.URL, func(c *Config) { c.Retry.MaxAttempts = 1 })
			_, err := j.Complete(context.Background(), opinionsRequest())
			var e *scoring.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tt.status, e.Status)
			assert.Equal(t, tt.retryAfter, e.RetryAfter)
		})
	}
}

// TestAutoStepsDownWhenTheFormatIsIgnored: an endpoint that takes
// response_format without an error but answers with something else than a
// JSON object makes auto step down one mode per such reply; a refusal, a
// reply cut at the token limit and a fixed mode change nothing.
func TestAutoStepsDownWhenTheFormatIsIgnored(t *testing.T) {
	prose := scoringtest.Content("Here are the opinions:\n```json\n{\"opinions\":[]}\n```")
	tests := []struct {
		name  string
		mode  StructuredOutputs
		reply scoringtest.Reply
		want  StructuredOutputs
	}{
		{"prose around JSON", StructuredOutputsAuto, prose, StructuredOutputsJSONObject},
		{"prose only", StructuredOutputsAuto, scoringtest.Content("The text holds no opinion."), StructuredOutputsJSONObject},
		{"a JSON object", StructuredOutputsAuto, scoringtest.JSON(`{"opinions":[]}`), StructuredOutputsJSONSchema},
		{"a refusal", StructuredOutputsAuto, scoringtest.Status(200, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`), StructuredOutputsJSONSchema},
		{"cut at the token limit", StructuredOutputsAuto, scoringtest.Content(`{"opinions":["cut`).WithFinishReason("length"), StructuredOutputsJSONSchema},
		{"fixed json_schema", StructuredOutputsJSONSchema, prose, StructuredOutputsJSONSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := scoringtest.New(t)
			srv.Script(scoringtest.AnyStep, tt.reply)
			j, _ := newTestJudge(t, srv.URL, func(c *Config) { c.StructuredOutputs = tt.mode })
			resp, err := j.Complete(context.Background(), opinionsRequest())
			require.NoError(t, err, "the reply itself is returned")
			assert.NotEmpty(t, resp.Content)
			assert.Equal(t, tt.want, j.StructuredOutputs())
			assert.Len(t, srv.Calls(), 1, "no call is repeated")
		})
	}
	t.Run("down to off", func(t *testing.T) {
		srv := scoringtest.New(t)
		srv.Script(scoringtest.AnyStep, prose, prose, prose)
		j, _ := newTestJudge(t, srv.URL, nil)
		for range 3 {
			_, err := j.Complete(context.Background(), opinionsRequest())
			require.NoError(t, err)
		}
		assert.Equal(t, []string{"json_schema", "json_object", "off"}, formats(srv.Calls()))
		assert.Equal(t, StructuredOutputsOff, j.StructuredOutputs())
	})
}
