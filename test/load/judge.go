package main

import (
	"os"
	"path/filepath"
	"time"

	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// fakeJudge is the fake OpenAI-compatible judge of a scenario.
type fakeJudge struct {
	url    string
	caFile string // with -judge-tls: the server's certificate, for the collector's tls.ca_file
	stop   func()
}

// startJudge starts the fake judge with a fixed reply latency. Its replies
// are canned: the load run measures the collector, not judging quality.
// With useTLS it serves HTTPS (HTTP/2 or HTTP/1.1), as hosted judges do, and writes
// its certificate into dir.
func startJudge(latency time.Duration, useTLS bool, dir string) (fakeJudge, error) {
	if !useTLS {
		s := scoringtest.NewServer()
		s.SetLatency(latency)
		return fakeJudge{url: s.URL, stop: s.Close}, nil
	}
	s := scoringtest.NewTLSServer()
	s.SetLatency(latency)
	ca := filepath.Join(dir, "judge-ca.pem")
	if err := os.WriteFile(ca, s.CertificatePEM(), 0o600); err != nil {
		s.Close()
		return fakeJudge{}, err
	}
	return fakeJudge{url: s.URL, caFile: ca, stop: s.Close}, nil
}
