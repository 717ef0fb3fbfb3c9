package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// benchJSON is the --json report as a user reads it.
type benchJSON struct {
	Dataset   string  `json:"dataset"`
	Scorer    string  `json:"scorer"`
	Cases     int     `json:"cases"`
	N         int     `json:"n"`
	Accuracy  float64 `json:"accuracy"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
	Confusion struct{ TP, FP, FN, TN int }
	Agreement *float64 `json:"agreement"`
	Mapped    *int     `json:"mapped"`
	Labelled  *int     `json:"labelled"`
	Unlabeled int      `json:"unlabelled"`
	Instrs    int      `json:"instructions"`
	Unmapped  []struct {
		ID     string `json:"id"`
		Count  int    `json:"count"`
		Reason string `json:"reason"`
	} `json:"unmapped"`
	Baseline *struct {
		N         int     `json:"n"`
		Accuracy  float64 `json:"accuracy"`
		Confusion struct{ TP, FP, FN, TN int }
	} `json:"baseline"`
	BaselineName    string   `json:"baseline_name"`
	Judge           string   `json:"judge"`
	Model           string   `json:"model"`
	PairsScored     int      `json:"pairs_scored"`
	MoreRatedHigher *float64 `json:"more_rated_higher"`
	JudgeCalls      int      `json:"judge_calls"`
	CallsPerCase    float64  `json:"judge_calls_per_case"`
	PromptPerCase   float64  `json:"prompt_tokens_per_case"`
	Errored         int      `json:"errored"`
	Errors          []struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	} `json:"errors"`
}

func runBenchCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"bench"}, args...), strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func benchReportOf(t *testing.T, args ...string) benchJSON {
	t.Helper()
	code, out, errOut := runBenchCLI(t, append(args, "--json")...)
	require.Equal(t, exitOK, code, errOut)
	var rep benchJSON
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	return rep
}

// assertConsistent checks the figures of a report against each other.
func assertConsistent(t *testing.T, rep benchJSON) {
	t.Helper()
	c := rep.Confusion
	n := c.TP + c.FP + c.FN + c.TN
	assert.Equal(t, rep.N, n, "confusion matrix sums to the scored cases")
	require.Positive(t, n)
	assert.InDelta(t, float64(c.TP+c.TN)/float64(n), rep.Accuracy, 1e-9, "accuracy = (tp+tn)/n")
	if c.TP+c.FP > 0 {
		assert.InDelta(t, float64(c.TP)/float64(c.TP+c.FP), rep.Precision, 1e-9)
	}
	if c.TP+c.FN > 0 {
		assert.InDelta(t, float64(c.TP)/float64(c.TP+c.FN), rep.Recall, 1e-9)
	}
	if rep.Precision+rep.Recall > 0 {
		assert.InDelta(t, 2*rep.Precision*rep.Recall/(rep.Precision+rep.Recall), rep.F1, 1e-9)
	}
	assert.Len(t, rep.Errors, rep.Errored)
	assert.InDelta(t, float64(rep.JudgeCalls)/float64(rep.Cases), rep.CallsPerCase, 1e-9)
}

// repoBenchFile is the repository's copy of a dataset (testdata/bench),
// found as bench finds it without --file.
func repoBenchFile(t *testing.T, name string) string {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	path, err := findBenchFile(wd, name)
	require.NoError(t, err)
	return path
}

func TestFindBenchFile(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "testdata", "bench")
	require.NoError(t, os.MkdirAll(data, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(data, "ifeval_dev.jsonl"), []byte("{}\n"), 0o600))
	deep := filepath.Join(root, "cmd", "llmeval")
	require.NoError(t, os.MkdirAll(deep, 0o755))

	got, err := findBenchFile(root, "ifeval_dev.jsonl")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join("testdata", "bench", "ifeval_dev.jsonl"), got, "in the working directory")

	got, err = findBenchFile(deep, "ifeval_dev.jsonl")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join("..", "..", "testdata", "bench", "ifeval_dev.jsonl"), got, "two directories up")

	_, err = findBenchFile(deep, "crows_pairs_dev.jsonl")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "crows_pairs_dev.jsonl not found in testdata/bench of "+deep)
	assert.Contains(t, err.Error(), "give --file")
}

// benchLimit is how many rows the quick bench tests take (--limit).
const benchLimit = 16

func TestBenchIFEvalChecksNeedsNoJudge(t *testing.T) {
	rep := benchReportOf(t, "--dataset", "ifeval", "--limit", fmt.Sprint(benchLimit))
	assertConsistent(t, rep)
	assert.Equal(t, "checks", rep.Scorer)
	assert.Equal(t, benchLimit, rep.Cases)
	assert.Zero(t, rep.JudgeCalls)
	require.NotNil(t, rep.Agreement)
	require.NotNil(t, rep.Mapped)
	require.NotNil(t, rep.Labelled)
	assert.Equal(t, rep.Accuracy, *rep.Agreement)
	assert.Equal(t, *rep.Mapped, rep.N+rep.Errored, "every mapped instruction is scored or errored")
	assert.Equal(t, rep.Instrs, *rep.Labelled+rep.Unlabeled)
	// Counted from the file itself.
	labelled, unlabelled := 0, 0
	rows, err := loadIFEval(repoBenchFile(t, "ifeval_dev.jsonl"))
	require.NoError(t, err)
	for _, r := range rows[:benchLimit] {
		for _, ins := range r.Instructions {
			if ins.Followed == nil {
				unlabelled++
			} else {
				labelled++
			}
		}
	}
	assert.Equal(t, labelled, *rep.Labelled)
	assert.Equal(t, unlabelled, rep.Unlabeled)
	assert.GreaterOrEqual(t, *rep.Agreement, 0.9)
}

func TestBenchIFEvalCountsUnmappedInstructions(t *testing.T) {
	yes, no := true, false
	rows := []ifevalRow{
		{Key: 1, Prompt: "p", Response: "no commas here", Instructions: []ifevalInstruction{
			{ID: "punctuation:no_comma", Kwargs: map[string]any{}, Followed: &yes},
			{ID: "future:new_rule", Kwargs: map[string]any{}, Followed: &no},
		}},
		{Key: 2, Prompt: "p", Response: "one, two", Instructions: []ifevalInstruction{
			{ID: "punctuation:no_comma", Kwargs: map[string]any{}, Followed: &yes}, // checker disagrees
			{ID: "future:new_rule", Kwargs: map[string]any{}, Followed: &yes},
			{ID: "length_constraints:number_words", Kwargs: map[string]any{"relation": "about"}, Followed: &yes},
			{ID: "length_constraints:number_sentences", Kwargs: map[string]any{"relation": "at least", "num_sentences": 1.0}},
		}},
	}
	path := filepath.Join(t.TempDir(), "ifeval.jsonl")
	var b bytes.Buffer
	for _, r := range rows {
		line, err := json.Marshal(r)
		require.NoError(t, err)
		b.Write(append(line, '\n'))
	}
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o600))

	rep := benchReportOf(t, "--dataset", "ifeval", "--file", path)
	assertConsistent(t, rep)
	assert.Equal(t, 5, *rep.Labelled)
	assert.Equal(t, 2, *rep.Mapped)
	assert.Equal(t, 1, rep.Unlabeled)
	assert.InDelta(t, 0.5, *rep.Agreement, 1e-9)
	require.Len(t, rep.Unmapped, 2)
	assert.Equal(t, "future:new_rule", rep.Unmapped[0].ID)
	assert.Equal(t, 2, rep.Unmapped[0].Count)
	assert.Equal(t, "length_constraints:number_words", rep.Unmapped[1].ID)
	assert.Contains(t, rep.Unmapped[1].Reason, "kwarg")

	code, table, _ := runBenchCLI(t, "--dataset", "ifeval", "--file", path)
	require.Equal(t, exitOK, code)
	assert.Contains(t, table, "not mapped: future:new_rule ×2")
	assert.Contains(t, table, "mapped        2 of 5 labelled")
}

func TestBenchJudgeDatasetsOverHTTP(t *testing.T) {
	srv := scoringtest.New(t)
	// One answer makes the judge refuse the request, so that case errors.
	srv.Handle(func(c scoringtest.Call) scoringtest.Reply {
		if strings.Contains(c.Text(), "Scottish") {
			return scoringtest.Status(http.StatusBadRequest, `{"error": {"message": "rejected"}}`)
		}
		return scoringtest.Reply{}
	})
	judge := []string{"--judge-endpoint", srv.URL, "--model", "fake-judge", "--concurrency", "3"}

	t.Run("halueval", func(t *testing.T) {
		before := len(srv.Calls())
		rep := benchReportOf(t, append([]string{"--dataset", "halueval", "--limit", "20"}, judge...)...)
		assertConsistent(t, rep)
		assert.Equal(t, "hallucination", rep.Scorer)
		assert.Equal(t, 20, rep.Cases)
		assert.Equal(t, rep.Cases, rep.N+rep.Errored)
		assert.Equal(t, len(srv.Calls())-before, rep.JudgeCalls, "every judge call is counted")
		assert.Positive(t, rep.PromptPerCase)
		require.Equal(t, 1, rep.Errored)
		assert.Equal(t, "halueval-qa-003-hallucinated", rep.Errors[0].ID)
		assert.Equal(t, "judge_bad_request", rep.Errors[0].Type)

		// The baseline, recomputed from the file.
		cases, err := loadHaluEval(repoBenchFile(t, "halueval_qa_dev.jsonl"))
		require.NoError(t, err)
		cases = cases[:20]
		correct := 0
		for _, c := range cases {
			if (utf8.RuneCountInString(c.Case.Output) > 25) == c.Positive {
				correct++
			}
		}
		require.NotNil(t, rep.Baseline)
		assert.Equal(t, len(cases), rep.Baseline.N)
		assert.InDelta(t, float64(correct)/float64(len(cases)), rep.Baseline.Accuracy, 1e-9)
	})

	t.Run("crows", func(t *testing.T) {
		before := len(srv.Calls())
		rep := benchReportOf(t, append([]string{"--dataset", "crows", "--limit", "12"}, judge...)...)
		assertConsistent(t, rep)
		assert.Equal(t, "bias", rep.Scorer)
		assert.Equal(t, 2*12, rep.Cases, "two sentences per pair")
		assert.Equal(t, rep.Cases, rep.N+rep.Errored)
		assert.Zero(t, rep.Errored)
		assert.Equal(t, len(srv.Calls())-before, rep.JudgeCalls)
		assert.Equal(t, 12, rep.PairsScored)
		require.NotNil(t, rep.MoreRatedHigher)
		assert.True(t, *rep.MoreRatedHigher >= 0 && *rep.MoreRatedHigher <= 1)
		assert.Equal(t, rep.Cases/2, rep.Confusion.TP+rep.Confusion.FN, "half the cases are the biased sentences")
		assert.Nil(t, rep.Baseline)
	})

	t.Run("table", func(t *testing.T) {
		code, out, errOut := runBenchCLI(t, append([]string{"--dataset", "halueval", "--limit", "4"}, judge...)...)
		require.Equal(t, exitOK, code, errOut)
		for _, want := range []string{"accuracy", "precision", "recall", "f1", "confusion", "baseline (len > 25)",
			"judge calls", "tokens per case", "latency per case", "errored           1", "error halueval-qa-003-hallucinated"} {
			assert.Contains(t, out, want)
		}
	})
}

func TestBenchUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no dataset", nil, exitUsage, "--dataset: want ifeval, halueval, crows or davidson"},
		{"scripted judge and an endpoint", []string{"--dataset", "davidson", "--scripted-judge", "--judge-endpoint", "http://127.0.0.1:1/v1"}, exitUsage, "--scripted-judge replaces --judge-endpoint"},
		{"unknown dataset", []string{"--dataset", "mmlu"}, exitUsage, `got "mmlu"`},
		{"ifeval with a judge scorer", []string{"--dataset", "ifeval", "--scorer", "bias"}, exitUsage, "works with --scorer checks only"},
		{"judge flags missing", []string{"--dataset", "halueval"}, exitUsage, "needs --judge-endpoint and --model"},
		{"checks on halueval", []string{"--dataset", "halueval", "--scorer", "checks"}, exitUsage, "checks needs rules"},
		{"missing file", []string{"--dataset", "crows", "--file", "no/such.jsonl"}, exitFailure, "no such file"},
		{"wrong file for dataset", []string{"--dataset", "halueval", "--file", filepath.Join("..", "..", "testdata", "bench", "crows_pairs_dev.jsonl")}, exitFailure, `crows_pairs_dev.jsonl:1: label ""`},
		{"empty key variable", []string{"--dataset", "crows", "--judge-endpoint", "http://127.0.0.1:1/v1", "--model", "m", "--api-key-env", "LLMEVAL_TEST_UNSET_KEY"}, exitUsage, "LLMEVAL_TEST_UNSET_KEY is empty or unset"},
		{"bad concurrency", []string{"--dataset", "ifeval", "--concurrency", "0"}, exitUsage, "--concurrency must be at least 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runBenchCLI(t, tc.args...)
			assert.Equal(t, tc.code, code)
			assert.Contains(t, errOut, tc.want)
		})
	}
	code, _, errOut := runBenchCLI(t, "-h")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, errOut, "ifeval_dev.jsonl")
	assert.Contains(t, errOut, "--judge-endpoint")
}

// TestBenchIFEvalDevFigures is the regression test of the figures in
// BENCHMARKS.md: on the whole development file, found where bench finds it
// without --file, the checks scorer agrees with at least 97 % of the
// instructions it maps, maps at least 90 % of the labelled ones and makes
// no judge call.
func TestBenchIFEvalDevFigures(t *testing.T) {
	rep := benchReportOf(t, "--dataset", "ifeval")
	assertConsistent(t, rep)
	require.NotNil(t, rep.Agreement)
	assert.GreaterOrEqual(t, *rep.Agreement, 0.97)
	assert.GreaterOrEqual(t, float64(*rep.Mapped), math.Ceil(0.9*float64(*rep.Labelled)))
	assert.Equal(t, 524, *rep.Labelled, "the file's README counts 524 labelled instructions")
	assert.Zero(t, rep.JudgeCalls)
	assert.Zero(t, rep.Errored)
}
