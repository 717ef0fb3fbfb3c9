package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// result is an output line as a user reads it.
type result struct {
	Line      int               `json:"line"`
	Scorer    string            `json:"scorer"`
	Score     *float64          `json:"score"`
	Label     string            `json:"label"`
	Reason    string            `json:"reason"`
	Error     *string           `json:"error"`
	ErrorType *string           `json:"error_type"`
	Steps     json.RawMessage   `json:"steps"`
	Usage     map[string]int64  `json:"usage"`
	Metadata  map[string]string `json:"metadata"`
	Truncated bool              `json:"truncated"`
}

func runScoreCLI(t *testing.T, stdin string, args ...string) (int, []result, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"score"}, args...), strings.NewReader(stdin), &stdout, &stderr)
	var out []result
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r result
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r), "output line %q", sc.Text())
		out = append(out, r)
	}
	return code, out, stderr.String()
}

func jsonl(cases ...any) string {
	var b strings.Builder
	for _, c := range cases {
		if s, ok := c.(string); ok { // raw line
			b.WriteString(s + "\n")
			continue
		}
		j, _ := json.Marshal(c)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

func judgeFlags(srv *scoringtest.Server, scorer string) []string {
	return []string{"--scorer", scorer, "--judge-endpoint", srv.URL, "--model", "fake-judge"}
}

func TestScoreKeepsInputOrderAndReportsBadLines(t *testing.T) {
	srv := scoringtest.New(t)
	var mu sync.Mutex
	inflight, maxInflight := 0, 0
	srv.Handle(func(c scoringtest.Call) scoringtest.Reply {
		mu.Lock()
		inflight++
		maxInflight = max(maxInflight, inflight)
		mu.Unlock()
		// Earlier cases answer later, so completion order differs from input order.
		for i := range 10 {
			if strings.Contains(c.Text(), fmt.Sprintf("case %d.", i)) {
				time.Sleep(time.Duration(10-i) * time.Millisecond)
			}
		}
		mu.Lock()
		inflight--
		mu.Unlock()
		return scoringtest.DefaultReply(c)
	})
	var lines []any
	for i := range 8 {
		switch i {
		case 2:
			lines = append(lines, `{"input": "q", "output": }`)
		case 5:
			lines = append(lines, "   ")
		default:
			out := fmt.Sprintf("I think this is case %d. It is fine.", i)
			if i == 4 {
				out = fmt.Sprintf("Women are too emotional to lead, says case %d. It is fine.", i)
			}
			lines = append(lines, map[string]any{"input": "q", "output": out, "metadata": map[string]string{"id": fmt.Sprint(i)}})
		}
	}
	code, out, stderr := runScoreCLI(t, jsonl(lines...), append(judgeFlags(srv, "bias"), "--concurrency", "4")...)
	require.Equal(t, exitCasesErrored, code, "one malformed line: %s", stderr)
	assert.Equal(t, "llmeval score: 7 results: 6 pass, 0 fail, 0 not_scorable, 1 error\n", stderr,
		"only the summary: no progress when stderr is not a terminal")

	require.Len(t, out, 7, "the blank line is skipped, the malformed one is reported")
	var gotLines []int
	for _, r := range out {
		gotLines = append(gotLines, r.Line)
	}
	assert.Equal(t, []int{1, 2, 3, 4, 5, 7, 8}, gotLines)
	for _, r := range out {
		if r.Line == 3 {
			assert.Equal(t, "error", r.Label)
			assert.Nil(t, r.Score)
			require.NotNil(t, r.Error)
			assert.Contains(t, *r.Error, "line 3")
			assert.Equal(t, "invalid_case", *r.ErrorType)
			continue
		}
		assert.Equal(t, fmt.Sprint(r.Line-1), r.Metadata["id"], "results follow input order")
		assert.Equal(t, "bias", r.Scorer)
		require.NotNil(t, r.Score, "line %d: %+v", r.Line, r)
		assert.Nil(t, r.Error)
		assert.Equal(t, int64(3), r.Usage["llm_calls"], "opinions, results, reason")
		assert.Positive(t, r.Usage["prompt_tokens"])
		assert.Contains(t, string(r.Steps), "preprocessStepResult")
		if r.Line == 5 {
			assert.Equal(t, 0.5, *r.Score)
		} else {
			assert.Equal(t, 0.0, *r.Score)
			assert.Equal(t, "pass", r.Label)
		}
	}
	assert.LessOrEqual(t, maxInflight, 4, "concurrency bounds the judge calls in flight")
}

func TestScoreHallucination(t *testing.T) {
	srv := scoringtest.New(t)
	in := jsonl(
		map[string]any{"input": "Tell me about Paris.", "output": "Paris is the capital of France. Paris has 9 million inhabitants.", "context": []string{"Paris is the capital of France. It has 2.1 million inhabitants."}},
		map[string]any{"input": "Tell me about Paris.", "output": "Paris is the capital of France."},
		map[string]any{"input": "Tell me about Paris.", "output": "Paris is the capital of France.", "context": "Paris is the capital of France."},
	)
	code, out, stderr := runScoreCLI(t, in, append(judgeFlags(srv, "hallucination"), "--structured-outputs", "off")...)
	require.Equal(t, exitOK, code, stderr)
	require.Len(t, out, 3)

	require.NotNil(t, out[0].Score)
	assert.Equal(t, 0.5, *out[0].Score, "one of two claims is unsupported")
	assert.Equal(t, "pass", out[0].Label)
	assert.NotEmpty(t, out[0].Reason)

	assert.Equal(t, "not_scorable", out[1].Label, "no context")
	assert.Nil(t, out[1].Score)
	assert.NotEmpty(t, out[1].Reason)

	require.NotNil(t, out[2].Score, "a single context string is accepted")
	assert.Equal(t, 0.0, *out[2].Score)

	for _, c := range srv.Calls() {
		assert.Nil(t, c.Request.ResponseFormat, "--structured-outputs off is passed to the judge")
	}
}

// TestScoreScorerList: a list of scorers scores every case with each, one
// result line per case and scorer, in case order then list order.
func TestScoreScorerList(t *testing.T) {
	srv := scoringtest.New(t)
	in := jsonl(
		map[string]any{"input": "Tell me about Paris.", "output": "Paris is the capital of France.", "context": "Paris is the capital of France."},
		map[string]any{"input": "Tell me about Lyon."}, // no output: invalid for both
		map[string]any{"input": "Tell me about Paris.", "output": "Paris is the capital of France."},
	)
	code, out, stderr := runScoreCLI(t, in, append(judgeFlags(srv, "hallucination, bias"), "--allow-errors")...)
	require.Equal(t, exitOK, code, stderr)
	require.Len(t, out, 6)
	var got []string
	for _, r := range out {
		got = append(got, fmt.Sprintf("%d %s %s", r.Line, r.Scorer, r.Label))
	}
	assert.Equal(t, []string{
		"1 hallucination pass", "1 bias pass",
		"2 hallucination error", "2 bias error",
		"3 hallucination not_scorable", "3 bias pass",
	}, got)
	assert.Contains(t, stderr, "6 results: 3 pass, 0 fail, 1 not_scorable, 2 error")
}

func TestScorePromptAlignmentInstructionsFile(t *testing.T) {
	srv := scoringtest.New(t)
	file := filepath.Join(t.TempDir(), "instructions.txt")
	require.NoError(t, os.WriteFile(file, []byte("Answer in English\n\n  Be brief  \n"), 0o600))
	in := jsonl(
		map[string]any{"input": "hi", "output": "Hello!"},
		map[string]any{"input": "hi", "output": "Hello!", "instructions": []string{"Greet the user"}},
	)
	code, out, stderr := runScoreCLI(t, in, append(judgeFlags(srv, "prompt_alignment"), "--instructions-file", file, "--concurrency", "1", "--no-reason")...)
	require.Equal(t, exitOK, code, stderr)
	require.Len(t, out, 2)

	calls := srv.Calls()
	require.Len(t, calls, 2, "--no-reason: one call per case")
	assert.Contains(t, calls[0].Text(), `"Answer in English"`)
	assert.Contains(t, calls[0].Text(), `"Be brief"`)
	assert.NotContains(t, calls[1].Text(), "Answer in English", "a case's own instructions win")
	assert.Contains(t, calls[1].Text(), `"Greet the user"`)

	var steps struct {
		Analyze struct {
			Verdicts []json.RawMessage `json:"verdicts"`
		} `json:"analyzeStepResult"`
	}
	require.NoError(t, json.Unmarshal(out[0].Steps, &steps))
	assert.Len(t, steps.Analyze.Verdicts, 2)
	for _, r := range out {
		require.NotNil(t, r.Score)
		assert.Equal(t, 1.0, *r.Score)
		assert.Equal(t, "pass", r.Label)
	}
}

func TestScoreThresholdAndStrict(t *testing.T) {
	in := jsonl(map[string]any{"input": "q", "output": "Women are too emotional to lead. Tea is nice."})
	tests := []struct {
		name      string
		flags     []string
		wantScore float64
		wantLabel string
	}{
		{"default threshold", nil, 0.5, "pass"},
		{"lower threshold", []string{"--threshold", "0.4"}, 0.5, "fail"},
		{"scale", []string{"--scale", "10"}, 5, "pass"},
		{"strict", []string{"--strict"}, 1, "fail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := scoringtest.New(t)
			code, out, stderr := runScoreCLI(t, in, append(judgeFlags(srv, "bias"), tt.flags...)...)
			require.Equal(t, exitOK, code, stderr)
			require.Len(t, out, 1)
			require.NotNil(t, out[0].Score, "%+v", out[0])
			assert.Equal(t, tt.wantScore, *out[0].Score)
			assert.Equal(t, tt.wantLabel, out[0].Label)
		})
	}
}

func TestScoreJudgeFailuresAreResults(t *testing.T) {
	const key = "sk-cli-SECRET-987"
	t.Setenv("LLMEVAL_TEST_KEY", key)
	srv := scoringtest.New(t)
	srv.Script(scoringtest.AnyStep, scoringtest.Status(401, `{"error":{"message":"bad key `+key+`"}}`))
	in := jsonl(map[string]any{"input": "q", "output": "An opinion. Another."})
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"score"}, append(judgeFlags(srv, "bias"), "--api-key-env", "LLMEVAL_TEST_KEY", "--verbose")...), strings.NewReader(in), &stdout, &stderr)
	require.Equal(t, exitCasesErrored, code, "a rejected key fails the run: %s", stderr.String())
	assert.NotContains(t, stderr.String(), key)
	var r result
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &r))
	assert.Equal(t, "error", r.Label)
	require.NotNil(t, r.ErrorType)
	assert.Equal(t, "judge_auth", *r.ErrorType)
	assert.Nil(t, r.Score)
	assert.NotContains(t, stdout.String()+stderr.String(), key)
	assert.Contains(t, string(r.Steps), "preprocessPrompt", "--verbose keeps the prompts")
	assert.Equal(t, "Bearer "+key, srv.Calls()[0].Header.Get("Authorization"))
}

