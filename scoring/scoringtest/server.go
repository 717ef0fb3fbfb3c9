// Package scoringtest is a scriptable fake OpenAI-compatible judge for tests
// and for the clearly labelled offline demo. It is not a judge: its default
// answers come from a few string heuristics, not from reading the text.
package scoringtest

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// maxRequestBytes bounds a request body the fake server reads.
const maxRequestBytes = 32 << 20

// AnyStep scripts replies for whichever step asks next, after that step's
// own script is empty.
const AnyStep = "*"

// Server is a fake OpenAI-compatible chat completions server. It serves
// POST {URL}/chat/completions (URL ends in /v1) and POST /chat/completions.
// It is safe for concurrent use.
type Server struct {
	// URL is the base URL to give a judge, ending in /v1.
	URL string

	srv *httptest.Server

	mu      sync.Mutex
	scripts map[string][]Reply
	handler func(Call) Reply
	latency time.Duration
	calls   []Call
	// ignoreFormat: see IgnoreResponseFormat.
	ignoreFormat bool
}

// NewServer starts a fake judge. Close it when done.
func NewServer() *Server {
	s := &Server{scripts: map[string][]Reply{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.srv.URL + "/v1"
	return s
}

// NewTLSServer starts a fake judge that serves HTTPS with HTTP/2, as hosted
// judges do, under a self-signed certificate (see CertificatePEM). Close it
// when done.
func NewTLSServer() *Server {
	s := &Server{scripts: map[string][]Reply{}}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serveHTTP))
	s.srv.EnableHTTP2 = true
	s.srv.StartTLS()
	s.URL = s.srv.URL + "/v1"
	return s
}

// CertificatePEM returns the PEM-encoded certificate of a server started by
// NewTLSServer, for a client's CA file; nil for a plain HTTP server.
func (s *Server) CertificatePEM() []byte {
	cert := s.srv.Certificate()
	if cert == nil {
		return nil
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
}

// New starts a fake judge that is closed when t ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := NewServer()
	t.Cleanup(s.Close)
	return s
}

// Close shuts the server down; it waits for calls in flight.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Client returns an HTTP client for the server.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Script queues replies for a step, identified by its schema name (e.g.
// bias_opinions), or for AnyStep. Queued replies are used in order, once each.
func (s *Server) Script(step string, replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts[step] = append(s.scripts[step], replies...)
}

// Handle sets the responder used when no script applies. Returning the zero
// Reply defers to the default responder.
func (s *Server) Handle(h func(Call) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = h
}

// IgnoreResponseFormat makes the server answer as endpoints that take
// response_format without enforcing it (Anthropic's OpenAI-compatible
// endpoint ignores it and reports no error). The step is then found in
// the prompt text alone, as a model that never saw response_format would
// have to, and default replies come the way an unconstrained model tends
// to write them: a sentence of prose, then the JSON in a code fence. A
// prompt that names no schema gets a prose answer without JSON. Calls
// still record the request as sent.
func (s *Server) IgnoreResponseFormat() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ignoreFormat = true
}

// SetLatency delays every reply by d before its headers are written.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}

// Calls returns every call received so far, in arrival order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Requests returns the decoded bodies of every call received so far.
func (s *Server) Requests() []ChatRequest {
	calls := s.Calls()
	out := make([]ChatRequest, len(calls))
	for i, c := range calls {
		out[i] = c.Request
	}
	return out
}

// Pending returns how many scripted replies are still queued.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, q := range s.scripts {
		n += len(q)
	}
	return n
}

// Call is one request as the server received it.
type Call struct {
	// Step is the schema name the request carries, or "" if none was found.
	Step     string
	Method   string
	Proto    string // "HTTP/1.1" or "HTTP/2.0"
	Path     string
	RawQuery string
	Header   http.Header
	// Body is the raw request body; Request is it decoded.
	Body    []byte
	Request ChatRequest
}

// Text returns every message's content, joined by blank lines.
func (c Call) Text() string {
	parts := make([]string, len(c.Request.Messages))
	for i, m := range c.Request.Messages {
		parts[i] = m.Content
	}
	return strings.Join(parts, "\n\n")
}

// PromptTokens is the server's estimate of the call's prompt tokens, the
// prompt_tokens its reply reports unless a script sets them: about four
// characters of Text a token.
func (c Call) PromptTokens() int { return estimateTokens(c.Text()) }

