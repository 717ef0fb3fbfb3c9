package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	goopenai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// completionOfSize is a chat completion of exactly n bytes (n >= 100),
// padded with spaces inside its content.
func completionOfSize(t *testing.T, n int) []byte {
	t.Helper()
	const head, tail = `{"choices":[{"message":{"content":"{}`, `"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`
	require.GreaterOrEqual(t, n, len(head)+len(tail))
	b := []byte(head + strings.Repeat(" ", n-len(head)-len(tail)) + tail)
	require.True(t, json.Valid(b))
	return b
}

// rawServer serves body for every request, with a Content-Length header or
// chunked, and counts the connections it accepted.
func rawServer(t *testing.T, body []byte, chunked bool) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if !chunked {
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			_, _ = w.Write(body)
			return
		}
		half := len(body) / 2
		_, _ = w.Write(body[:half])
		w.(http.Flusher).Flush()
		_, _ = w.Write(body[half:])
		w.(http.Flusher).Flush()
		// The body's end comes a little after its last byte, as from a
		// proxy: a reader that stops at the end of the JSON value has
		// not seen it yet.
		time.Sleep(20 * time.Millisecond)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

// TestReplyBodyCap: a body of exactly MaxResponseBytes is read; one byte
// more is a judge_parse_error, not retried, whether its length was
// announced or not.
func TestReplyBodyCap(t *testing.T) {
	const limit = 4 << 10
	for _, chunked := range []bool{false, true} {
		for _, size := range []int{limit, limit + 1} {
			t.Run(fmt.Sprintf("chunked=%v size=%d", chunked, size), func(t *testing.T) {
				srv, _ := rawServer(t, completionOfSize(t, size), chunked)
				var calls atomic.Int32
				j, _ := newTestJudge(t, srv.URL+"/v1", func(c *Config) {
					c.MaxResponseBytes = limit
					c.HTTPClient = &http.Client{Transport: countingTransport{&calls, http.DefaultTransport}}
				})
				resp, err := j.Complete(context.Background(), opinionsRequest())
				if size <= limit {
					require.NoError(t, err)
					assert.Equal(t, "{}", strings.TrimSpace(resp.Content))
					return
				}
				e := requireErrorType(t, err, scoring.ErrorJudgeParse)
				assert.Contains(t, e.Error(), fmt.Sprintf("exceeds %d bytes", limit))
				assert.Equal(t, http.StatusOK, e.Status)
				assert.Equal(t, int32(1), calls.Load(), "not retried")
			})
		}
	}
}

type countingTransport struct {
	n    *atomic.Int32
	next http.RoundTripper
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// TestConnectionReused: every reply is read to its end, so consecutive
// calls share one connection, with and without Content-Length.
func TestConnectionReused(t *testing.T) {
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			body := append(completionOfSize(t, 2<<10), '\n') // a trailing newline, as json.Encoder writes
			srv, conns := rawServer(t, body, chunked)
			j, _ := newTestJudge(t, srv.URL+"/v1", func(c *Config) { c.HTTPClient = &http.Client{Transport: &http.Transport{}} })
			for range 5 {
				_, err := j.Complete(context.Background(), opinionsRequest())
				require.NoError(t, err)
			}
			assert.Equal(t, int32(1), conns.Load())
		})
	}
}

