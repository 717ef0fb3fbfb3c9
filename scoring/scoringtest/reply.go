package scoringtest

import (
	"encoding/json"
	"time"
)

type replyKind int

const (
	kindNone         replyKind = iota // zero Reply: use the default responder
	kindContent                       // a chat completion with content
	kindStatus                        // an HTTP status with a body
	kindRaw                           // a raw body with status 200 unless set
	kindTruncated                     // a completion whose body is cut short
	kindEmptyChoices                  // a completion with "choices": []
	kindHangup                        // the connection is closed, no reply
)

// Reply is one scripted answer. Build it with JSON, Content, Status,
// Garbage, Truncated, EmptyChoices, Hangup or Oversized, then adjust it
// with the With methods. The zero Reply, returned from a Handle function,
// means "answer as the default responder would".
type Reply struct {
	kind             replyKind
	content          string
	finishReason     string
	status           int
	body             []byte
	header           map[string]string
	retryAfter       string
	delay            time.Duration
	trickleChunk     int
	trickleEvery     time.Duration
	oversize         int
	promptTokens     int
	completionTokens int
}

// JSON answers with content as the assistant message (normally a JSON object).
func JSON(content string) Reply { return Reply{kind: kindContent, content: content} }

// Content answers with any assistant text, e.g. prose around JSON.
func Content(text string) Reply { return Reply{kind: kindContent, content: text} }

// Status answers with an HTTP status and body. An empty body on an error
// status becomes an OpenAI-style error object.
func Status(code int, body string) Reply {
	r := Reply{kind: kindStatus, status: code}
	if body != "" {
		r.body = []byte(body)
	}
	return r
}

// Garbage answers 200 with a body that is not JSON.
func Garbage() Reply {
	return Reply{kind: kindRaw, body: []byte("<html><body>502 upstream error</body></html>"), header: map[string]string{"Content-Type": "text/html"}}
}

// Truncated answers with a completion whose body stops halfway, then
// drops the connection.
func Truncated(content string) Reply { return Reply{kind: kindTruncated, content: content} }

// EmptyChoices answers 200 with "choices": [].
func EmptyChoices() Reply { return Reply{kind: kindEmptyChoices} }

// Hangup closes the connection without answering.
func Hangup() Reply { return Reply{kind: kindHangup} }

// Oversized answers with content padded with spaces to n bytes.
func Oversized(content string, n int) Reply {
	return Reply{kind: kindContent, content: content, oversize: n}
}

// WithFinishReason sets the choice's finish_reason (default "stop"), e.g.
// "length" for a reply cut at the token limit.
func (r Reply) WithFinishReason(reason string) Reply { r.finishReason = reason; return r }

// WithRetryAfter sets the Retry-After header: seconds or an HTTP date.
func (r Reply) WithRetryAfter(v string) Reply { r.retryAfter = v; return r }

// WithHeader sets a response header.
func (r Reply) WithHeader(key, value string) Reply {
	h := make(map[string]string, len(r.header)+1)
	for k, v := range r.header {
		h[k] = v
	}
	h[key] = value
	r.header = h
	return r
}

// WithDelay waits d before writing the headers.
func (r Reply) WithDelay(d time.Duration) Reply { r.delay = d; return r }

// WithTrickle writes the body chunk bytes at a time, every d.
func (r Reply) WithTrickle(chunk int, every time.Duration) Reply {
	r.trickleChunk, r.trickleEvery = chunk, every
	return r
}

// WithUsage sets the reported token usage (default: about four characters
// per token of the request and of the reply).
func (r Reply) WithUsage(promptTokens, completionTokens int) Reply {
	r.promptTokens, r.completionTokens = promptTokens, completionTokens
	return r
}

// Echo answers every call with status and an OpenAI error body that
// echoes the whole request, as some proxies and servers do: every header,
// the path and query, and the body. The error.message itself is generic.
// Use it with Server.Handle to test that no secret and no evaluated text
// reaches an error.
func Echo(status int) func(Call) Reply {
	return func(c Call) Reply {
		echo, _ := json.Marshal(map[string]any{
			"error":   map[string]string{"message": "request rejected", "type": "invalid_request_error"},
			"headers": c.Header,
			"url":     c.Path + "?" + c.RawQuery,
			"body":    string(c.Body),
		})
		return Status(status, string(echo))
	}
}
