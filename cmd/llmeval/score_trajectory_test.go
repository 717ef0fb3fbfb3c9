package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// agentLine is an agent run as a JSONL line: a lookup, a failed booking
// and the final answer.
const agentLine = `{"input": "Find a table for 2 tonight and book it.", "output": "Your table is booked.", ` +
	`"trajectory": {"steps": [` +
	`{"kind": "generation", "tool_calls": [{"id": "c1", "name": "find_table", "arguments": "{\"people\": 2}"}]},` +
	`{"kind": "tool", "tool": "find_table", "call_id": "c1", "result": "table 7 free at 20:00"},` +
	`{"kind": "generation", "tool_calls": [{"id": "c2", "name": "book", "arguments": "table 7 at 20:00"}]},` +
	`{"kind": "tool", "tool": "book", "call_id": "c2", "error": "payment declined"},` +
	`{"kind": "generation", "output": "Your table is booked."}]}, "metadata": {"id": "run-1"}}`

func TestScoreTrajectoryScorers(t *testing.T) {
	noTools := `{"input": "Hi", "output": "Hello!", "trajectory": {"steps": [{"kind": "generation", "output": "Hello!"}]}}`
	chat := `{"input": "Hi", "output": "Hello!"}`
	for _, tc := range []struct {
		scorer string
		labels []string
		calls  int
	}{
		{"task_completion", []string{"fail", "pass", "not_scorable"}, 2 * 2},
		{"tool_use", []string{"pass", "not_scorable", "not_scorable"}, 1},
	} {
		t.Run(tc.scorer, func(t *testing.T) {
			srv := scoringtest.New(t)
			code, out, stderr := runScoreCLI(t, agentLine+"\n"+noTools+"\n"+chat+"\n", append(judgeFlags(srv, tc.scorer), "--reason-mode", "summary")...)
			require.Equal(t, exitOK, code, stderr)
			require.Len(t, out, 3)
			for i, want := range tc.labels {
				assert.Equal(t, want, out[i].Label, "line %d: %s", i+1, out[i].Reason)
			}
			assert.Equal(t, "run-1", out[0].Metadata["id"])
			assert.Contains(t, out[2].Reason, "has no trajectory")
			assert.Len(t, srv.Calls(), tc.calls)
			seen := false
			for _, c := range srv.Calls() {
				seen = seen || strings.Contains(c.Text(), `{"step":4,"kind":"tool","call":2,"tool":"book","error":"payment declined"}`)
			}
			assert.True(t, seen, "the trajectory reaches the judge")
		})
	}
}

func TestScoreChecksTrajectoryRules(t *testing.T) {
	rules := writeRules(t, `[{"type": "tool_errors"}, {"type": "forbidden_tools", "tools": ["refund"]}, {"type": "words", "max": 10}]`)
	code, out, errOut := runScoreCLI(t, agentLine+"\n"+`{"output": "short"}`+"\n", "--scorer", "checks", "--rules", rules)
	require.Equal(t, exitOK, code, errOut)
	require.Len(t, out, 2)
	assert.Equal(t, "fail", out[0].Label)
	assert.Equal(t, 0.67, *out[0].Score, "rounded to two decimals")
	assert.Contains(t, out[0].Reason, "#0 tool_errors (1 tool execution ended in error (book 1), want at most 0)")
	assert.Equal(t, "pass", out[1].Label, "the trajectory rules are skipped without a trajectory")
	assert.Contains(t, out[1].Reason, "skipped (no trajectory): #0 tool_errors, #1 forbidden_tools")

	bad := writeRules(t, `[{"type": "max_steps"}]`)
	code, _, errOut = runScoreCLI(t, agentLine+"\n", "--scorer", "checks", "--rules", bad)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "rules::0::max: missing")
}

func TestScoreRejectsBadTrajectories(t *testing.T) {
	tests := []struct {
		name, line, wantErr string
	}{
		{"misspelled step field", `{"output": "a", "trajectory": {"steps": [{"kind": "tool", "tool_name": "x"}]}}`, `unknown field "tool_name"`},
		{"unknown kind", `{"output": "a", "trajectory": {"steps": [{"kind": "thought"}]}}`, `trajectory step 0: unknown kind "thought"`},
		{"arguments as an object", `{"output": "a", "trajectory": {"steps": [{"kind": "tool", "tool": "x", "arguments": {"q": 1}}]}}`, "cannot unmarshal object"},
		{"steps as a bare list", `{"output": "a", "trajectory": [{"kind": "tool"}]}`, "cannot unmarshal array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := scoringtest.New(t)
			code, out, stderr := runScoreCLI(t, tt.line+"\n"+agentLine+"\n", judgeFlags(srv, "tool_use")...)
			assert.Equal(t, exitCasesErrored, code, stderr)
			require.Len(t, out, 2)
			require.NotNil(t, out[0].Error)
			assert.Contains(t, *out[0].Error, tt.wantErr)
			assert.Equal(t, "invalid_case", *out[0].ErrorType)
			assert.Equal(t, "pass", out[1].Label, "the next line is still scored")
		})
	}
}

