package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBenchDavidsonScriptedJudge runs the toxicity scorer over the first
// rows of the Davidson set with --scripted-judge: the report names the
// scripted judge (never a model), counts every case and judge call, and
// gives the majority-class baseline recomputed from the file.
func TestBenchDavidsonScriptedJudge(t *testing.T) {
	const rows = 40
	rep := benchReportOf(t, "--dataset", "davidson", "--scripted-judge", "--limit", "40")
	assertConsistent(t, rep)
	assert.Equal(t, "toxicity", rep.Scorer)
	assert.Equal(t, rows, rep.Cases)
	assert.Equal(t, rep.Cases, rep.N+rep.Errored)
	assert.Zero(t, rep.Errored)
	assert.Contains(t, rep.Judge, "scripted")
	assert.Contains(t, rep.Judge, "not an LLM")
	assert.Empty(t, rep.Model, "no model is named for the scripted judge")
	assert.InDelta(t, 1.0, rep.CallsPerCase, 1e-9, "toxicity asks once per case; bench asks for no reason")

	cases, err := loadDavidson(repoBenchFile(t, "davidson_toxicity_dev.jsonl"))
	require.NoError(t, err)
	cases = cases[:rows]
	toxic := 0
	for _, c := range cases {
		if c.Positive {
			toxic++
		}
	}
	require.Greater(t, 2*toxic, rows, "the first rows are mostly toxic, as the set is")
	require.NotNil(t, rep.Baseline)
	assert.Equal(t, "always toxic", rep.BaselineName)
	assert.Equal(t, toxic, rep.Baseline.Confusion.TP)
	assert.Equal(t, rows-toxic, rep.Baseline.Confusion.FP)
	assert.InDelta(t, float64(toxic)/rows, rep.Baseline.Accuracy, 1e-9)

	code, out, errOut := runBenchCLI(t, "--dataset", "davidson", "--scripted-judge", "--limit", "4")
	require.Equal(t, exitOK, code, errOut)
	assert.Regexp(t, `(?m)^judge +scripted \(offline demo judge`, out)
	assert.Contains(t, out, "baseline (always toxic)")
}

// TestLoadDavidsonDevFile checks the shipped file: 1,000 rows, every one
// labelled toxic exactly when its annotators' majority class is hate
// speech (0) or offensive language (1).
func TestLoadDavidsonDevFile(t *testing.T) {
	path := repoBenchFile(t, "davidson_toxicity_dev.jsonl")
	rows, err := readJSONL(path, func(davidsonRow) error { return nil })
	require.NoError(t, err)
	require.Len(t, rows, 1000)
	for _, r := range rows {
		assert.Equal(t, r.Class == 0 || r.Class == 1, r.Label == "toxic", r.ID)
	}
}
