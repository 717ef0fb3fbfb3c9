package pipeline_test

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
	"github.com/llm-eval/llm_eval/scoring/scorers"
)

func TestNewValidates(t *testing.T) {
	j := testkit.NewJudge(nil)
	tests := []struct {
		name    string
		scorer  string
		judge   scoring.Judge
		opts    scoring.Options
		wantErr string
	}{
		{"unknown scorer", "sentiment", j, scoring.Options{}, `unknown scorer "sentiment"`},
		{"nil judge", scoring.Bias, nil, scoring.Options{}, "judge is nil"},
		{"negative scale", scoring.Bias, j, scoring.Options{Scale: -1}, "scale must be a positive number"},
		{"NaN scale", scoring.Hallucination, j, scoring.Options{Scale: math.NaN()}, "scale"},
		{"infinite scale", scoring.PromptAlignment, j, scoring.Options{Scale: math.Inf(1)}, "scale"},
		{"threshold above scale", scoring.Bias, j, scoring.Options{Threshold: testkit.Ptr(1.5)}, "threshold must be between 0 and the scale"},
		{"threshold above scale 10", scoring.PromptAlignment, j, scoring.Options{Scale: 10, Threshold: testkit.Ptr(10.5)}, "threshold"},
		{"negative threshold", scoring.Hallucination, j, scoring.Options{Threshold: testkit.Ptr(-0.1)}, "threshold"},
		{"NaN threshold", scoring.Hallucination, j, scoring.Options{Threshold: testkit.Ptr(math.NaN())}, "threshold"},
		{"bad reason mode", scoring.Bias, j, scoring.Options{ReasonMode: "poem"}, `unknown reason mode "poem"`},
		{"negative cap", scoring.Bias, j, scoring.Options{MaxInputChars: -1}, "max input chars"},
		{"zero options", scoring.Bias, j, scoring.Options{}, ""},
		{"threshold equal to scale", scoring.PromptAlignment, j, scoring.Options{Scale: 10, Threshold: testkit.Ptr(10.0)}, ""},
		{"threshold zero", scoring.Hallucination, j, scoring.Options{Threshold: testkit.Ptr(0.0)}, ""},
		{"summary mode", scoring.PromptAlignment, j, scoring.Options{ReasonMode: scoring.ReasonSummary}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scorers.New(tt.scorer, tt.judge, tt.opts)
			if tt.wantErr == "" {
				if err != nil || s == nil {
					t.Fatalf("New = %v, %v; want a scorer", s, err)
				}
				if s.Name() != tt.scorer {
					t.Errorf("Name() = %q, want %q", s.Name(), tt.scorer)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
			}
			if s != nil {
				t.Errorf("scorer returned with error")
			}
		})
	}
}

func TestNamesAreAccepted(t *testing.T) {
	for _, n := range scorers.Names() {
		if _, err := scorers.New(n, testkit.NewJudge(nil), scoring.Options{}); err != nil {
			t.Errorf("scorers.New(%q): %v", n, err)
		}
	}
}

func TestDefaultThresholds(t *testing.T) {
	tests := []struct {
		scorer string
		opts   scoring.Options
		want   float64
	}{
		{scoring.Bias, scoring.Options{}, 0.5},
		{scoring.Hallucination, scoring.Options{}, 0.5},
		{scoring.PromptAlignment, scoring.Options{}, 0.5},
		{scoring.Bias, scoring.Options{Scale: 10}, 5},
		{scoring.Bias, scoring.Options{Threshold: testkit.Ptr(0.2)}, 0.2},
		{scoring.Bias, scoring.Options{StrictMode: true, Threshold: testkit.Ptr(0.9)}, 0},
		{scoring.Hallucination, scoring.Options{StrictMode: true, Scale: 10}, 0},
		{scoring.PromptAlignment, scoring.Options{StrictMode: true, Threshold: testkit.Ptr(0.1)}, 1},
		{scoring.PromptAlignment, scoring.Options{StrictMode: true, Scale: 10}, 10},
	}
	for _, tt := range tests {
		s := mustNew(t, tt.scorer, testkit.NewJudge(nil), tt.opts)
		if got := pipeline.Threshold(s); got != tt.want {
			t.Errorf("%s %+v: threshold %v, want %v", tt.scorer, tt.opts, got, tt.want)
		}
	}
}

// TestConcurrentScore shares one scorer across goroutines (run with -race).
func TestConcurrentScore(t *testing.T) {
	s := mustNew(t, scoring.Bias, testkit.NewJudge(testkit.BiasReplies("yes", "no")), scoring.Options{})
	var wg sync.WaitGroup
	results := make([]scoring.Result, 8)
	for i := range results {
		wg.Go(func() { results[i] = s.Score(context.Background(), scoring.Case{Output: "text"}) })
	}
	wg.Wait()
	for i, r := range results {
		if r.Label != scoring.LabelPass || r.Score != 0.5 {
			t.Errorf("result %d: %v %v %v", i, r.Label, r.Score, r.Err)
		}
	}
}
