package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/llm-eval/llm_eval/scoring"
)

// zeroTemperature is how temperature 0 is given to go-openai: its
// Temperature field is omitted when zero, and the smallest positive
// float32 (encoded as 1e-45) is the stand-in its documentation gives. The
// doer puts an exact 0 on the wire instead (transport.go).
const zeroTemperature = math.SmallestNonzeroFloat32

// chatRequest builds the go-openai request for req in mode and says
// whether it carries a response_format.
func (j *Judge) chatRequest(req scoring.Request, mode StructuredOutputs) (goopenai.ChatCompletionRequest, bool) {
	creq := goopenai.ChatCompletionRequest{Model: j.wireModel, Seed: j.cfg.Seed,
		ReasoningEffort: j.cfg.ReasoningEffort, ChatTemplateKwargs: j.cfg.ChatTemplateKwargs}
	if j.sendTemperature {
		creq.Temperature = zeroTemperature
	}
	if j.reasoning {
		creq.MaxCompletionTokens = j.cfg.MaxTokens
	} else {
		creq.MaxTokens = j.cfg.MaxTokens
	}
	msgs := req.Messages
	hasSchema := req.Schema != nil && len(bytes.TrimSpace(req.Schema.Schema)) > 0
	switch {
	case !hasSchema:
		// Nothing to enforce.
	case mode == StructuredOutputsJSONSchema:
		creq.ResponseFormat = &goopenai.ChatCompletionResponseFormat{
			Type: goopenai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &goopenai.ChatCompletionResponseFormatJSONSchema{
				Name: req.Schema.Name, Strict: true, Schema: req.Schema.Schema,
			},
		}
	default:
		if mode == StructuredOutputsJSONObject {
			creq.ResponseFormat = &goopenai.ChatCompletionResponseFormat{Type: goopenai.ChatCompletionResponseFormatTypeJSONObject}
		}
		msgs = withSchemaInstruction(msgs, req.Schema)
	}
	creq.Messages = make([]goopenai.ChatCompletionMessage, len(msgs))
	for i, m := range msgs {
		creq.Messages[i] = goopenai.ChatCompletionMessage{Role: m.Role, Content: m.Content}
	}
	return creq, creq.ResponseFormat != nil
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

// response is the judge's answer in a chat completion: the first choice,
// its refusal when a model refuses instead of answering. Model is the
// configured model, the name results, metrics and prices use (the reply's
// own "model" may be a dated snapshot name).
func (j *Judge) response(cr goopenai.ChatCompletionResponse) scoring.Response {
	c := cr.Choices[0]
	content := c.Message.Content
	if content == "" && c.Message.Refusal != "" {
		content = c.Message.Refusal
	}
	return scoring.Response{
		Content:          content,
		FinishReason:     string(c.FinishReason),
		PromptTokens:     cr.Usage.PromptTokens,
		CompletionTokens: cr.Usage.CompletionTokens,
		Model:            j.cfg.Model,
	}
}