func TestScoreUsageErrors(t *testing.T) {
	endpoint := []string{"--judge-endpoint", "http://127.0.0.1:1/v1"}
	base := slices.Concat([]string{"--scorer", "bias", "--model", "m"}, endpoint)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown scorer", append([]string{"--scorer", "fairness", "--model", "m"}, endpoint...), `unknown scorer "fairness": want one of bias, hallucination, prompt_alignment, task_completion, tool_use, answer_relevancy, context_relevance, toxicity, conversation_completeness, knowledge_retention, role_adherence, conversation_relevancy, criteria, checks`},
		{"misspelt scorer", append([]string{"--scorer", "halucination", "--model", "m"}, endpoint...), `--scorer: unknown scorer "halucination" (did you mean hallucination?)`},
		{"misspelt scorer in a list", append([]string{"--scorer", "bias,Prompt-Alignment", "--model", "m"}, endpoint...), `unknown scorer "Prompt-Alignment" (did you mean prompt_alignment?)`},
		{"deepeval's name of a scorer", append([]string{"--scorer", "turn_relevancy", "--model", "m"}, endpoint...), `unknown scorer "turn_relevancy" (did you mean conversation_relevancy?)`},
		{"checks in a list", append([]string{"--scorer", "bias,checks", "--model", "m"}, endpoint...), "checks needs no judge and is scored alone"},
		{"scorer twice", append([]string{"--scorer", "bias,bias", "--model", "m"}, endpoint...), `scorer "bias" is listed twice`},
		{"missing scorer", append([]string{"--model", "m"}, endpoint...), "missing required flag --scorer"},
		{"missing endpoint and model", []string{"--scorer", "bias"}, "missing required flag --judge-endpoint, --model"},
		{"undefined flag", slices.Concat(base, []string{"--colour"}), "-colour"},
		{"bad concurrency", slices.Concat(base, []string{"--concurrency", "0"}), "--concurrency"},
		{"bad structured outputs", slices.Concat(base, []string{"--structured-outputs", "xml"}), "--structured-outputs"},
		{"bad threshold", slices.Concat(base, []string{"--threshold", "high"}), "-threshold"},
		{"threshold out of range", slices.Concat(base, []string{"--threshold", "2"}), "threshold"},
		{"bad endpoint", []string{"--scorer", "bias", "--model", "m", "--judge-endpoint", "localhost"}, "endpoint"},
		{"api key env unset", slices.Concat(base, []string{"--api-key-env", "LLMEVAL_SURELY_UNSET_VAR"}), "LLMEVAL_SURELY_UNSET_VAR"},
		{"missing instructions file", slices.Concat(base, []string{"--instructions-file", "/nonexistent/instr.txt"}), "--instructions-file"},
		{"positional argument", slices.Concat(base, []string{"cases.jsonl"}), `unexpected argument "cases.jsonl"`},
		{"criteria flag on another scorer", slices.Concat(base, []string{"--criteria", "polite"}), "--criteria only apply to --scorer criteria"},
		{"criteria without name", slices.Concat([]string{"--scorer", "criteria", "--model", "m", "--criteria", "polite"}, endpoint), "--criteria-name: must be set"},
		{"criteria without text", slices.Concat([]string{"--scorer", "criteria", "--model", "m", "--criteria-name", "polite"}, endpoint), "--criteria: must be set"},
		{"criteria bad field", slices.Concat([]string{"--scorer", "criteria", "--model", "m", "--criteria-name", "p", "--criteria", "c", "--criteria-fields", "input,tools"}, endpoint), `--criteria-fields: unknown field "tools"`},
		{"criteria bad kind", slices.Concat([]string{"--scorer", "criteria", "--model", "m", "--criteria-name", "p", "--criteria", "c", "--criteria-verdict", "stars"}, endpoint), `--criteria-verdict: unknown verdict "stars"`},
		{"criteria built-in name", slices.Concat([]string{"--scorer", "criteria", "--model", "m", "--criteria-name", "bias", "--criteria", "c"}, endpoint), "--criteria-name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := runScoreCLI(t, `{"input":"q","output":"a"}`+"\n", tt.args...)
			assert.Equal(t, exitUsage, code)
			assert.Contains(t, stderr, tt.want)
			assert.Empty(t, out)
		})
	}
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, fmt.Errorf("disk full") }

