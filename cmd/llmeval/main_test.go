package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunDispatch(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"no command", nil, exitUsage, "", "Commands:"},
		{"help", []string{"--help"}, exitOK, "score", ""},
		{"unknown command", []string{"frobnicate"}, exitUsage, "", `unknown command "frobnicate"`},
		{"score help", []string{"score", "-h"}, exitOK, "", "--judge-endpoint"},
		{"traffic help", []string{"traffic", "-h"}, exitOK, "", "-endpoint"},
		{"results help", []string{"results", "-h"}, exitOK, "", "-wait"},
		{"demo-judge help", []string{"demo-judge", "-h"}, exitOK, "", "-addr"},
		{"traffic bad flag", []string{"traffic", "-nope"}, exitUsage, "", "-nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, strings.NewReader(""), &stdout, &stderr)
			assert.Equal(t, tt.wantCode, code)
			assert.Contains(t, stdout.String(), tt.wantStdout)
			assert.Contains(t, stderr.String(), tt.wantStderr)
		})
	}
}

// TestUsageNamesEveryBenchDataset: the command list and bench -h name every
// dataset bench reads, and bench -h's dataset table keeps its columns in
// line whatever the length of a file name.
func TestUsageNamesEveryBenchDataset(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, exitOK, run([]string{"help"}, nil, &stdout, &stderr))
	var benchLine string
	for _, line := range strings.Split(stdout.String(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "bench ") {
			benchLine = line
		}
	}
	stdout.Reset()
	assert.Equal(t, exitOK, run([]string{"bench", "-h"}, nil, &stdout, &stderr))
	var columns []int
	for _, d := range benchDatasets {
		assert.Contains(t, benchLine, d.name)
		for _, line := range strings.Split(stderr.String(), "\n") {
			if strings.HasPrefix(line, "  "+d.name+" ") {
				columns = append(columns, strings.Index(line, "default scorer"), strings.Index(line, d.about))
			}
		}
	}
	require.Len(t, columns, 2*len(benchDatasets), stderr.String())
	for i := 2; i < len(columns); i += 2 {
		assert.Equal(t, columns[0], columns[i], "the scorer column lines up:\n%s", stderr.String())
		assert.Equal(t, columns[1], columns[i+1], "the description column lines up:\n%s", stderr.String())
	}
}
