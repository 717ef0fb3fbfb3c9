package scoring

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
)

func TestNewValidates(t *testing.T) {
	j := newJudge(nil)
	tests := []struct {
		name    string
		scorer  string
		judge   Judge
		opts    Options
		wantErr string
	}{
		{"unknown scorer", "sentiment", j, Options{}, `unknown scorer "sentiment"`},
		{"nil judge", Bias, nil, Options{}, "judge is nil"},
		{"negative scale", Bias, j, Options{Scale: -1}, "scale must be a positive number"},
		{"NaN scale", Hallucination, j, Options{Scale: math.NaN()}, "scale"},
		{"infinite scale", PromptAlignment, j, Options{Scale: math.Inf(1)}, "scale"},
		{"threshold above scale", Bias, j, Options{Threshold: ptr(1.5)}, "threshold must be between 0 and the scale"},
		{"threshold above scale 10", PromptAlignment, j, Options{Scale: 10, Threshold: ptr(10.5)}, "threshold"},
		{"negative threshold", Hallucination, j, Options{Threshold: ptr(-0.1)}, "threshold"},
		{"NaN threshold", Hallucination, j, Options{Threshold: ptr(math.NaN())}, "threshold"},
		{"bad reason mode", Bias, j, Options{ReasonMode: "poem"}, `unknown reason mode "poem"`},
		{"negative cap", Bias, j, Options{MaxInputChars: -1}, "max input chars"},
		{"zero options", Bias, j, Options{}, ""},
		{"threshold equal to scale", PromptAlignment, j, Options{Scale: 10, Threshold: ptr(10.0)}, ""},
		{"threshold zero", Hallucination, j, Options{Threshold: ptr(0.0)}, ""},
		{"summary mode", PromptAlignment, j, Options{ReasonMode: ReasonSummary}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(tt.scorer, tt.judge, tt.opts)
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
	for _, n := range Names() {
		if _, err := New(n, newJudge(nil), Options{}); err != nil {
			t.Errorf("New(%q): %v", n, err)
		}
	}
}

func TestDefaultThresholds(t *testing.T) {
	tests := []struct {
		scorer string
		opts   Options
		want   float64
	}{
		{Bias, Options{}, 0.5},
		{Hallucination, Options{}, 0.5},
		{PromptAlignment, Options{}, 0.5},
		{Bias, Options{Scale: 10}, 5},
		{Bias, Options{Threshold: ptr(0.2)}, 0.2},
		{Bias, Options{StrictMode: true, Threshold: ptr(0.9)}, 0},
		{Hallucination, Options{StrictMode: true, Scale: 10}, 0},
		{PromptAlignment, Options{StrictMode: true, Threshold: ptr(0.1)}, 1},
		{PromptAlignment, Options{StrictMode: true, Scale: 10}, 10},
	}
	for _, tt := range tests {
		s := mustNew(t, tt.scorer, newJudge(nil), tt.opts)
		if s.threshold != tt.want {
			t.Errorf("%s %+v: threshold %v, want %v", tt.scorer, tt.opts, s.threshold, tt.want)
		}
	}
}

// TestConcurrentScore shares one scorer across goroutines (run with -race).
func TestConcurrentScore(t *testing.T) {
	s := mustNew(t, Bias, newJudge(biasReplies("yes", "no")), Options{})
	var wg sync.WaitGroup
	results := make([]Result, 8)
	for i := range results {
		wg.Go(func() { results[i] = s.Score(context.Background(), Case{Output: "text"}) })
	}
	wg.Wait()
	for i, r := range results {
		if r.Label != LabelPass || r.Score != 0.5 {
			t.Errorf("result %d: %v %v %v", i, r.Label, r.Score, r.Err)
		}
	}
}
