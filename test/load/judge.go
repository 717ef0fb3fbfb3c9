package main

import (
	"time"

	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// startJudge starts the fake OpenAI-compatible judge with a fixed reply
// latency and returns its base URL. Its replies are canned: the load run
// measures the collector, not judging quality.
func startJudge(latency time.Duration) (string, func()) {
	s := scoringtest.NewServer()
	s.SetLatency(latency)
	return s.URL, s.Close
}
