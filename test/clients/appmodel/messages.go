package appmodel

import (
	"encoding/json"
	"net/http"
)

// messagesRequest is the part of an Anthropic Messages API request the fake
// model reads. Content is a string or a list of content blocks.
type messagesRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// messages serves Anthropic's Messages API (POST /v1/messages), without
// streaming. A tool result comes back as a tool_result block in a user
// message, so the question is the last user message with text.
func (s *Server) messages(w http.ResponseWriter, path string, body []byte) {
	e := Exchange{Kind: Messages, Path: path, Body: body}
	var req messagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		s.fail(w, e, http.StatusBadRequest, "not a messages request: "+err.Error())
		return
	}
	if req.Stream {
		s.fail(w, e, http.StatusBadRequest, "streamed messages are not served")
		return
	}
	hasToolResult := false
	for _, m := range req.Messages {
		if m.Role != "user" {
			continue
		}
		var blocks []struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(m.Content, &blocks) == nil {
			for _, b := range blocks {
				hasToolResult = hasToolResult || b.Type == "tool_result"
			}
		}
		if text := content(m.Content); text != "" {
			e.Question = text
		}
	}
	var tools []string
	for _, t := range req.Tools {
		tools = append(tools, t.Name)
	}
	args, ok := s.decide(&e, tools, hasToolResult)
	if !ok {
		s.fail(w, e, http.StatusBadRequest, e.Err)
		return
	}
	s.record(e)
	id := s.nextID("msg")
	block := map[string]any{"type": "text", "text": e.Answer}
	stop := "end_turn"
	if e.ToolCall != "" {
		var input map[string]any
		_ = json.Unmarshal([]byte(args), &input)
		block = map[string]any{"type": "tool_use", "id": s.nextID("toolu"), "name": e.ToolCall, "input": input}
		stop = "tool_use"
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": req.Model,
		"content": []any{block}, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": tokens(string(body)), "output_tokens": tokens(e.Answer + args)},
	})
}