func TestScoreWriteFailureExitsNonZero(t *testing.T) {
	srv := scoringtest.New(t)
	var stderr bytes.Buffer
	in := jsonl(map[string]any{"input": "q", "output": "a."}, map[string]any{"input": "q", "output": "b."})
	code := run(append([]string{"score"}, judgeFlags(srv, "bias")...), strings.NewReader(in), failingWriter{}, &stderr)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr.String(), "disk full")
}

func TestScoreUsageCarriesRetries(t *testing.T) {
	srv := scoringtest.New(t)
	// A short Retry-After keeps the retry's wait small.
	srv.Script("bias_opinions", scoringtest.Status(503, "").WithRetryAfter("0.01"))
	code, out, stderr := runScoreCLI(t, jsonl(map[string]any{"input": "q", "output": "Tea is lovely."}), judgeFlags(srv, "bias")...)
	require.Equal(t, exitOK, code, stderr)
	require.Len(t, out, 1)
	assert.Equal(t, "pass", out[0].Label)
	assert.Equal(t, int64(1), out[0].Usage["retries"], "the 503 was retried once")
	assert.Equal(t, int64(3), out[0].Usage["llm_calls"], "retries are not calls")
	assert.Len(t, srv.Calls(), 4)
}

func TestScoreRejectsUnusableLines(t *testing.T) {
	tests := []struct {
		name, line, wantErr string
	}{
		{"misspelled output", `{"input": "q", "outptu": "a"}`, `unknown field "outptu"`},
		{"misspelled context", `{"output": "a", "contxt": ["doc"]}`, `unknown field "contxt"`},
		{"empty object", `{}`, `missing field "output"`},
		{"two values", `{"output": "a"} {"output": "b"}`, "more than one JSON value"},
		{"too long", `{"output": "` + strings.Repeat("x", 200) + `"}`, "longer than 100 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := scoringtest.New(t)
			in := tt.line + "\n" + `{"output": "I think it is fine."}` + "\n"
			code, out, stderr := runScoreCLI(t, in, append(judgeFlags(srv, "bias"), "--max-line-bytes", "100")...)
			assert.Equal(t, exitCasesErrored, code, stderr)
			require.Len(t, out, 2)
			assert.Equal(t, "error", out[0].Label)
			require.NotNil(t, out[0].Error)
			assert.Contains(t, *out[0].Error, tt.wantErr)
			assert.Equal(t, "invalid_case", *out[0].ErrorType)
			assert.NotEqual(t, "error", out[1].Label, "the next line is still scored")
		})
	}
}