func TestHeadersQueryAndAzureKey(t *testing.T) {
	tests := []struct {
		name      string
		base      string // appended to the server's URL without /v1
		cfg       func(*Config)
		wantPath  string
		wantQuery string
		wantAuth  string
		wantKey   []string // api-key header values; nil: absent
	}{
		{name: "base URL query kept", base: "/v1?tenant=a%20b", wantPath: "/v1/chat/completions", wantQuery: "tenant=a%20b", wantAuth: "Bearer " + testKey},
		{name: "headers replace authorization", base: "/v1", cfg: func(c *Config) { c.Headers = map[string]string{"Authorization": "Basic other"} },
			wantPath: "/v1/chat/completions", wantAuth: "Basic other"},
		{name: "no key, no authorization", base: "/v1", cfg: func(c *Config) { c.APIKey = "" }, wantPath: "/v1/chat/completions"},
		{name: "azure with query", base: "?tenant=a", cfg: func(c *Config) { c.Azure = true; c.AzureAPIVersion = "2025-01-01-preview" },
			wantPath: "/openai/deployments/judge-model/chat/completions", wantQuery: "api-version=2025-01-01-preview&tenant=a", wantKey: []string{testKey}},
		{name: "azure without key", base: "", cfg: func(c *Config) { c.Azure = true; c.APIKey = "" },
			wantPath: "/openai/deployments/judge-model/chat/completions", wantQuery: "api-version=" + DefaultAzureAPIVersion},
		{name: "azure deployment escaped", base: "", cfg: func(c *Config) { c.Azure = true; c.Model = "my judge/v2" },
			wantPath: "/openai/deployments/my judge/v2/chat/completions", wantQuery: "api-version=" + DefaultAzureAPIVersion, wantKey: []string{testKey}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := scoringtest.New(t)
			j, _ := newTestJudge(t, strings.TrimSuffix(srv.URL, "/v1")+tt.base, tt.cfg)
			_, err := j.Complete(context.Background(), opinionsRequest())
			require.NoError(t, err)
			c := srv.Calls()[0]
			assert.Equal(t, tt.wantPath, c.Path)
			assert.Equal(t, tt.wantQuery, c.RawQuery)
			assert.Equal(t, tt.wantAuth, c.Header.Get("Authorization"))
			assert.Equal(t, tt.wantKey, c.Header.Values("Api-Key"))
		})
	}
}

// TestEscapedDeploymentOnTheWire: a deployment name is one path segment.
func TestEscapedDeploymentOnTheWire(t *testing.T) {
	var rawPath atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rawPath.Store(r.URL.EscapedPath())
		_, _ = w.Write(completionOfSize(t, 200))
	}))
	t.Cleanup(srv.Close)
	j, _ := newTestJudge(t, srv.URL, func(c *Config) { c.Azure = true; c.Model = "my judge/v2" })
	_, err := j.Complete(context.Background(), opinionsRequest())
	require.NoError(t, err)
	assert.Equal(t, "/openai/deployments/my%20judge%2Fv2/chat/completions", rawPath.Load())
}

// TestRefusedBeforeSending: what go-openai refuses to send is a bad
// request that cost nothing (NotSent) and reached no endpoint.
func TestRefusedBeforeSending(t *testing.T) {
	tests := []struct {
		name string
		cfg  func(*Config)
		req  func(*scoring.Request)
		want string
	}{
		{name: "completions-only model", cfg: func(c *Config) { c.Model = "text-davinci-003" }, want: "not supported with this method"},
		{name: "schema that is not JSON", req: func(r *scoring.Request) {
			r.Schema = &scoring.Schema{Name: "broken", Schema: json.RawMessage(`{"type":`)}
		},
			want: "not sent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := scoringtest.New(t)
			j, fs := newTestJudge(t, srv.URL, tt.cfg)
			req := opinionsRequest()
			if tt.req != nil {
				tt.req(&req)
			}
			resp, err := j.Complete(context.Background(), req)
			e := requireErrorType(t, err, scoring.ErrorJudgeBadRequest)
			assert.True(t, e.NotSent)
			assert.Contains(t, e.Error(), tt.want)
			assert.Empty(t, srv.Calls())
			assert.Zero(t, resp.Retries)
			assert.Empty(t, fs.recorded())
		})
	}
}

