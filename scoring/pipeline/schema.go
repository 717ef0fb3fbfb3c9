package pipeline

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/llm-eval/llm_eval/scoring"
)

// The schemas are strict in the OpenAI structured-outputs sense: every
// object lists all its properties as required and forbids others, so the
// same text works for response_format json_schema and for prompts. Most
// replies have one of two shapes, which ListSchema and ItemsSchema write.

// ListSchema is the schema of a reply that lists strings under field:
// the opinions, claims or statements a preprocess step extracts.
func ListSchema(name, field string) *scoring.Schema {
	return &scoring.Schema{Name: name, Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    ` + strconv.Quote(field) + `: {"type": "array", "items": {"type": "string"}}
  },
  "required": [` + strconv.Quote(field) + `],
  "additionalProperties": false
}`)}
}

// Property is one property of the items ItemsSchema lists: a string,
// unless Integer is set, limited to Enum when it has values.
type Property struct {
	Name    string
	Integer bool
	Enum    []string
}

func (p Property) schema() string {
	if p.Integer {
		return `{"type": "integer"}`
	}
	if len(p.Enum) == 0 {
		return `{"type": "string"}`
	}
	quoted := make([]string, len(p.Enum))
	for i, v := range p.Enum {
		quoted[i] = strconv.Quote(v)
	}
	return `{"type": "string", "enum": [` + strings.Join(quoted, ", ") + `]}`
}

// ItemsSchema is the schema of a reply that judges items one by one: a
// list under field of objects with the given properties, in order, and a
// "reason" string last.
func ItemsSchema(name, field string, props ...Property) *scoring.Schema {
	return ListsSchema(name, ItemList{Field: field, Props: props})
}

// ItemList is one list of a reply: objects under Field with the given
// properties, in order, and a "reason" string last.
type ItemList struct {
	Field string
	Props []Property
}

// ListsSchema is the schema of a reply made of several such lists, all
// required: the verdicts on the items sent and the items the judge names
// itself (tool_use's missing tools, prompt_alignment's user
// instructions).
func ListsSchema(name string, lists ...ItemList) *scoring.Schema {
	fields := make([]string, len(lists))
	names := make([]string, len(lists))
	for k, l := range lists {
		props := append(slices.Clip(l.Props), Property{Name: "reason"})
		lines := make([]string, len(props))
		required := make([]string, len(props))
		for i, p := range props {
			lines[i] = "          " + strconv.Quote(p.Name) + ": " + p.schema()
			required[i] = strconv.Quote(p.Name)
		}
		names[k] = strconv.Quote(l.Field)
		fields[k] = `    ` + names[k] + `: {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
` + strings.Join(lines, ",\n") + `
        },
        "required": [` + strings.Join(required, ", ") + `],
        "additionalProperties": false
      }
    }`
	}
	return &scoring.Schema{Name: name, Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
` + strings.Join(fields, ",\n") + `
  },
  "required": [` + strings.Join(names, ", ") + `],
  "additionalProperties": false
}`)}
}

// schemaReason is the reply of the reason step, which every scorer shares.
var schemaReason = &scoring.Schema{Name: scoring.SchemaReason, Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "reason": {"type": "string"}
  },
  "required": ["reason"],
  "additionalProperties": false
}`)}

// schemaFor returns a copy of s so a Judge that mutates the request cannot
// change what later requests carry.
func schemaFor(s *scoring.Schema) *scoring.Schema {
	c := *s
	c.Schema = append(json.RawMessage(nil), s.Schema...)
	return &c
}
