package pipeline_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/bias"
	"github.com/llm-eval/llm_eval/scoring/hallucination"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
	"github.com/llm-eval/llm_eval/scoring/promptalignment"
)

// checkStrict walks a JSON Schema and reports objects that are not
// strict: additionalProperties must be false and every property required.
func checkStrict(t *testing.T, path string, s map[string]any) {
	t.Helper()
	if s["type"] == "object" {
		if s["additionalProperties"] != false {
			t.Errorf("%s: additionalProperties is not false", path)
		}
		props, _ := s["properties"].(map[string]any)
		var req []string
		for _, r := range s["required"].([]any) {
			req = append(req, r.(string))
		}
		for name, p := range props {
			if !slices.Contains(req, name) {
				t.Errorf("%s: property %q not required", path, name)
			}
			checkStrict(t, path+"."+name, p.(map[string]any))
		}
		if len(req) != len(props) {
			t.Errorf("%s: required %v does not match properties", path, req)
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		checkStrict(t, path+"[]", items)
	}
}

func TestSchemas(t *testing.T) {
	tests := []struct {
		schema *scoring.Schema
		name   string
		top    []string
	}{
		{schemaOf(bias.SchemaOpinions), "bias_opinions", []string{"opinions"}},
		{schemaOf(bias.SchemaResults), "bias_results", []string{"results"}},
		{schemaOf(hallucination.SchemaClaims), "hallucination_claims", []string{"claims"}},
		{schemaOf(hallucination.SchemaVerdicts), "hallucination_verdicts", []string{"verdicts"}},
		{schemaOf(promptalignment.SchemaVerdicts), "prompt_alignment_verdicts", []string{"verdicts", "user_instructions"}},
		{schemaOf(scoring.SchemaReason), "reason", []string{"reason"}},
	}
	for _, tt := range tests {
		if tt.schema.Name != tt.name {
			t.Errorf("schema name %q, want %q", tt.schema.Name, tt.name)
		}
		var s map[string]any
		if err := json.Unmarshal(tt.schema.Schema, &s); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		props := s["properties"].(map[string]any)
		if len(props) != len(tt.top) {
			t.Errorf("%s: top-level properties %v, want exactly %q", tt.name, props, tt.top)
		}
		for _, top := range tt.top {
			if props[top] == nil {
				t.Errorf("%s: top-level properties %v, want exactly %q", tt.name, props, tt.top)
			}
		}
		checkStrict(t, tt.name, s)
	}
}

// TestSchemaCopies checks a judge that mutates a request's schema cannot
// change the next request.
func TestSchemaCopies(t *testing.T) {
	c := pipeline.SchemaFor(schemaOf(scoring.SchemaReason))
	c.Name = "mutated"
	c.Schema[0] = 'X'
	if schemaOf(scoring.SchemaReason).Name != scoring.SchemaReason || schemaOf(scoring.SchemaReason).Schema[0] != '{' {
		t.Errorf("schemaFor shares memory with the package schema")
	}
}

// TestEnumsMatchVerdicts checks the schemas' enums are the canonical verdicts.
func TestEnumsMatchVerdicts(t *testing.T) {
	enum := func(s *scoring.Schema, item, field string) []string {
		var v struct {
			Properties map[string]struct {
				Items struct {
					Properties map[string]struct {
						Enum []string `json:"enum"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(s.Schema, &v); err != nil {
			t.Fatal(err)
		}
		return v.Properties[item].Items.Properties[field].Enum
	}
	yn := []string{pipeline.VerdictYes, pipeline.VerdictNo}
	if got := enum(schemaOf(bias.SchemaResults), "results", "result"); !slices.Equal(got, yn) {
		t.Errorf("bias enum %v", got)
	}
	if got := enum(schemaOf(hallucination.SchemaVerdicts), "verdicts", "verdict"); !slices.Equal(got, yn) {
		t.Errorf("hallucination enum %v", got)
	}
	if got := enum(schemaOf(promptalignment.SchemaVerdicts), "verdicts", "verdict"); !slices.Equal(got, []string{pipeline.VerdictYes, pipeline.VerdictNo, pipeline.VerdictNA}) {
		t.Errorf("alignment enum %v", got)
	}
}
