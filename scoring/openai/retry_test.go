package openai

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
)

// fakeSleeper records waits instead of sleeping.
type fakeSleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (f *fakeSleeper) sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	f.waits = append(f.waits, d)
	f.mu.Unlock()
	return ctx.Err()
}

func (f *fakeSleeper) recorded() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.waits...)
}

func TestBackoffGrowsAndIsCapped(t *testing.T) {
	p := RetryPolicy{InitialBackoff: 100 * time.Millisecond, MaxBackoff: 350 * time.Millisecond, jitter: func() float64 { return 1 }}.withDefaults()
	got := []time.Duration{p.backoff(1, 0), p.backoff(2, 0), p.backoff(3, 0), p.backoff(4, 0)}
	assert.Equal(t, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 350 * time.Millisecond, 350 * time.Millisecond}, got)

	p.jitter = func() float64 { return 0.5 }
	assert.Equal(t, 50*time.Millisecond, p.backoff(1, 0), "full jitter scales the bound")

	p.MaxRetryAfter = 20 * time.Second
	assert.Equal(t, 7*time.Second, p.backoff(1, 7*time.Second), "Retry-After replaces the backoff")
	assert.Equal(t, 20*time.Second, p.backoff(1, time.Hour), "Retry-After is capped")
}

func TestRetryPolicyDefaults(t *testing.T) {
	p := RetryPolicy{}.withDefaults()
	assert.Equal(t, DefaultMaxAttempts, p.MaxAttempts)
	assert.Equal(t, DefaultInitialBackoff, p.InitialBackoff)
	assert.Equal(t, DefaultMaxBackoff, p.MaxBackoff)
	assert.Equal(t, DefaultMultiplier, p.Multiplier)
	assert.Equal(t, DefaultMaxRetryAfter, p.MaxRetryAfter)
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"3", 3 * time.Second},
		{" 1.5 ", 1500 * time.Millisecond},
		{"0", 0},
		{"-4", 0},
		{"soon", 0},
		{now.Add(9 * time.Second).Format(http.TimeFormat), 9 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{"1e300", 0}, // checked below: saturates
	}
	for _, tt := range tests {
		got := parseRetryAfter(tt.in, now)
		if tt.in == "1e300" {
			assert.Greater(t, got, time.Duration(0), "huge values saturate instead of overflowing")
			continue
		}
		assert.Equal(t, tt.want, got, "Retry-After %q", tt.in)
	}
}

func TestRunStopsOnPermanentFailure(t *testing.T) {
	fs := &fakeSleeper{}
	p := RetryPolicy{sleep: fs.sleep}
	calls := 0
	n, f := p.run(context.Background(), nil, func(context.Context) *attemptFailure {
		calls++
		return &attemptFailure{err: &scoring.Error{Type: scoring.ErrorJudgeAuth, Err: errors.New("no")}}
	})
	require.NotNil(t, f)
	assert.Equal(t, scoring.ErrorJudgeAuth, f.err.Type)
	assert.Equal(t, 1, calls)
	assert.Equal(t, 0, n)
	assert.Empty(t, fs.recorded())
}

func TestRunRetriesUntilSuccessAndReports(t *testing.T) {
	fs := &fakeSleeper{}
	p := RetryPolicy{MaxAttempts: 4, sleep: fs.sleep, jitter: func() float64 { return 1 }}
	var told []int
	calls := 0
	n, f := p.run(context.Background(), func(retry int, err error, wait time.Duration) { told = append(told, retry) }, func(context.Context) *attemptFailure {
		calls++
		if calls < 3 {
			return &attemptFailure{retryable: true, err: &scoring.Error{Type: scoring.ErrorJudgeUnavailable, Err: errors.New("503")}}
		}
		return nil
	})
	assert.Nil(t, f)
	assert.Equal(t, 2, n)
	assert.Equal(t, []int{1, 2}, told)
	assert.Equal(t, []time.Duration{DefaultInitialBackoff, 2 * DefaultInitialBackoff}, fs.recorded())
}

func TestRunSleepInterruptedByContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := RetryPolicy{sleep: func(ctx context.Context, d time.Duration) error {
		cancel()
		return ctx.Err()
	}}
	n, f := p.run(ctx, nil, func(context.Context) *attemptFailure {
		return &attemptFailure{retryable: true, err: &scoring.Error{Type: scoring.ErrorJudgeUnavailable, Err: errors.New("down")}}
	})
	require.NotNil(t, f)
	assert.Equal(t, scoring.ErrorCanceled, f.err.Type)
	assert.Equal(t, 0, n)
}
