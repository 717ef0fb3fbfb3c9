//go:build mastra

// Package mastra checks our scorers against Mastra's own (npm @mastra/evals,
// the reference the scorers follow): the cases of cases*.json run through
// both with a scripted judge that gives the same verdicts to each, and the
// scores must be equal. Run it with `make mastra-reference` (npm ci here
// first, for @mastra/evals and Node 22).
package mastra

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/scorers"
)

// refCase is one case of cases.json: what the scorer evaluates and the
// judge's replies. A step's reply is the first of Replies that has every
// key its schema requires, cut down to the schema's properties, so a case
// can carry fields only one framework asks for (an echoed item, say).
type refCase struct {
	Name    string           `json:"name"`
	Scorer  string           `json:"scorer"`
	Input   string           `json:"input"`
	Output  string           `json:"output"`
	Context []string         `json:"context"`
	Scale   float64          `json:"scale"`
	Replies []map[string]any `json:"replies"`
	// Want is the score both must give, so a case scripted wrongly for
	// both frameworks alike cannot pass by agreeing.
	Want float64 `json:"want"`
}

// refResult is what reference.mjs prints for a case.
type refResult struct {
	Name  string   `json:"name"`
	Score *float64 `json:"score"`
	Error string   `json:"error"`
	Steps []string `json:"steps"`
}

func TestScoresEqualMastra(t *testing.T) {
	cases := readCases(t)
	mastra := runMastra(t)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			ref, ok := mastra[c.Name]
			require.True(t, ok, "reference.mjs printed no result")
			require.Empty(t, ref.Error, "Mastra's scorer failed")
			require.NotNil(t, ref.Score, "Mastra's scorer gave no score")

			judge := &scriptedJudge{c: c}
			s, err := scorers.New(c.Scorer, judge, scoring.Options{Scale: c.Scale})
			require.NoError(t, err)
			res := s.Score(context.Background(), scoring.Case{Input: c.Input, Output: c.Output, Context: c.Context})
			require.True(t, res.Scored(), "our %s gave %s: %v (%s)", c.Scorer, res.Label, res.Err, res.Reason)
			require.NoError(t, judge.err, "our scorer asked for a reply the case does not have")

			assert.Equal(t, *ref.Score, res.Score, "ours against Mastra's (Mastra's steps: %v; ours: %v)", ref.Steps, judge.steps)
			assert.Equal(t, c.Want, res.Score, "ours against the case's expected score")
		})
	}
}

// caseFiles are the case files, cases.json and one cases_*.json per group
// of scorers, so that each group's cases can change without touching the
// others'.
func caseFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("cases*.json")
	require.NoError(t, err)
	require.Contains(t, files, "cases.json")
	return files
}

func readCases(t *testing.T) []refCase {
	t.Helper()
	var all []refCase
	seen := map[string]bool{}
	for _, file := range caseFiles(t) {
		raw, err := os.ReadFile(file)
		require.NoError(t, err)
		var f struct {
			Cases []refCase `json:"cases"`
		}
		require.NoError(t, json.Unmarshal(raw, &f), file)
		require.NotEmpty(t, f.Cases, file)
		for _, c := range f.Cases {
			require.False(t, seen[c.Name], "case name %q repeated", c.Name)
			seen[c.Name] = true
		}
		all = append(all, f.Cases...)
	}
	return all
}

// runMastra runs reference.mjs on Node 22 (node@22 of package.json) and
// returns its results by case name.
func runMastra(t *testing.T) map[string]refResult {
	t.Helper()
	_, err := os.Stat(filepath.Join("node_modules", ".package-lock.json"))
	require.NoError(t, err, "node_modules missing: run `make mastra-reference` (npm ci in test/mastra)")
	node, err := filepath.Abs(filepath.Join("node_modules", "node", "bin", "node"))
	require.NoError(t, err)
	version, err := exec.Command(node, "--version").Output()
	require.NoError(t, err, "%s: run npm ci in test/mastra first", node)
	require.True(t, strings.HasPrefix(string(version), "v22."), "%s is %s, want Node 22", node, version)

	byName := map[string]refResult{}
	for _, file := range caseFiles(t) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, node, "reference.mjs", file)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		cancel()
		require.NoError(t, err, "reference.mjs %s: %s", file, stderr.String())
		var results []refResult
		require.NoError(t, json.Unmarshal(out, &results), "reference.mjs %s printed: %s", file, out)
		for _, r := range results {
			byName[r.Name] = r
		}
	}
	return byName
}

// scriptedJudge answers each request with the case's reply for the
// request's schema; a reason request it has no reply for gets a fixed
// reason. It records the first request it could not answer.
type scriptedJudge struct {
	c     refCase
	steps []string
	err   error
}

func (j *scriptedJudge) Complete(_ context.Context, req scoring.Request) (scoring.Response, error) {
	if req.Schema == nil {
		return scoring.Response{}, j.fail(fmt.Errorf("step %s sent no schema", req.Step))
	}
	var schema map[string]any
	if err := json.Unmarshal(req.Schema.Schema, &schema); err != nil {
		return scoring.Response{}, j.fail(fmt.Errorf("schema %s: %w", req.Schema.Name, err))
	}
	var required []string
	list, _ := schema["required"].([]any)
	for _, k := range list {
		if k, ok := k.(string); ok {
			required = append(required, k)
		}
	}
	j.steps = append(j.steps, strings.Join(required, ","))
	for _, r := range j.c.Replies {
		if hasAll(r, required) {
			body, err := json.Marshal(fit(r, schema))
			if err != nil {
				return scoring.Response{}, j.fail(err)
			}
			return scoring.Response{Content: string(body), FinishReason: "stop"}, nil
		}
	}
	if req.Schema.Name == scoring.SchemaReason {
		return scoring.Response{Content: `{"reason": "The score is given because of the scripted verdicts."}`, FinishReason: "stop"}, nil
	}
	return scoring.Response{}, j.fail(fmt.Errorf("no reply has the keys %v of schema %s", required, req.Schema.Name))
}

func (j *scriptedJudge) fail(err error) error {
	if j.err == nil {
		j.err = err
	}
	return err
}

func hasAll(r map[string]any, keys []string) bool {
	for _, k := range keys {
		if _, ok := r[k]; !ok {
			return false
		}
	}
	return len(keys) > 0
}

// fit keeps only what the schema describes: an object's listed
// properties, recursively, and an array's items.
func fit(v any, schema map[string]any) any {
	switch v := v.(type) {
	case []any:
		items, _ := schema["items"].(map[string]any)
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = fit(e, items)
		}
		return out
	case map[string]any:
		props, ok := schema["properties"].(map[string]any)
		if !ok {
			return v
		}
		out := map[string]any{}
		for k, sub := range props {
			if e, ok := v[k]; ok {
				subSchema, _ := sub.(map[string]any)
				out[k] = fit(e, subSchema)
			}
		}
		return out
	}
	return v
}
