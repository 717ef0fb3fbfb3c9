package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/checks"
	"github.com/llm-eval/llm_eval/scoring/scorers"
)

// runChecksScore is "llmeval score --scorer checks": the rules come from
// --rules and no judge is involved, so the judge flags are not needed.
func runChecksScore(f scoreFlags, stdin io.Reader, stdout, stderr io.Writer) int {
	if f.rulesFile == "" {
		return usageError(stderr, "--scorer %s needs --rules FILE", scoring.Checks)
	}
	if f.concurrency < 1 {
		return usageError(stderr, "--concurrency must be at least 1, got %d", f.concurrency)
	}
	if f.maxLineBytes < 1 {
		return usageError(stderr, "--max-line-bytes must be at least 1, got %d", f.maxLineBytes)
	}
	rules, err := readRules(f.rulesFile)
	if err != nil {
		return usageError(stderr, "--rules: %v", err)
	}
	opts := scoring.Options{Scale: f.scale, StrictMode: f.strict}
	if f.threshold.set {
		opts.Threshold = &f.threshold.v
	}
	scorer, err := scorers.NewBuilder(nil).Build(scorers.Spec{Name: scoring.Checks, Rules: rules, Options: opts})
	if err != nil {
		return usageError(stderr, "--rules %s: %v", f.rulesFile, err)
	}
	s := &scoreRun{scorers: []scoring.Scorer{scorer}, concurrency: f.concurrency, maxLineBytes: f.maxLineBytes}
	return s.execute(stdin, stdout, stderr, f.allowErrors)
}

// readRules reads a JSON list of check rules; unknown keys are errors.
func readRules(path string) ([]checks.Rule, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var rules []checks.Rule
	if err := dec.Decode(&rules); err != nil {
		return nil, fmt.Errorf("%s: want a JSON list of rules: %w", path, err)
	}
	return rules, nil
}