// TestREADMETrajectoryExample runs the trajectory example of the README
// through the CLI, so the documented line stays a valid case.
func TestREADMETrajectoryExample(t *testing.T) {
	srv := scoringtest.New(t)
	code, out, stderr := runScoreCLI(t, readmeExample(t, "trajectory")+"\n", judgeFlags(srv, "tool_use")...)
	require.Equal(t, exitOK, code, stderr)
	require.Len(t, out, 1)
	assert.NotEqual(t, "not_scorable", out[0].Label, out[0].Reason)
}

// readmeExample returns the README's JSON example marked "<!-- name
// example -->" as one line.
func readmeExample(t *testing.T, name string) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("README.md"))
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(readme), "<!-- "+name+" example -->\n```json\n")
	require.True(t, ok, "README has no %s example", name)
	example, _, ok := strings.Cut(rest, "\n```")
	require.True(t, ok)
	var c map[string]any
	require.NoError(t, json.Unmarshal([]byte(example), &c), "the example is one JSON object")
	line, err := json.Marshal(c)
	require.NoError(t, err)
	return string(line)
}

// TestScoreTrajectoryTools: a case may list the tools the agent had; a run
// that never called the one its request needed is judged and fails
// tool_use, where without the list it is not scorable.
func TestScoreTrajectoryTools(t *testing.T) {
	withTools := `{"input": "Where is my order 7?", "output": "It is on its way.", "trajectory": {"steps": [{"kind": "generation", "output": "It is on its way."}], ` +
		`"tools": [{"name": "get_order_status", "description": "Looks up an order."}, {"name": "send_email"}]}}`
	withoutTools := `{"input": "Where is my order 7?", "output": "It is on its way.", "trajectory": {"steps": [{"kind": "generation", "output": "It is on its way."}]}}`
	srv := scoringtest.New(t)
	code, out, stderr := runScoreCLI(t, withTools+"\n"+withoutTools+"\n", append(judgeFlags(srv, "tool_use"), "--reason-mode", "summary")...)
	require.Equal(t, exitOK, code, stderr)
	require.Len(t, out, 2)
	assert.Equal(t, "fail", out[0].Label, out[0].Reason)
	assert.Contains(t, out[0].Reason, "get_order_status")
	assert.Equal(t, "not_scorable", out[1].Label)
	require.Len(t, srv.Calls(), 1)
	assert.Equal(t, []string{`{"tool":"get_order_status","description":"Looks up an order."}`, `{"tool":"send_email"}`}, srv.Calls()[0].Block("TOOLS"))

	code, out, _ = runScoreCLI(t, `{"output": "a", "trajectory": {"steps": [{"kind": "generation"}], "tools": [{"tool": "x"}]}}`+"\n", judgeFlags(srv, "tool_use")...)
	assert.Equal(t, exitCasesErrored, code)
	require.Len(t, out, 1)
	require.NotNil(t, out[0].Error)
	assert.Contains(t, *out[0].Error, `unknown field "tool"`)
}

// TestScoreTaskCompletionRequirementsOncePerRequest: lines that repeat a
// request share one requirements call.
func TestScoreTaskCompletionRequirementsOncePerRequest(t *testing.T) {
	srv := scoringtest.New(t)
	code, out, stderr := runScoreCLI(t, agentLine+"\n"+agentLine+"\n", append(judgeFlags(srv, "task_completion"), "--reason-mode", "summary")...)
	require.Equal(t, exitOK, code, stderr)
	require.Len(t, out, 2)
	steps := map[string]int{}
	for _, c := range srv.Calls() {
		steps[c.Step]++
	}
	assert.Equal(t, map[string]int{"task_completion_task": 1, "task_completion_verdicts": 2}, steps)
	assert.Equal(t, out[0].Label, out[1].Label)
}
