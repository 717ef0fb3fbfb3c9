// Package appmodel is a fake OpenAI-compatible model for the Node apps of
// test/clients: the model the applications talk to, not the judge. It serves
// chat completions (plain and streamed), the Responses API (plain and
// streamed), Anthropic's Messages API (plain), and embeddings, with answers
// a test can predict:
//
//   - a request that offers tools and carries no tool result yet asks for the
//     first tool, with the arguments scripted for it;
//   - any other request gets the answer scripted for its last user message;
//   - embeddings are a bag of hashed words, so texts sharing words are near.
//
// It records every request and what it answered. Test-only code.
package appmodel

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"unicode"
)

// Created is the fixed creation time of every reply (2026-01-01T00:00:00Z).
const Created = 1767225600

// Dimensions is the length of every embedding.
const Dimensions = 64

// Script says what the model answers.
type Script struct {
	// Answers maps a user message (the last one of a request) to the answer.
	Answers map[string]string
	// ToolArguments maps a tool name to the JSON arguments of a call to it.
	ToolArguments map[string]string
}

// Kind is what a request asked for.
type Kind string

// Request kinds.
const (
	Chat       Kind = "chat.completions"
	Responses  Kind = "responses"
	Messages   Kind = "messages"
	Embeddings Kind = "embeddings"
)

// Exchange is one request and what the model did with it.
type Exchange struct {
	Kind   Kind
	Path   string
	Stream bool
	Body   []byte
	// Question is the request's last user message (chat and responses).
	Question string
	// ToolCall names the tool the reply asked for; empty for an answer.
	ToolCall string
	// Answer is the text of the reply; empty for a tool call.
	Answer string
	// Err is why the request was refused, if it was.
	Err string
}

// Server is a running fake model. It is safe for concurrent use.
type Server struct {
	// URL is the base URL to give an SDK, ending in /v1.
	URL string

	srv    *httptest.Server
	script Script

	mu        sync.Mutex
	exchanges []Exchange
	seq       int
}

// New starts a fake model serving script. Close it when done.
func New(script Script) *Server {
	s := &Server{script: script}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.srv.URL + "/v1"
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Exchanges returns every request served so far, in arrival order.
func (s *Server) Exchanges() []Exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Exchange(nil), s.exchanges...)
}

// nextID returns a deterministic id with prefix: prefix_1, prefix_2, ...
func (s *Server) nextID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return fmt.Sprintf("%s_%d", prefix, s.seq)
}

func (s *Server) record(e Exchange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exchanges = append(s.exchanges, e)
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil || r.Method != http.MethodPost {
		s.fail(w, Exchange{Path: r.URL.Path, Body: body}, http.StatusBadRequest, "want a POST with a body")
		return
	}
	switch {
	case strings.HasSuffix(r.URL.Path, "/chat/completions"):
		s.chat(w, r.URL.Path, body)
	case strings.HasSuffix(r.URL.Path, "/responses"):
		s.responses(w, r.URL.Path, body)
	case strings.HasSuffix(r.URL.Path, "/messages"):
		s.messages(w, r.URL.Path, body)
	case strings.HasSuffix(r.URL.Path, "/embeddings"):
		s.embeddings(w, r.URL.Path, body)
	default:
		s.fail(w, Exchange{Path: r.URL.Path, Body: body}, http.StatusNotFound, "no such path: "+r.URL.Path)
	}
}

func (s *Server) fail(w http.ResponseWriter, e Exchange, status int, msg string) {
	e.Err = msg
	s.record(e)
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": "fake_app_model_error"}})
}

// decide picks the reply to a conversation: the first tool while no tool
// result is in, else the scripted answer to the last user message.
func (s *Server) decide(e *Exchange, tools []string, hasToolResult bool) (args string, ok bool) {
	if len(tools) > 0 && !hasToolResult {
		args, ok := s.script.ToolArguments[tools[0]]
		if !ok {
			e.Err = "no scripted arguments for tool " + tools[0]
			return "", false
		}
		e.ToolCall = tools[0]
		return args, true
	}
	answer, ok := s.script.Answers[e.Question]
	if !ok {
		e.Err = fmt.Sprintf("no scripted answer for %q", e.Question)
		return "", false
	}
	e.Answer = answer
	return "", true
}

