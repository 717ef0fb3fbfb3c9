package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeRules(t *testing.T, rules string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rules.json")
	require.NoError(t, os.WriteFile(path, []byte(rules), 0o600))
	return path
}

func TestScoreChecksNeedsNoJudge(t *testing.T) {
	rules := writeRules(t, `[{"type": "json_valid"}, {"type": "words", "max": 3}]`)
	code, out, errOut := runScoreCLI(t, jsonl(
		map[string]any{"output": `{"a": 1}`},
		map[string]any{"output": `not json at all here`},
		map[string]any{"output": `[1, 2]`, "metadata": map[string]string{"id": "x"}},
	), "--scorer", "checks", "--rules", rules)
	require.Equal(t, exitOK, code, errOut)
	require.Len(t, out, 3)
	want := []struct {
		score float64
		label string
	}{{1, "pass"}, {0, "fail"}, {1, "pass"}}
	for i, r := range out {
		assert.Equal(t, "checks", r.Scorer)
		require.NotNil(t, r.Score)
		assert.InDelta(t, want[i].score, *r.Score, 1e-12)
		assert.Equal(t, want[i].label, r.Label)
		assert.Zero(t, r.Usage["llm_calls"])
		var steps struct {
			Analyze struct {
				Verdicts []struct {
					Rule   string `json:"rule"`
					Passed bool   `json:"passed"`
				} `json:"verdicts"`
			} `json:"analyzeStepResult"`
		}
		require.NoError(t, json.Unmarshal(r.Steps, &steps))
		require.Len(t, steps.Analyze.Verdicts, 2)
		assert.Equal(t, "json_valid", steps.Analyze.Verdicts[0].Rule)
	}
	assert.Equal(t, "x", out[2].Metadata["id"])
}

func TestScoreChecksRejectsBadRules(t *testing.T) {
	tests := []struct {
		name, rules, want string
	}{
		{"bad regexp", `[{"type": "no_pii"}, {"type": "regex_match", "pattern": "a("}]`, "rules::1::pattern: error parsing regexp"},
		{"unknown type", `[{"type": "vibes"}]`, `rules::0::type: unknown rule type "vibes"`},
		{"unknown key", `[{"type": "words", "maximum": 3}]`, `unknown field "maximum"`},
		{"not a list", `{"type": "words"}`, "want a JSON list of rules"},
		{"empty", `[]`, "needs at least one rule"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runScoreCLI(t, "", "--scorer", "checks", "--rules", writeRules(t, tc.rules))
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tc.want)
		})
	}
	code, _, errOut := runScoreCLI(t, "", "--scorer", "checks")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "needs --rules FILE")
	code, _, errOut = runScoreCLI(t, "", "--scorer", "bias", "--rules", "x.json", "--judge-endpoint", "http://127.0.0.1:1/v1", "--model", "m")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--rules is for --scorer checks only")
}
