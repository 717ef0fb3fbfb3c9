// Package duration checks the durations of a configuration. A number
// written without a unit (max_wait: 30) decodes as nanoseconds; the check
// rejects it naming the reading the writer most likely meant.
package duration // import "github.com/llm-eval/llm_eval/internal/duration"

import (
	"fmt"
	"strconv"
	"time"
)

// AtLeast rejects a duration below lowest. A positive value under a
// millisecond is almost always a number written without a unit, which
// decoding reads as nanoseconds; the error then suggests the reading the
// writer most likely meant: seconds, unless that is longer than likelyMax
// (30000 as a judge timeout is 30s, not 8h20m).
func AtLeast(d, lowest, likelyMax time.Duration) error {
	switch {
	case d >= lowest:
		return nil
	case d > 0 && d < time.Millisecond:
		return fmt.Errorf("must be at least %s, got %s; a number without a unit is read as nanoseconds (write e.g. %s)", lowest, d, UnitHint(int64(d), lowest, likelyMax))
	default:
		return fmt.Errorf("must be at least %s, got %s", lowest, d)
	}
}

// ZeroOrAtLeast is AtLeast for a setting where 0 has a meaning of its own
// (off, never, the default); zero says it for the error, as in "0 for no
// wait".
func ZeroOrAtLeast(d, lowest, likelyMax time.Duration, zero string) error {
	if d == 0 {
		return nil
	}
	if err := AtLeast(d, lowest, likelyMax); err != nil {
		return fmt.Errorf("%w (or %s)", err, zero)
	}
	return nil
}

// UnitHint spells the number n with the unit it most likely lacked.
func UnitHint(n int64, lowest, likelyMax time.Duration) string {
	num := strconv.FormatInt(n, 10)
	asSeconds := time.Duration(n) * time.Second
	asMillis := time.Duration(n) * time.Millisecond
	if asSeconds <= likelyMax || asMillis < lowest {
		return strconv.Quote(num + "s")
	}
	if n%1000 == 0 {
		return fmt.Sprintf("%q or %q", strconv.FormatInt(n/1000, 10)+"s", num+"ms")
	}
	return strconv.Quote(num + "ms")
}