// content is a message's text: a string, or the text of its parts.
func content(raw json.RawMessage) string {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var texts []string
	for _, p := range parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

type chatRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func (s *Server) chat(w http.ResponseWriter, path string, body []byte) {
	e := Exchange{Kind: Chat, Path: path, Body: body}
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		s.fail(w, e, http.StatusBadRequest, "not a chat completions request: "+err.Error())
		return
	}
	e.Stream = req.Stream
	hasToolResult := false
	for _, m := range req.Messages {
		switch m.Role {
		case "user":
			e.Question = content(m.Content)
		case "tool":
			hasToolResult = true
		}
	}
	var tools []string
	for _, t := range req.Tools {
		tools = append(tools, t.Function.Name)
	}
	args, ok := s.decide(&e, tools, hasToolResult)
	if !ok {
		s.fail(w, e, http.StatusBadRequest, e.Err)
		return
	}
	s.record(e)
	id := s.nextID("chatcmpl")
	usage := map[string]any{"prompt_tokens": tokens(string(body)), "completion_tokens": tokens(e.Answer + args), "total_tokens": tokens(string(body)) + tokens(e.Answer+args)}
	message := map[string]any{"role": "assistant", "content": e.Answer, "refusal": nil}
	finish := "stop"
	var toolCalls []map[string]any
	if e.ToolCall != "" {
		finish = "tool_calls"
		toolCalls = []map[string]any{{"index": 0, "id": s.nextID("call"), "type": "function", "function": map[string]any{"name": e.ToolCall, "arguments": args}}}
		message["content"] = nil
		message["tool_calls"] = toolCalls
	}
	if !req.Stream {
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "object": "chat.completion", "created": Created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": message, "finish_reason": finish, "logprobs": nil}},
			"usage":   usage,
		})
		return
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": Created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}}
	}
	events := []any{chunk(map[string]any{"role": "assistant", "content": ""}, nil)}
	if toolCalls != nil {
		events = append(events, chunk(map[string]any{"tool_calls": toolCalls}, nil))
	} else {
		for _, piece := range splitWords(e.Answer) {
			events = append(events, chunk(map[string]any{"content": piece}, nil))
		}
	}
	events = append(events, chunk(map[string]any{}, finish))
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		events = append(events, map[string]any{"id": id, "object": "chat.completion.chunk", "created": Created, "model": req.Model, "choices": []any{}, "usage": usage})
	}
	writeSSE(w, events, true)
}

type responsesRequest struct {
	Model        string          `json:"model"`
	Stream       bool            `json:"stream"`
	Instructions string          `json:"instructions"`
	Input        json.RawMessage `json:"input"`
	Tools        []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
}

type responsesItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

