// Command load runs the built otelcol-llmeval under a steady OTLP load,
// without and with the llm_eval processor, through a judge outage and under
// never-finishing agent traces, and with chat spans without content mixed
// with a few with content (contentless), and reports CPU per span, peak
// memory, the trace context index's size, whether every span came out and,
// for contentless, whether every content span was scored.
//
//	go run ./test/load -collector bin/otelcol-llmeval -duration 60s
//	go run ./test/load -collector bin/otelcol-llmeval -duration 10m -scenarios contentless
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

type options struct {
	binary         string
	rate           int
	duration       time.Duration
	genAIEvery     int
	sampling       float64
	judgeLatency   time.Duration
	judgeTLS       bool
	judgeHTTP2     bool
	maxConcurrency int
	queueSize      int
	maxWait        time.Duration
	reasonMode     string
	windows        time.Duration
	scenarios      string
	pprof          string
	windowProfiles string
	shape          string
	storage        bool // llm_eval storage on file_storage
	// trace_context of the llm_eval scenarios (0: collector default; the
	// unfinished scenario uses small limits when left 0).
	contextMaxTraces int
	contextMaxBytes  int64
	contextTTL       time.Duration
	// contentless scenario: the mix, and log_events.content_capture_off_after
	// (negative: collector default).
	contentlessPerMinute int
	contentPerSecond     int
	contentlessServices  int
	captureOffAfter      int
	// flags given on the command line (the contentless scenario leaves
	// max_wait and queue_size at the collector's defaults unless given).
	explicit map[string]bool
}

// Small trace_context limits of the unfinished scenario, so that the bound
// is reached within seconds.
const (
	unfinishedMaxTraces = 500
	unfinishedMaxBytes  = 1 << 20
)

