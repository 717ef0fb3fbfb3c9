package scoring

import (
	"encoding/json"
	"fmt"
)

// replies builds judge scripts whose analyze step returns the given
// verdicts, with one preprocessed item per verdict.
func biasReplies(verdicts ...string) map[string][]string {
	var opinions []string
	var results []map[string]string
	for i, v := range verdicts {
		opinions = append(opinions, fmt.Sprintf("opinion %d", i+1))
		results = append(results, map[string]string{"result": v, "reason": fmt.Sprintf("reason %d", i+1)})
	}
	return map[string][]string{
		SchemaBiasOpinions: {mustJSON(map[string]any{"opinions": orEmpty(opinions)})},
		SchemaBiasResults:  {mustJSON(map[string]any{"results": results})},
		SchemaReason:       {`{"reason": "judge reason"}`},
	}
}

func hallucinationReplies(verdicts ...string) map[string][]string {
	var claims []string
	var vs []map[string]string
	for i, v := range verdicts {
		claims = append(claims, fmt.Sprintf("claim %d", i+1))
		vs = append(vs, map[string]string{"statement": fmt.Sprintf("claim %d", i+1), "verdict": v, "reason": fmt.Sprintf("reason %d", i+1)})
	}
	return map[string][]string{
		SchemaHallucinationClaims:   {mustJSON(map[string]any{"claims": orEmpty(claims)})},
		SchemaHallucinationVerdicts: {mustJSON(map[string]any{"verdicts": vs})},
		SchemaReason:                {`{"reason": "judge reason"}`},
	}
}

func alignmentReplies(verdicts ...string) map[string][]string {
	var vs []map[string]string
	for i, v := range verdicts {
		vs = append(vs, map[string]string{"verdict": v, "reason": fmt.Sprintf("reason %d", i+1)})
	}
	return map[string][]string{
		SchemaPromptAlignmentVerdicts: {mustJSON(map[string]any{"verdicts": vs})},
		SchemaReason:                  {`{"reason": "judge reason"}`},
	}
}

func instructions(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("instruction %d", i+1))
	}
	return out
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
