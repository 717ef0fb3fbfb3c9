package pipeline

import (
	"encoding/json"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"

	"github.com/llm-eval/llm_eval/scoring"
)

// TestPromptsVersion: the version is the same for the same templates and
// schemas, and changes when a template's text or a schema changes.
func TestPromptsVersion(t *testing.T) {
	set := func(text, schema string) *Prompts {
		fsys := fstest.MapFS{"x.tmpl": {Data: []byte(`{{define "x.system"}}` + text + `{{template "json_only"}}{{end}}`)}}
		return NewPrompts(fsys, nil, &Prompt{Schema: &scoring.Schema{Name: "x", Schema: json.RawMessage(schema)}})
	}
	base := set("List the claims.", `{"type":"object"}`)
	assert.Regexp(t, `^[0-9a-f]{12}$`, base.Version())
	assert.Equal(t, base.Version(), set("List the claims.", `{ "type": "object" }`).Version(), "schema whitespace does not count")
	assert.NotEqual(t, base.Version(), set("List every claim.", `{"type":"object"}`).Version(), "a template change")
	assert.NotEqual(t, base.Version(), set("List the claims.", `{"type":"object","required":["claims"]}`).Version(), "a schema change")
}