func main() {
	var o options
	flag.StringVar(&o.binary, "collector", "bin/otelcol-llmeval", "collector binary built by `make build`")
	flag.IntVar(&o.rate, "rate", 10000, "spans per second sent")
	flag.DurationVar(&o.duration, "duration", 60*time.Second, "how long each scenario sends")
	flag.IntVar(&o.genAIEvery, "genai-every", 100, "one span in this many is a GenAI chat span (100 = 1%); with -shape rag the trace holding it is an agent trace")
	flag.Float64Var(&o.sampling, "sampling", 10, "llm_eval sampling.percentage")
	flag.DurationVar(&o.judgeLatency, "judge-latency", 400*time.Millisecond, "latency of every fake judge reply")
	flag.BoolVar(&o.judgeTLS, "judge-tls", false, "serve the fake judge over HTTPS (HTTP/1.1 and HTTP/2), as hosted judges are served, instead of plain HTTP/1.1")
	flag.BoolVar(&o.judgeHTTP2, "judge-http2", false, "with -judge-tls: the collector sets judge.force_attempt_http2 true and talks HTTP/2 instead of its default HTTP/1.1")
	flag.IntVar(&o.maxConcurrency, "max-concurrency", 64, "llm_eval judge.max_concurrency")
	flag.IntVar(&o.queueSize, "queue-size", 1000, "llm_eval queue_size")
	flag.DurationVar(&o.maxWait, "max-wait", 10*time.Second, "llm_eval max_wait")
	flag.StringVar(&o.reasonMode, "reason-mode", "", "llm_eval scorers' reason_mode: llm or summary (empty: the collector's default)")
	flag.DurationVar(&o.windows, "windows", 0, "llm_eval scenario: send GenAI spans only in every other window of this length (the others carry the same spans unselectable) and report the CPU per evaluated generation measured inside one collector process; 0: off")
	flag.StringVar(&o.scenarios, "scenarios", "baseline,llm_eval,outage", "comma-separated scenarios to run: baseline, llm_eval, outage, unfinished, contentless")
	flag.IntVar(&o.contentlessPerMinute, "contentless-per-minute", 100000, "contentless scenario: chat spans without content (and no log events) sent per minute, instead of -rate")
	flag.IntVar(&o.contentPerSecond, "content-per-second", 10, "contentless scenario: chat spans with content sent per second among them")
	flag.IntVar(&o.contentlessServices, "contentless-services", 5, "contentless scenario: services the spans without content come from")
	flag.IntVar(&o.captureOffAfter, "content-capture-off-after", -1, "contentless scenario: llm_eval log_events.content_capture_off_after (negative: the collector's default; 0: never learn, so the waiting area's bounds hold memory)")
	flag.BoolVar(&o.storage, "storage", false, "llm_eval and unfinished scenarios: keep held spans and results in file_storage (llm_eval storage) in a temporary directory, and report the bytes written per held span")
	flag.StringVar(&o.shape, "shape", shapeChat, "GenAI traffic shape: chat (a lone chat span) or rag (invoke_agent root with retrieval, execute_tool and chat children); the unfinished scenario always sends its own shape")
	flag.IntVar(&o.contextMaxTraces, "context-max-traces", 0, fmt.Sprintf("llm_eval trace_context.max_traces (0: collector default; unfinished: %d)", unfinishedMaxTraces))
	flag.Int64Var(&o.contextMaxBytes, "context-max-bytes", 0, fmt.Sprintf("llm_eval trace_context.max_bytes (0: collector default; unfinished: %d)", unfinishedMaxBytes))
	flag.DurationVar(&o.contextTTL, "context-ttl", 0, "llm_eval trace_context.ttl (0: collector default)")
	flag.StringVar(&o.pprof, "pprof", "", "serve the collector's pprof on this address (the binary must include pprofextension)")
	flag.StringVar(&o.windowProfiles, "window-profiles", "", "with -windows and -pprof: write a CPU profile of every window into this directory (window-NN-genai.pprof and window-NN-plain.pprof)")
	flag.Parse()
	o.explicit = map[string]bool{}
	flag.Visit(func(f *flag.Flag) { o.explicit[f.Name] = true })
	if o.contentlessPerMinute < 0 || o.contentPerSecond < 0 || o.contentlessServices < 1 {
		fmt.Fprintln(os.Stderr, "load: -contentless-per-minute and -content-per-second must not be negative, -contentless-services must be positive")
		os.Exit(2)
	}
	if o.shape != shapeChat && o.shape != shapeRAG {
		fmt.Fprintf(os.Stderr, "load: -shape %q is not one of chat, rag\n", o.shape)
		os.Exit(2)
	}
	if o.genAIEvery < 1 || o.rate < 1 || o.duration <= 0 {
		fmt.Fprintln(os.Stderr, "load: -genai-every, -rate and -duration must be positive")
		os.Exit(2)
	}
	if o.windows != 0 && o.windows < 2*windowSettle {
		fmt.Fprintf(os.Stderr, "load: -windows must be at least %s\n", 2*windowSettle)
		os.Exit(2)
	}
	if o.windowProfiles != "" && (o.windows == 0 || o.pprof == "") {
		fmt.Fprintln(os.Stderr, "load: -window-profiles needs -windows and -pprof")
		os.Exit(2)
	}
	if o.judgeHTTP2 && !o.judgeTLS {
		fmt.Fprintln(os.Stderr, "load: -judge-http2 needs -judge-tls")
		os.Exit(2)
	}
	if o.reasonMode != "" && o.reasonMode != "llm" && o.reasonMode != "summary" {
		fmt.Fprintf(os.Stderr, "load: -reason-mode %q is not one of llm, summary\n", o.reasonMode)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// report is one scenario's outcome.
type report struct {
	name                  string
	sent, rejected, genAI int
	got                   counts
	lost                  int
	cpu                   float64 // seconds from first send to drained
	peakRSS               int64
	rssSeries             []int64 // every 5 s while sending
	evaluations, unscored float64
	circuitOpen           float64 // evaluations refused by the open breaker
	shape                 string
	sampling              float64
	// trace context index at the end and its evictions by cause.
	ctxTraces, ctxBytes float64
	evictions           map[string]float64
	joins               map[string]float64 // context_joins by source
	ctxBytesSeries      []float64          // every 5 s while sending
	elapsed             time.Duration
	windows             []window // -windows
	// -storage: records written, bytes written, and the bbolt file size.
	storageAdmits, storageBytes float64
	storageFile                 int64
	elapsedSending              time.Duration
	contentless                 *contentlessReport // contentless scenario
}

func run(ctx context.Context, o options) error {
	if _, err := os.Stat(o.binary); err != nil {
		return fmt.Errorf("collector binary %s: %w (run `make build` first)", o.binary, err)
	}
	var reports []report
	for _, name := range strings.Split(o.scenarios, ",") {
		if name == "contentless" {
			fmt.Fprintf(os.Stderr, "load: scenario %s: %d content-less spans/min and %d content spans/s for %s...\n", name, o.contentlessPerMinute, o.contentPerSecond, o.duration)
		} else {
			fmt.Fprintf(os.Stderr, "load: scenario %s: %d spans/s for %s...\n", name, o.rate, o.duration)
		}
		r, err := runScenario(ctx, o, name)
		if err != nil {
			return fmt.Errorf("scenario %s: %w", name, err)
		}
		reports = append(reports, r)
	}
	printReport(o, reports)
	for _, r := range reports {
		if r.lost > 0 || r.got.Duplicated > 0 {
			return fmt.Errorf("scenario %s lost %d and duplicated %d spans", r.name, r.lost, r.got.Duplicated)
		}
		if c := r.contentless; c != nil && c.contentScored < c.contentSent {
			return fmt.Errorf("scenario %s: %d of %d content spans not scored by every scorer", r.name, c.contentSent-c.contentScored, c.contentSent)
		}
	}
	return nil
}

func runScenario(ctx context.Context, o options, name string) (report, error) {
	r := report{name: name, shape: o.shape, sampling: o.sampling}
	dir, err := os.MkdirTemp("", "llmeval-load-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)

	s, err := newSink()
	if err != nil {
		return r, err
	}
	defer s.close()

	v := configValues{Sink: s.endpoint(), Sampling: o.sampling, MaxConcurrency: o.maxConcurrency,
		QueueSize: o.queueSize, MaxWait: o.maxWait, ReasonMode: o.reasonMode, Pprof: o.pprof,
		ContextMaxTraces: o.contextMaxTraces, ContextMaxBytes: o.contextMaxBytes, ContextTTL: o.contextTTL,
		CaptureOffAfter: -1}
	drain := o.maxWait
	var mix *contentlessTraffic
	switch name {
	case "baseline":
	case "outage":
		v.Judge = "http://" + freeAddr() + "/v1" // nothing listens: connection refused
	case "llm_eval", "unfinished", "contentless":
		judge, err := startJudge(o.judgeLatency, o.judgeTLS, dir)
		if err != nil {
			return r, err
		}
		defer judge.stop()
		v.Judge, v.JudgeCAFile, v.JudgeHTTP2 = judge.url, judge.caFile, o.judgeHTTP2
		if o.storage {
			v.StorageDir = filepath.Join(dir, "storage")
			if err := os.Mkdir(v.StorageDir, 0o700); err != nil {
				return r, err
			}
		}
		if name == "contentless" {
			// Every content span is to be scored; the waiting area and
			// the evaluation queue at the collector's defaults.
			v.Sampling, r.sampling, r.shape = 100, 100, name
			v.LogsPipeline, v.CaptureOffAfter = true, o.captureOffAfter
			if !o.explicit["max-wait"] {
				v.MaxWait, drain = 0, contentlessDrain
			}
			if !o.explicit["queue-size"] {
				v.QueueSize = 0
			}
			mix = &contentlessTraffic{perMinute: o.contentlessPerMinute, perSecond: o.contentPerSecond,
				services: o.contentlessServices, contentIDs: map[[8]byte]struct{}{}}
		}
		if name == "unfinished" {
			// Every trace is sampled, so every retrieval and tool span goes
			// into the index, and no generation ever comes to use it.
			v.Sampling = 100
			r.shape, r.sampling = shapeUnfinished, 100
			if v.ContextMaxTraces == 0 {
				v.ContextMaxTraces = unfinishedMaxTraces
			}
			if v.ContextMaxBytes == 0 {
				v.ContextMaxBytes = unfinishedMaxBytes
			}
		}
	default:
		return r, fmt.Errorf("unknown scenario %q (baseline, llm_eval, outage, unfinished, contentless)", name)
	}

	c, err := startCollector(ctx, o.binary, dir, v)
	if err != nil {
		return r, err
	}
	cpu0, err := c.cpuSeconds()
	if err != nil {
		c.stop()
		return r, err
	}
	start := time.Now()
	snd := newSender(c.receiver, o.genAIEvery, r.shape)
	sendCtx, cancel := context.WithTimeout(ctx, o.duration)
	done := make(chan struct{})
	go func() {
		if mix != nil {
			snd.runContentless(sendCtx, mix)
		} else {
			snd.run(sendCtx, o.rate)
		}
		close(done)
	}()
	var waitingSeries []float64
	windowsDone := make(chan []window, 1)
	if o.windows > 0 && name == "llm_eval" {
		go func() {
			windowsDone <- measureWindows(sendCtx, c, snd, o.windows, windowProfiles{addr: o.pprof, dir: o.windowProfiles})
		}()
	} else {
		windowsDone <- nil
	}
	for sampling := true; sampling; {
		select {
		case <-done:
			sampling = false
		case <-time.After(5 * time.Second):
			rss, _, _ := c.memory()
			r.rssSeries = append(r.rssSeries, rss)
			r.ctxBytesSeries = append(r.ctxBytesSeries, c.metric(metricContextBytes))
			if mix != nil {
				waitingSeries = append(waitingSeries, c.metric(metricEventsWaiting))
			}
		}
	}
	r.elapsedSending = time.Since(start)
	cancel()
	r.windows = <-windowsDone
	// Drained: every accepted span is out and nothing arrived for 2 s, or
	// max_wait plus a margin passed.
	deadline := time.Now().Add(drain + 20*time.Second)
	last, stableSince := -1, time.Now()
	for time.Now().Before(deadline) {
		got := s.counts()
		if got.Received != last {
			last, stableSince = got.Received, time.Now()
		} else if got.Unique >= len(snd.sent) && time.Since(stableSince) > 2*time.Second {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	cpu1, _ := c.cpuSeconds()
	_, r.peakRSS, _ = c.memory()
	r.evaluations = c.metric("otelcol_processor_llm_eval_evaluations")
	r.unscored = c.metric("otelcol_processor_llm_eval_spans_unscored")
	r.circuitOpen = c.metric("otelcol_processor_llm_eval_evaluations", `error_type="judge_circuit_open"`)
	r.ctxTraces = c.metric(metricContextTraces)
	r.ctxBytes = c.metric(metricContextBytes)
	r.evictions = map[string]float64{}
	for _, cause := range []string{"ttl", "max_traces", "max_bytes"} {
		r.evictions[cause] = c.metric(metricContextEvictions, `cause="`+cause+`"`)
	}
	r.joins = map[string]float64{}
	for _, source := range []string{"span", "trace", "none"} {
		r.joins[source] = c.metric(metricContextJoins, `source="`+source+`"`)
	}
	r.storageAdmits = c.metric("otelcol_processor_llm_eval_storage_writes", `op="admit"`)
	r.storageBytes = c.metric("otelcol_processor_llm_eval_storage_written_bytes")
	if mix != nil {
		r.contentless = &contentlessReport{perMinute: mix.perMinute, perSecond: mix.perSecond, services: mix.services,
			captureOffAfter: o.captureOffAfter, lessSent: mix.lessN, contentSent: mix.contentN,
			joins: c.metricBy(metricSignalJoins, "outcome"), captureOff: c.metric(metricCaptureOff),
			unscored: c.metricBy(metricSpansUnscored, "reason"), waitingSeries: waitingSeries}
	}
	r.elapsed = time.Since(start)
	if err := c.stop(); err != nil {
		fmt.Fprintf(os.Stderr, "load: collector stop: %v (log %s)\n", err, c.logPath)
	}
	time.Sleep(500 * time.Millisecond) // last export after shutdown flush
	r.sent, r.rejected, r.genAI = len(snd.sent), snd.rejected, snd.genAI
	r.got = s.counts()
	r.lost = r.sent - r.got.Unique
	if r.lost > 0 {
		fmt.Fprintf(os.Stderr, "load: %s: %d spans never arrived, e.g. %v\n", name, r.lost, s.missing(snd.sent, 5))
	}
	r.cpu = cpu1 - cpu0
	if mix != nil {
		r.contentless.contentScored, r.contentless.contentUnscored = s.scoredSpans(mix.contentIDs, loadScorers)
	}
	if v.StorageDir != "" {
		if fi, err := os.Stat(filepath.Join(v.StorageDir, "processor_llm_eval_")); err == nil {
			r.storageFile = fi.Size()
		}
	}
	return r, nil
}

func printReport(o options, reports []report) {
	transport := "HTTP/1.1"
	switch {
	case o.judgeTLS && o.judgeHTTP2:
		transport = "HTTPS, HTTP/2"
	case o.judgeTLS:
		transport = "HTTPS, HTTP/1.1"
	}
	storage := "off"
	if o.storage {
		storage = "file_storage"
	}
	if o.scenarios == "contentless" {
		fmt.Printf("Load: contentless mix for %s (below), sampling 100%%, judge latency %s over %s, max_concurrency %d, reason_mode %s, storage %s; max_wait, queue_size and log_events at the collector's defaults unless given\n\n",
			o.duration, o.judgeLatency, transport, o.maxConcurrency, cmp.Or(o.reasonMode, "default"), storage)
	} else {
		fmt.Printf("Load: %d spans/s for %s, shape %s, 1 chat span in %d, sampling %.0f%%, judge latency %s over %s, max_concurrency %d, reason_mode %s, storage %s\n\n",
			o.rate, o.duration, o.shape, o.genAIEvery, o.sampling, o.judgeLatency, transport, o.maxConcurrency, cmp.Or(o.reasonMode, "default"), storage)
	}
	fmt.Println("| scenario | spans sent | rejected | spans out (unique) | lost | duplicated | late result spans | evaluation events | evaluations/s | CPU s | CPU µs/span | peak RSS MiB |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	perSpan := map[string][]float64{}
	var names []string
	for _, r := range reports {
		us := r.cpu / float64(max(r.sent, 1)) * 1e6
		if _, ok := perSpan[r.name]; !ok {
			names = append(names, r.name)
		}
		perSpan[r.name] = append(perSpan[r.name], us)
		fmt.Printf("| %s | %d | %d | %d | %d | %d | %d | %d | %.1f | %.2f | %.2f | %.1f |\n",
			r.name, r.sent, r.rejected, r.got.Unique, r.lost, r.got.Duplicated, r.got.LateSpans, r.got.EvalEvents,
			r.evaluations/r.elapsed.Seconds(), r.cpu, us, float64(r.peakRSS)/(1<<20))
	}
	fmt.Println()
	// CPU time of one run varies by about ±10 % on a shared 2-core machine,
	// so repeated scenarios are compared by their medians.
	base := median(perSpan["baseline"])
	for _, name := range names {
		fmt.Printf("CPU µs/span, %s: median %.2f of %d run(s)", name, median(perSpan[name]), len(perSpan[name]))
		if name != "baseline" && base > 0 {
			fmt.Printf(", %.3f x baseline", median(perSpan[name])/base)
		}
		fmt.Println()
	}
	for _, r := range reports {
		if r.evaluations > 0 {
			fmt.Printf("%s: %.0f evaluations, %.0f refused by the open circuit breaker, %.0f spans passed unscored\n",
				r.name, r.evaluations, r.circuitOpen, r.unscored)
		}
	}
	for _, r := range reports {
		if r.storageAdmits > 0 {
			fmt.Printf("storage, %s: %.0f held spans written, %.0f bytes of records, %.0f B per held span; file %d B at the end\n",
				r.name, r.storageAdmits, r.storageBytes, r.storageBytes/r.storageAdmits, r.storageFile)
		}
	}
	for _, r := range reports {
		printWindows(r.name, r.windows)
	}
	for _, r := range reports {
		printContentless(r)
	}
	for _, r := range reports {
		var series []string
		for _, b := range r.rssSeries {
			series = append(series, fmt.Sprintf("%.0f", float64(b)/(1<<20)))
		}
		fmt.Printf("RSS MiB every 5 s, %s: %s\n", r.name, strings.Join(series, " "))
	}
	for _, r := range reports {
		if r.name == "baseline" {
			continue
		}
		var series []string
		for _, b := range r.ctxBytesSeries {
			series = append(series, fmt.Sprintf("%.2f", b/(1<<20)))
		}
		fmt.Printf("trace context index, %s (shape %s, sampling %.0f%%): %.0f traces and %.2f MiB at the end; evicted by ttl %.0f, max_traces %.0f, max_bytes %.0f; MiB every 5 s: %s; generations dispatched with context from span %.0f, trace %.0f, none %.0f\n",
			r.name, r.shape, r.sampling, r.ctxTraces, r.ctxBytes/(1<<20),
			r.evictions["ttl"], r.evictions["max_traces"], r.evictions["max_bytes"], strings.Join(series, " "),
			r.joins["span"], r.joins["trace"], r.joins["none"])
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