// ChatRequest is the part of a chat completions request the server decodes.
type ChatRequest struct {
	Model               string          `json:"model"`
	Messages            []Message       `json:"messages"`
	ResponseFormat      *ResponseFormat `json:"response_format,omitempty"`
	Temperature         *float64        `json:"temperature,omitempty"`
	MaxTokens           *int            `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int            `json:"max_completion_tokens,omitempty"`
	Seed                *int            `json:"seed,omitempty"`
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// ResponseFormat is the request's response_format.
type ResponseFormat struct {
	Type       string      `json:"type"`
	JSONSchema *JSONSchema `json:"json_schema,omitempty"`
}

// JSONSchema is response_format.json_schema.
type JSONSchema struct {
	Name   string          `json:"name"`
	Strict bool            `json:"strict"`
	Schema json.RawMessage `json:"schema"`
}

// namePattern finds the schema name a judge spells out in the prompt.
var namePattern = regexp.MustCompile(`\(name: ([A-Za-z0-9_.-]+)\)`)

// stepOf finds the step: response_format.json_schema.name, else the last
// "(name: X)" in the messages.
func stepOf(r ChatRequest) string {
	if r.ResponseFormat != nil && r.ResponseFormat.JSONSchema != nil && r.ResponseFormat.JSONSchema.Name != "" {
		return r.ResponseFormat.JSONSchema.Name
	}
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if m := namePattern.FindAllStringSubmatch(r.Messages[i].Content, -1); len(m) > 0 {
			return m[len(m)-1][1]
		}
	}
	return ""
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		writeError(w, http.StatusNotFound, "no such path: "+r.URL.Path)
		return
	}
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "use POST")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes))
	if err != nil {
		writeError(w, http.StatusBadRequest, "reading body: "+err.Error())
		return
	}
	call := Call{Method: r.Method, Proto: r.Proto, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}
	if err := json.Unmarshal(body, &call.Request); err != nil {
		s.record(call)
		writeError(w, http.StatusBadRequest, "request body is not a chat completion request: "+err.Error())
		return
	}
	s.mu.Lock()
	ignoreFormat := s.ignoreFormat
	s.mu.Unlock()
	seen := call.Request
	if ignoreFormat {
		seen.ResponseFormat = nil
	}
	call.Step = stepOf(seen)
	reply, latency := s.next(call)
	if reply.kind == kindNone {
		reply = DefaultReply(call)
		if ignoreFormat {
			reply = unconstrained(call, reply)
		}
	}
	s.write(w, r, call, reply, latency)
}

// unconstrained rewrites a default reply as a model writes it when nothing
// enforces the format: prose around fenced JSON, or prose alone when the
// prompt never said what to answer.
func unconstrained(c Call, r Reply) Reply {
	if c.Step == "" {
		r.content = "I have read the material. It looks consistent to me, and I see nothing to flag."
		return r
	}
	r.content = "Here is my evaluation.\n\n```json\n" + r.content + "\n```\n\nLet me know if you need more detail."
	return r
}

func (s *Server) record(c Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
}

// next records c and picks its reply: the step's script, then AnyStep's,
// then the handler. The zero Reply means the default responder.
func (s *Server) next(c Call) (Reply, time.Duration) {
	s.mu.Lock()
	s.calls = append(s.calls, c)
	latency, h := s.latency, s.handler
	for _, key := range []string{c.Step, AnyStep} {
		if q := s.scripts[key]; len(q) > 0 {
			s.scripts[key] = q[1:]
			s.mu.Unlock()
			return q[0], latency
		}
	}
	s.mu.Unlock()
	if h != nil {
		return h(c), latency
	}
	return Reply{}, latency
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "fake_judge_error"}})
	_, _ = w.Write(b)
}

// wait sleeps d unless the client goes away first.
func wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

func (s *Server) write(w http.ResponseWriter, r *http.Request, c Call, rep Reply, latency time.Duration) {
	if !wait(r, latency+rep.delay) {
		return
	}
	if rep.kind == kindHangup {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler) // aborts the connection without a reply
	}
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	if rep.retryAfter != "" {
		w.Header().Set("Retry-After", rep.retryAfter)
	}
	status, body := rep.status, rep.body
	switch rep.kind {
	case kindStatus, kindRaw:
		if body == nil && status >= 400 {
			body, _ = json.Marshal(map[string]any{"error": map[string]any{"message": http.StatusText(status), "type": "fake_judge_error"}})
		}
	default:
		body = completionBody(c, rep)
	}
	if status == 0 {
		status = http.StatusOK
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	if rep.kind == kindTruncated {
		// Promise the whole body, send half, then drop the connection.
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(status)
		_, _ = w.Write(body[:len(body)/2])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		panic(http.ErrAbortHandler)
	}
	w.WriteHeader(status)
	if rep.trickleEvery <= 0 {
		_, _ = w.Write(body)
		return
	}
	chunk := max(rep.trickleChunk, 1)
	for len(body) > 0 {
		n := min(chunk, len(body))
		if _, err := w.Write(body[:n]); err != nil {
			return
		}
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		body = body[n:]
		if len(body) > 0 && !wait(r, rep.trickleEvery) {
			return
		}
	}
}

// completionBody renders a chat completion reply.
func completionBody(c Call, rep Reply) []byte {
	content := rep.content
	if rep.oversize > 0 && len(content) < rep.oversize {
		content += strings.Repeat(" ", rep.oversize-len(content))
	}
	finish := rep.finishReason
	if finish == "" {
		finish = "stop"
	}
	pt, ct := rep.promptTokens, rep.completionTokens
	if pt == 0 {
		pt = c.PromptTokens()
	}
	if ct == 0 {
		ct = estimateTokens(content)
	}
	choices := []any{map[string]any{
		"index":         0,
		"message":       map[string]any{"role": "assistant", "content": content},
		"finish_reason": finish,
	}}
	if rep.kind == kindEmptyChoices {
		choices = []any{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]any{
		"id":      "chatcmpl-fake",
		"object":  "chat.completion",
		"created": 0,
		"model":   c.Request.Model,
		"choices": choices,
		"usage":   map[string]any{"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct},
	})
	return b.Bytes()
}

// estimateTokens is the usual four characters per token, at least one.
func estimateTokens(s string) int {
	return max(1, (len(s)+3)/4)
}