func TestScoreAllowErrors(t *testing.T) {
	srv := scoringtest.New(t)
	code, out, stderr := runScoreCLI(t, "{}\n", append(judgeFlags(srv, "bias"), "--allow-errors")...)
	assert.Equal(t, exitOK, code)
	require.Len(t, out, 1)
	assert.Equal(t, "error", out[0].Label)
	assert.Contains(t, stderr, "1 results: 0 pass, 0 fail, 0 not_scorable, 1 error")
}

// TestScoreEmptyOutputIsZeroHallucination: an empty output claims nothing,
// so it scores 0 and passes, with or without context, and costs no call.
func TestScoreEmptyOutputIsZeroHallucination(t *testing.T) {
	srv := scoringtest.New(t)
	in := jsonl(
		map[string]any{"output": "", "context": []string{"doc"}},
		map[string]any{"output": "  \n", "input": "What did the tool return?"},
	)
	code, out, stderr := runScoreCLI(t, in, judgeFlags(srv, "hallucination")...)
	assert.Equal(t, exitOK, code, stderr)
	require.Len(t, out, 2)
	for _, r := range out {
		assert.Equal(t, "pass", r.Label)
		require.NotNil(t, r.Score)
		assert.Equal(t, 0.0, *r.Score)
		assert.Contains(t, r.Reason, "the output is empty")
	}
	assert.Empty(t, srv.Calls(), "no judge call")
	assert.Contains(t, stderr, "2 results: 2 pass, 0 fail, 0 not_scorable, 0 error")
}

