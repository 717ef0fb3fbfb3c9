package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
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