func TestWithoutEcho(t *testing.T) {
	msgs := []string{"You list opinions. Reply in JSON.", `<<<OUTPUT` + "\n" + `"Cats are better than dogs, everyone knows it."` + "\nOUTPUT>>>"}
	tests := []struct{ in, want string }{
		{"short", "short"},
		{"no shared run of sixteen bytes here at all", "no shared run of sixteen bytes here at all"},
		{`bad input: {'content': '"Cats are better than dogs, everyone knows it."'}`, `bad input: {'content': '[...]'}`},
		{`body: {"content":"\u003c\u003c\u003cOUTPUT\n\"Cats are better than dogs, everyone knows it.\"\nOUTPUT\u003e\u003e\u003e"}`,
			`body: {"content":"\u003c\u003c\u003cOUTPUT\n\[...]\"\nOUTPUT\u003e\u003e\u003e"}`},
		{"You list opinions. Reply in JSON. and then something else", "[...] and then something else"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, withoutEcho(tt.in, messagesOf(msgs...)), "withoutEcho(%q)", tt.in)
	}
}

func messagesOf(contents ...string) []goopenai.ChatCompletionMessage {
	out := make([]goopenai.ChatCompletionMessage, len(contents))
	for i, c := range contents {
		out[i] = goopenai.ChatCompletionMessage{Role: "user", Content: c}
	}
	return out
}

// TestNotSentWhenTheRequestWasNeverWritten: an attempt whose deadline or
// caller ends before net/http wrote the request (here: still dialing) did
// not reach the judge, so the call is NotSent (counted as refused, not as
// a judge call), however the dial ended.
func TestNotSentWhenTheRequestWasNeverWritten(t *testing.T) {
	srv := scoringtest.New(t)
	stuck := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	t.Cleanup(stuck.CloseIdleConnections)
	tests := []struct {
		name string
		cfg  func(*Config)
		ctx  func() (context.Context, context.CancelFunc)
		want scoring.ErrorType
	}{
		{name: "caller deadline", ctx: func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		}, want: scoring.ErrorJudgeTimeout},
		{name: "attempt timeout", cfg: func(c *Config) { c.Retry.AttemptTimeout = 20 * time.Millisecond },
			ctx: func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }, want: scoring.ErrorJudgeTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, _ := newTestJudge(t, srv.URL, func(c *Config) {
				c.HTTPClient = &http.Client{Transport: stuck}
				if tt.cfg != nil {
					tt.cfg(c)
				}
			})
			ctx, cancel := tt.ctx()
			defer cancel()
			_, err := j.Complete(ctx, opinionsRequest())
			e := requireErrorType(t, err, tt.want)
			assert.True(t, e.NotSent, "the request was never written")
			assert.Empty(t, srv.Calls())
		})
	}
}

// answeringTransport answers every request itself, as an in-process or
// recording RoundTripper does, without net/http's writer: its replies
// carry a status, but httptrace never reports a written request.
type answeringTransport struct {
	calls atomic.Int32
	body  func() io.ReadCloser
}

func (a *answeringTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	a.calls.Add(1)
	_, _ = io.Copy(io.Discard, r.Body)
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: a.body(), ContentLength: -1, Request: r}, nil
}

// brokenBody yields the start of a reply, then fails.
type brokenBody struct{ sent bool }

func (b *brokenBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, `{"choices":[{"message":{"content":"{}`), nil
	}
	return 0, errors.New("connection reset by peer")
}

func (*brokenBody) Close() error { return nil }

// TestReplyCutShortWasSent: a reply whose body breaks off is a retried
// judge_unavailable, and the call reached the judge (it answered with a
// status), whether or not the transport reports writing the request.
func TestReplyCutShortWasSent(t *testing.T) {
	rt := &answeringTransport{body: func() io.ReadCloser { return &brokenBody{} }}
	j, _ := newTestJudge(t, "http://judge.invalid/v1", func(c *Config) {
		c.HTTPClient = &http.Client{Transport: rt}
		c.Retry.MaxAttempts = 2
	})
	resp, err := j.Complete(context.Background(), opinionsRequest())
	e := requireErrorType(t, err, scoring.ErrorJudgeUnavailable)
	assert.False(t, e.NotSent, "the judge answered, so the request reached it")
	assert.Contains(t, e.Error(), "connection reset by peer")
	assert.Equal(t, int32(2), rt.calls.Load(), "retried")
	assert.Equal(t, 1, resp.Retries)
}
