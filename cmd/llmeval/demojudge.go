package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// demoReasonPrefix starts every reason the demo judge returns, so no demo
// result can be mistaken for a real model's judgement.
const demoReasonPrefix = "[offline demo judge, not an LLM] "

const demoBanner = `==============================================================
 llmeval demo-judge: OFFLINE DEMO JUDGE - NOT A REAL LLM
 Canned replies from string heuristics (scoring/scoringtest).
 Use it for the demo and tests only; its scores mean nothing.
 Every reason it writes starts with its label. A reason llm_eval
 composes itself (reason_mode: summary) carries the label only
 where it quotes the judge, so run the collector with
 LLMEVAL_REASON_MODE=llm (examples/collector.yaml) to label
 every judged reason (not_scorable ones are llm_eval's own).
==============================================================`

// runDemoJudge serves the fake OpenAI-compatible judge on a fixed address
// until interrupted.
func runDemoJudge(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("llmeval demo-judge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8089", "address to listen on; the judge endpoint is http://ADDR/v1")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "llmeval demo-judge: unexpected arguments %q\n", fs.Args())
		return exitUsage
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "llmeval demo-judge: %v\n", err)
		return exitFailure
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	printDemoJudgeBanner(stdout, ln.Addr().String())
	if err := serveDemoJudge(ctx, ln); err != nil {
		fmt.Fprintf(stderr, "llmeval demo-judge: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// printDemoJudgeBanner prints the demo judge's banner, its endpoint at addr
// and how to point make run at it.
func printDemoJudgeBanner(w io.Writer, addr string) {
	fmt.Fprintln(w, demoBanner)
	fmt.Fprintf(w, "demo judge endpoint: http://%s/v1\n", addr)
	fmt.Fprintf(w, "point make run at it (stop make run first):\n%s", demoRunRecipe(addr))
}

// serveDemoJudge serves the demo judge on ln until ctx ends.
func serveDemoJudge(ctx context.Context, ln net.Listener) error {
	fake := scoringtest.NewServer()
	defer fake.Close()
	handler, err := newDemoJudgeHandler(fake.URL)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serving demo judge: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("stopping demo judge: %w", err)
	}
	return nil
}

// newDemoJudgeHandler proxies to the fake judge at fakeURL (a base URL
// ending in /v1) and labels every reason in its replies as a demo.
func newDemoJudgeHandler(fakeURL string) (http.Handler, error) {
	target, err := url.Parse(fakeURL)
	if err != nil {
		return nil, fmt.Errorf("parsing fake judge URL: %w", err)
	}
	target.Path = "" // requests keep their own /v1/... path
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = labelDemoReasons
	return proxy, nil
}

// labelDemoReasons rewrites a chat completion so that every "reason" string
// in the JSON reply starts with demoReasonPrefix. Other bodies pass as they are.
func labelDemoReasons(resp *http.Response) error {
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return fmt.Errorf("reading fake judge reply: %w", err)
	}
	if labelled, ok := labelCompletion(body); ok {
		body = labelled
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return nil
}

// labelCompletion labels the reasons in every choice's message content.
func labelCompletion(body []byte) ([]byte, bool) {
	var completion map[string]any
	if json.Unmarshal(body, &completion) != nil {
		return nil, false
	}
	choices, _ := completion["choices"].([]any)
	for _, c := range choices {
		choice, _ := c.(map[string]any)
		msg, _ := choice["message"].(map[string]any)
		content, ok := msg["content"].(string)
		if !ok {
			continue
		}
		var reply any
		if json.Unmarshal([]byte(content), &reply) != nil {
			continue
		}
		labelled, err := json.Marshal(labelReasons(reply))
		if err != nil {
			continue
		}
		msg["content"] = string(labelled)
	}
	out, err := json.Marshal(completion)
	if err != nil {
		return nil, false
	}
	return out, true
}

// labelReasons prefixes every string value of a "reason" key, at any depth.
func labelReasons(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			if s, ok := val.(string); ok && k == "reason" {
				// A reason quoting earlier demo verdicts carries the label once.
				t[k] = demoReasonPrefix + strings.ReplaceAll(s, demoReasonPrefix, "")
				continue
			}
			t[k] = labelReasons(val)
		}
	case []any:
		for i := range t {
			t[i] = labelReasons(t[i])
		}
	}
	return v
}
