package duration

import (
	"testing"
	"time"
)

func TestUnitHint(t *testing.T) {
	tests := []struct {
		n                 int64
		lowest, likelyMax time.Duration
		want              string
	}{
		{n: 30, lowest: 100 * time.Millisecond, likelyMax: 10 * time.Minute, want: `"30s"`},
		{n: 30000, lowest: 100 * time.Millisecond, likelyMax: 10 * time.Minute, want: `"30s" or "30000ms"`},
		{n: 1500, lowest: 100 * time.Millisecond, likelyMax: 10 * time.Minute, want: `"1500ms"`},
		{n: 3600, lowest: time.Second, likelyMax: 168 * time.Hour, want: `"3600s"`},
		// The millisecond reading is too short to be valid: seconds.
		{n: 5000, lowest: 10 * time.Second, likelyMax: time.Minute, want: `"5000s"`},
	}
	for _, tt := range tests {
		if got := UnitHint(tt.n, tt.lowest, tt.likelyMax); got != tt.want {
			t.Errorf("UnitHint(%d, %s, %s) = %s, want %s", tt.n, tt.lowest, tt.likelyMax, got, tt.want)
		}
	}
}

func TestAtLeast(t *testing.T) {
	const lowest, likelyMax = time.Millisecond, 10 * time.Minute
	tests := []struct {
		d    time.Duration
		want string // "" for no error
	}{
		{d: time.Millisecond},
		{d: time.Hour},
		{d: 5, want: `must be at least 1ms, got 5ns; a number without a unit is read as nanoseconds (write e.g. "5s")`},
		{d: 0, want: "must be at least 1ms, got 0s"},
		{d: -time.Second, want: "must be at least 1ms, got -1s"},
	}
	for _, tt := range tests {
		err := AtLeast(tt.d, lowest, likelyMax)
		if got := errString(err); got != tt.want {
			t.Errorf("AtLeast(%s) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestZeroOrAtLeast(t *testing.T) {
	const lowest, likelyMax = time.Millisecond, 10 * time.Minute
	tests := []struct {
		d    time.Duration
		want string
	}{
		{d: 0},
		{d: 2 * time.Second},
		{d: 10, want: `must be at least 1ms, got 10ns; a number without a unit is read as nanoseconds (write e.g. "10s") (or 0 for off)`},
		{d: -time.Second, want: "must be at least 1ms, got -1s (or 0 for off)"},
	}
	for _, tt := range tests {
		err := ZeroOrAtLeast(tt.d, lowest, likelyMax, "0 for off")
		if got := errString(err); got != tt.want {
			t.Errorf("ZeroOrAtLeast(%s) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
