package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/llm-eval/llm_eval/internal/jsonstring"
	"github.com/llm-eval/llm_eval/scoring"
)

// chatRequest is the wire form of a chat completions request.
type chatRequest struct {
	Model               string            `json:"model"`
	Messages            []scoring.Message `json:"messages"`
	Temperature         *float64          `json:"temperature,omitempty"`
	MaxTokens           int               `json:"max_tokens,omitempty"`
	MaxCompletionTokens int               `json:"max_completion_tokens,omitempty"`
	Seed                *int              `json:"seed,omitempty"`
	ResponseFormat      *responseFormat   `json:"response_format,omitempty"`
}

type responseFormat struct {
	Type       string      `json:"type"` // json_schema or json_object
	JSONSchema *jsonSchema `json:"json_schema,omitempty"`
}

type jsonSchema struct {
	Name   string          `json:"name"`
	Strict bool            `json:"strict"`
	Schema json.RawMessage `json:"schema"`
}

// buildRequest encodes req for mode and says whether it carries a
// response_format.
func (j *Judge) buildRequest(req scoring.Request, mode StructuredOutputs) ([]byte, bool, error) {
	creq := chatRequest{Model: j.cfg.Model, Messages: req.Messages, Seed: j.cfg.Seed}
	if j.sendTemperature {
		creq.Temperature = new(float64)
	}
	if j.reasoning {
		creq.MaxCompletionTokens = j.cfg.MaxTokens
	} else {
		creq.MaxTokens = j.cfg.MaxTokens
	}
	hasSchema := req.Schema != nil && len(bytes.TrimSpace(req.Schema.Schema)) > 0
	switch {
	case !hasSchema:
		// Nothing to enforce.
	case mode == StructuredOutputsJSONSchema:
		creq.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: &jsonSchema{Name: req.Schema.Name, Strict: true, Schema: req.Schema.Schema}}
	default:
		if mode == StructuredOutputsJSONObject {
			creq.ResponseFormat = &responseFormat{Type: "json_object"}
		}
		creq.Messages = withSchemaInstruction(req.Messages, req.Schema)
	}
	size := 256 + len(creq.Model)
	for _, m := range creq.Messages {
		size += 32 + len(m.Role) + len(m.Content) + len(m.Content)/8
	}
	if creq.ResponseFormat != nil && creq.ResponseFormat.JSONSchema != nil {
		size += len(creq.ResponseFormat.JSONSchema.Schema)
	}
	body, err := creq.appendJSON(make([]byte, 0, size))
	if err != nil {
		return nil, false, fmt.Errorf("encoding judge request: %w", err)
	}
	return body, creq.ResponseFormat != nil, nil
}

// SchemaInstruction is the sentence that spells a schema out when the
// endpoint does not enforce it. It names the schema as "(name: X)".
func SchemaInstruction(s *scoring.Schema) string {
	var compact bytes.Buffer
	if err := json.Compact(&compact, s.Schema); err != nil {
		compact.Reset()
		compact.Write(s.Schema)
	}
	return fmt.Sprintf("Reply with only a JSON object matching this JSON Schema (name: %s): %s", s.Name, compact.String())
}

// withSchemaInstruction appends the schema to the last system message, or
// adds a final system message when there is none. msgs is not modified.
func withSchemaInstruction(msgs []scoring.Message, s *scoring.Schema) []scoring.Message {
	out := append([]scoring.Message(nil), msgs...)
	instr := SchemaInstruction(s)
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Role == "system" {
			out[i].Content = strings.TrimRight(out[i].Content, "\n") + "\n\n" + instr
			return out
		}
	}
	return append(out, scoring.Message{Role: "system", Content: instr})
}

// appendJSON appends r as JSON to dst. The bytes are those of
// encoding/json with HTML escaping off (the prompts are full of the '<' and
// '>' of their block delimiters, which stay one byte each instead of six),
// written without reflection into one buffer sized by the caller: a judge
// call encodes several KB of prompt, and encoding/json's reflection and the
// copy out of its buffer were a tenth of a call's client-side CPU.
func (r *chatRequest) appendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"model":`...)
	dst = jsonstring.Append(dst, r.Model, false)
	dst = append(dst, `,"messages":`...)
	if r.Messages == nil {
		dst = append(dst, "null"...) // as encoding/json; Complete never sends it
	} else {
		dst = append(dst, '[')
	}
	for i, m := range r.Messages {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"role":`...)
		dst = jsonstring.Append(dst, m.Role, false)
		dst = append(dst, `,"content":`...)
		dst = jsonstring.Append(dst, m.Content, false)
		dst = append(dst, '}')
	}
	if r.Messages != nil {
		dst = append(dst, ']')
	}
	if r.Temperature != nil {
		dst = append(dst, `,"temperature":`...)
		dst = strconv.AppendFloat(dst, *r.Temperature, 'g', -1, 64)
	}
	if r.MaxTokens != 0 {
		dst = append(dst, `,"max_tokens":`...)
		dst = strconv.AppendInt(dst, int64(r.MaxTokens), 10)
	}
	if r.MaxCompletionTokens != 0 {
		dst = append(dst, `,"max_completion_tokens":`...)
		dst = strconv.AppendInt(dst, int64(r.MaxCompletionTokens), 10)
	}
	if r.Seed != nil {
		dst = append(dst, `,"seed":`...)
		dst = strconv.AppendInt(dst, int64(*r.Seed), 10)
	}
	if f := r.ResponseFormat; f != nil {
		dst = append(dst, `,"response_format":{"type":`...)
		dst = jsonstring.Append(dst, f.Type, false)
		if s := f.JSONSchema; s != nil {
			dst = append(dst, `,"json_schema":{"name":`...)
			dst = jsonstring.Append(dst, s.Name, false)
			dst = append(dst, `,"strict":`...)
			dst = strconv.AppendBool(dst, s.Strict)
			dst = append(dst, `,"schema":`...)
			buf := bytes.NewBuffer(dst) // compacts into dst's spare capacity
			if err := json.Compact(buf, s.Schema); err != nil {
				return nil, fmt.Errorf("schema %s: %w", s.Name, err)
			}
			dst = buf.Bytes()
			dst = append(dst, '}')
		}
		dst = append(dst, '}')
	}
	return append(dst, '}'), nil
}
