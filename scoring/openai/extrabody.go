package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// reservedBodyFields are the request fields ExtraBody may not set, with
// the setting to use instead: the judge sets them itself, or they would
// turn the reply into something it cannot read (a stream, several
// choices, tool calls).
var reservedBodyFields = map[string]string{
	"model":                 "the judge's model (or the Azure deployment)",
	"messages":              "nothing: the scorers build them",
	"response_format":       "structured_outputs",
	"temperature":           "omit_temperature (the judge sends 0)",
	"max_tokens":            "max_tokens",
	"max_completion_tokens": "max_tokens",
	"seed":                  "seed",
	"reasoning_effort":      "reasoning_effort",
	"chat_template_kwargs":  "chat_template_kwargs",
	"stream":                "nothing: the judge reads whole replies",
	"stream_options":        "nothing: the judge reads whole replies",
	"n":                     "nothing: the judge reads one choice",
	"tools":                 "nothing: the judge wants a JSON answer, not tool calls",
	"tool_choice":           "nothing: the judge wants a JSON answer, not tool calls",
	"functions":             "nothing: the judge wants a JSON answer, not tool calls",
	"function_call":         "nothing: the judge wants a JSON answer, not tool calls",
}

// CheckExtraBody reports the first field of an extra_body map that cannot
// be sent (see CheckExtraBodyField), named as extra_body.NAME.
func CheckExtraBody(extra map[string]any) error {
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := CheckExtraBodyField(k, extra[k]); err != nil {
			return fmt.Errorf("extra_body.%s: %w", k, err)
		}
	}
	return nil
}

// CheckExtraBodyField says why one extra_body field cannot be sent: its
// name is empty or reserved (the judge sets the field itself, or it would
// make the reply unreadable), or its value is not JSON.
func CheckExtraBodyField(name string, value any) error {
	if strings.TrimSpace(name) == "" {
		return errors.New("a field needs a name")
	}
	if use, ok := reservedBodyFields[name]; ok {
		return fmt.Errorf("the judge sets this field itself; use %s", use)
	}
	if _, err := json.Marshal(value); err != nil {
		return fmt.Errorf("not a JSON value: %w", err)
	}
	return nil
}

// encodeExtraBody checks extra and encodes its fields as they are spliced
// into a request body: `"a":1,"b":{...}`, in key order, without braces.
// nil when there are none.
func encodeExtraBody(extra map[string]any) ([]byte, error) {
	if len(extra) == 0 {
		return nil, nil
	}
	if err := CheckExtraBody(extra); err != nil {
		return nil, fmt.Errorf("judge %w", err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(extra); err != nil {
		return nil, fmt.Errorf("judge extra_body: %w", err)
	}
	inner := bytes.TrimSpace(b.Bytes())
	return inner[1 : len(inner)-1], nil
}

// withExtraBody adds the encoded fields at the end of a JSON object body.
// No field can clash with one go-openai wrote: CheckExtraBody refuses
// every field the judge sets.
func withExtraBody(body, extra []byte) []byte {
	end := bytes.LastIndexByte(body, '}')
	if len(extra) == 0 || end < 0 {
		return body
	}
	out := make([]byte, 0, len(body)+len(extra)+1)
	out = append(out, body[:end]...)
	if bytes.IndexByte(bytes.TrimSpace(body[:end]), ':') >= 0 {
		out = append(out, ',')
	}
	out = append(out, extra...)
	return append(out, body[end:]...)
}