func (s *Server) responses(w http.ResponseWriter, path string, body []byte) {
	e := Exchange{Kind: Responses, Path: path, Body: body}
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		s.fail(w, e, http.StatusBadRequest, "not a responses request: "+err.Error())
		return
	}
	e.Stream = req.Stream
	hasToolResult := false
	if err := json.Unmarshal(req.Input, &e.Question); err != nil {
		var items []responsesItem
		if err := json.Unmarshal(req.Input, &items); err != nil {
			s.fail(w, e, http.StatusBadRequest, "input is neither a string nor a list of items: "+err.Error())
			return
		}
		for _, it := range items {
			switch {
			case it.Type == "function_call_output":
				hasToolResult = true
			case it.Role == "user":
				e.Question = content(it.Content)
			}
		}
	}
	var tools []string
	for _, t := range req.Tools {
		if t.Type == "function" {
			tools = append(tools, t.Name)
		}
	}
	args, ok := s.decide(&e, tools, hasToolResult)
	if !ok {
		s.fail(w, e, http.StatusBadRequest, e.Err)
		return
	}
	s.record(e)
	id := s.nextID("resp")
	var item map[string]any
	if e.ToolCall != "" {
		item = map[string]any{"type": "function_call", "id": s.nextID("fc"), "call_id": s.nextID("call"), "name": e.ToolCall, "arguments": args, "status": "completed"}
	} else {
		item = map[string]any{"type": "message", "id": s.nextID("msg"), "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": e.Answer, "annotations": []any{}, "logprobs": []any{}}}}
	}
	in, out := tokens(string(body)), tokens(e.Answer+args)
	response := func(status string, output []any) map[string]any {
		r := map[string]any{"id": id, "object": "response", "created_at": Created, "status": status, "model": req.Model,
			"output": output, "error": nil, "incomplete_details": nil, "instructions": nil, "parallel_tool_calls": true,
			"tool_choice": "auto", "tools": []any{}, "text": map[string]any{"format": map[string]any{"type": "text"}}}
		if status == "completed" {
			r["usage"] = map[string]any{"input_tokens": in, "output_tokens": out, "total_tokens": in + out,
				"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}
		}
		return r
	}
	if !req.Stream {
		writeJSON(w, http.StatusOK, response("completed", []any{item}))
		return
	}
	seq := 0
	event := func(typ string, fields map[string]any) map[string]any {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		return fields
	}
	events := []any{
		event("response.created", map[string]any{"response": response("in_progress", []any{})}),
		event("response.in_progress", map[string]any{"response": response("in_progress", []any{})}),
	}
	if e.ToolCall != "" {
		added := map[string]any{}
		for k, v := range item {
			added[k] = v
		}
		added["arguments"], added["status"] = "", "in_progress"
		events = append(events,
			event("response.output_item.added", map[string]any{"output_index": 0, "item": added}),
			event("response.function_call_arguments.delta", map[string]any{"output_index": 0, "item_id": item["id"], "delta": args}),
			event("response.function_call_arguments.done", map[string]any{"output_index": 0, "item_id": item["id"], "arguments": args}),
		)
	} else {
		events = append(events,
			event("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{"type": "message", "id": item["id"], "status": "in_progress", "role": "assistant", "content": []any{}}}),
			event("response.content_part.added", map[string]any{"output_index": 0, "item_id": item["id"], "content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}}),
		)
		for _, piece := range splitWords(e.Answer) {
			events = append(events, event("response.output_text.delta", map[string]any{"output_index": 0, "item_id": item["id"], "content_index": 0, "delta": piece, "logprobs": []any{}}))
		}
		events = append(events,
			event("response.output_text.done", map[string]any{"output_index": 0, "item_id": item["id"], "content_index": 0, "text": e.Answer, "logprobs": []any{}}),
			event("response.content_part.done", map[string]any{"output_index": 0, "item_id": item["id"], "content_index": 0, "part": map[string]any{"type": "output_text", "text": e.Answer, "annotations": []any{}}}),
		)
	}
	events = append(events,
		event("response.output_item.done", map[string]any{"output_index": 0, "item": item}),
		event("response.completed", map[string]any{"response": response("completed", []any{item})}),
	)
	writeSSE(w, events, false)
}

type embeddingsRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format"`
}

func (s *Server) embeddings(w http.ResponseWriter, path string, body []byte) {
	e := Exchange{Kind: Embeddings, Path: path, Body: body}
	var req embeddingsRequest
	if err := json.Unmarshal(body, &req); err != nil {
		s.fail(w, e, http.StatusBadRequest, "not an embeddings request: "+err.Error())
		return
	}
	var inputs []string
	if err := json.Unmarshal(req.Input, &inputs); err != nil {
		var one string
		if err := json.Unmarshal(req.Input, &one); err != nil {
			s.fail(w, e, http.StatusBadRequest, "input must be a string or a list of strings")
			return
		}
		inputs = []string{one}
	}
	s.record(e)
	data := make([]any, len(inputs))
	n := 0
	for i, in := range inputs {
		n += tokens(in)
		var emb any = Embed(in)
		if req.EncodingFormat == "base64" {
			emb = encodeBase64(Embed(in))
		}
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": emb}
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data, "model": req.Model,
		"usage": map[string]any{"prompt_tokens": n, "total_tokens": n}})
}

// Embed is the embedding of text: counts of its lower-cased words hashed
// into Dimensions buckets, scaled to unit length.
func Embed(text string) []float32 {
	v := make([]float64, Dimensions)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range words {
		h := fnv.New32a()
		_, _ = h.Write([]byte(w))
		v[h.Sum32()%Dimensions]++
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	out := make([]float32, Dimensions)
	if norm == 0 {
		out[0] = 1
		return out
	}
	for i, x := range v {
		out[i] = float32(x / math.Sqrt(norm))
	}
	return out
}

// encodeBase64 is the OpenAI base64 embedding encoding: little-endian
// float32s.
func encodeBase64(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}

// tokens estimates a token count: four characters per token, at least one.
func tokens(s string) int { return max(1, (len(s)+3)/4) }

// splitWords cuts s into word-sized pieces that join back to s.
func splitWords(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s[1:], ' ')
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// writeSSE writes events as server-sent events; chat completions end with
// a [DONE] line, the Responses API does not.
func writeSSE(w http.ResponseWriter, events []any, done bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	for _, ev := range events {
		b, _ := json.Marshal(ev)
		if m, ok := ev.(map[string]any); ok && !done {
			_, _ = fmt.Fprintf(w, "event: %s\n", m["type"])
		}
		_, _ = fmt.Fprintf(w, "data: %s\n\n", b)
	}
	if done {
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