func TestScoreCapsInput(t *testing.T) {
	long := strings.Repeat("word ", 2000) // 10,000 characters
	tests := []struct {
		name          string
		flags         []string
		wantTruncated bool
		maxPrompt     int
	}{
		{"default cap keeps short text", nil, false, 0},
		{"flag cap cuts", []string{"--max-input-chars", "500"}, true, 2000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := scoringtest.New(t)
			var mu sync.Mutex
			longest := 0
			srv.Handle(func(c scoringtest.Call) scoringtest.Reply {
				mu.Lock()
				longest = max(longest, len(c.Text()))
				mu.Unlock()
				return scoringtest.DefaultReply(c)
			})
			code, out, stderr := runScoreCLI(t, jsonl(map[string]any{"output": long}), append(judgeFlags(srv, "bias"), tt.flags...)...)
			require.Equal(t, exitOK, code, stderr)
			require.Len(t, out, 1)
			assert.Equal(t, tt.wantTruncated, out[0].Truncated)
			if tt.maxPrompt > 0 {
				mu.Lock()
				defer mu.Unlock()
				assert.Less(t, longest, len(long), "the judge never sees the whole output")
			}
		})
	}
}

func TestScoreCriteria(t *testing.T) {
	srv := scoringtest.New(t)
	in := jsonl(
		map[string]any{"input": "How do I reset my password?", "output": "Open Settings, then Security."},
		map[string]any{"input": "How do I reset my password?", "output": ""},
		map[string]any{"input": "q", "output": "a"},
	)
	args := append(judgeFlags(srv, "criteria"),
		"--criteria-name", "helpful_steps", "--criteria", "The response gives steps the user can follow.",
		"--criteria-step", "Find the steps.", "--criteria-step", "Check each can be followed.",
		"--criteria-fields", "input, output", "--criteria-verdict", "binary", "--no-reason")
	code, out, stderr := runScoreCLI(t, in, args...)
	require.Equal(t, exitOK, code, stderr)
	require.Len(t, out, 3)
	for _, r := range out {
		assert.Equal(t, "helpful_steps", r.Scorer)
	}
	require.NotNil(t, out[0].Score)
	assert.Equal(t, 1.0, *out[0].Score)
	assert.Equal(t, "pass", out[0].Label)
	require.NotNil(t, out[1].Score)
	assert.Equal(t, 0.0, *out[1].Score, "the demo judge fails an empty output")
	assert.Equal(t, "fail", out[1].Label)

	calls := srv.Calls()
	require.Len(t, calls, 3, "one judge call per case with --no-reason")
	for _, c := range calls {
		assert.Equal(t, "criteria_binary", c.Step)
		sys := c.Request.Messages[0].Content
		assert.Contains(t, sys, "The response gives steps the user can follow.")
		assert.Contains(t, sys, "1. Find the steps.\n2. Check each can be followed.")
	}
}

func TestScoreReasonMode(t *testing.T) {
	in := jsonl(map[string]any{"input": "hi", "output": "Hello!", "instructions": []string{"Greet the user", "Answer in French"}})
	tests := []struct {
		mode      string
		wantCalls int
	}{
		{mode: "llm", wantCalls: 2},
		{mode: "summary", wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			srv := scoringtest.New(t)
			code, out, stderr := runScoreCLI(t, in, append(judgeFlags(srv, "prompt_alignment"), "--reason-mode", tt.mode)...)
			require.Equal(t, exitOK, code, stderr)
			require.Len(t, out, 1)
			assert.NotEmpty(t, out[0].Reason)
			assert.Len(t, srv.Calls(), tt.wantCalls)
		})
	}
	t.Run("unknown", func(t *testing.T) {
		srv := scoringtest.New(t)
		code, _, stderr := runScoreCLI(t, in, append(judgeFlags(srv, "prompt_alignment"), "--reason-mode", "poem")...)
		assert.Equal(t, exitUsage, code)
		assert.Contains(t, stderr, `--reason-mode "poem"`)
		assert.Empty(t, srv.Calls())
	})
}
