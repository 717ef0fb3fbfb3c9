package main

import (
	"context"
	"net"
	"time"
)

// scriptedJudgeNote is what a report made with --scripted-judge says about
// its judge.
const scriptedJudgeNote = "scripted (offline demo judge, string heuristics, not an LLM): the figures check the pipeline, not a judge's accuracy"

// startScriptedJudge serves the offline demo judge on a free local port
// and points f's judge flags at it. stop shuts it down; the report does not
// depend on how the shutdown went, so stop gives it at most five seconds.
func startScriptedJudge(f *benchFlags) (stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = serveDemoJudge(ctx, ln) // returns when ctx is cancelled
	}()
	f.endpoint, f.model = "http://"+ln.Addr().String()+"/v1", "scripted"
	return func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
	}, nil
}
