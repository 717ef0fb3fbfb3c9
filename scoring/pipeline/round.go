package pipeline

import "math"

// scoreDecimals is how many decimals a score keeps. Mastra's scorers round
// every score to two decimals, and ours match them.
const scoreDecimals = 2

// Round rounds a score to two decimals the way Mastra's
// roundToTwoDecimals does: half a hundredth rounds up, and a machine
// epsilon is added first so that a ratio landing a hair under the half
// (0.285 × 100 = 28.499999999999996) still rounds up as it would on paper.
// Every scorer's score goes through it before the label is decided, so a
// result exactly at the threshold passes at any scale: 3 of 6 × 0.1 is
// 0.05, not 0.05000000000000001. Scores are never negative, where
// math.Round and JavaScript's Math.round agree.
func Round(score float64) float64 {
	p := math.Pow10(scoreDecimals)
	return math.Round((score+epsilon)*p) / p
}

// epsilon is JavaScript's Number.EPSILON, the gap between 1 and the next
// float64 (2^-52).
const epsilon = 0x1p-52
