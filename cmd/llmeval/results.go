package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/scoring"
)

// maxLineBytes bounds one line of the file exporter's output.
const maxLineBytes = 64 << 20

// evaluatedSpan is a span of the file exporter's output with its results.
type evaluatedSpan struct {
	service, name   string
	traceID, spanID string
	start           uint64 // start time in Unix ns, for ordering
	results         []evaluationResult
	// fromRecords: the results came as gen_ai.evaluation.result log
	// records, not span events; name is set once the file is read.
	fromRecords bool
}

// Headings of calls whose results are log records: the records of a logs
// pipeline, which come with the GenAI log events of their call, and the
// records the llm_eval_events connector makes from a span's result events,
// which come alone.
const (
	headingLogEvents   = "(GenAI log events)"
	headingSpanRecords = "(result records of a span)"
)

type evaluationResult struct {
	name, label, reason, errorType string
	score                          float64
	scored                         bool
}

// runResults prints a short summary of the evaluation results in a file
// exporter output (OTLP/JSON lines) and, optionally, the evaluation lines of
// a Prometheus endpoint.
func runResults(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("llmeval results", flag.ContinueOnError)
	fs.SetOutput(stderr)
	wait := fs.Int("wait", 0, "wait until at least this many spans carry evaluation results")
	timeout := fs.Duration("timeout", time.Minute, "how long -wait waits")
	metricsURL := fs.String("metrics", "", "also print the gen_ai_evaluation_* lines of this Prometheus endpoint")
	full := fs.Bool("full", false, "print whole reasons and error causes instead of cutting them to one line")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: llmeval results [flags] FILE...   (FILE: output of the Collector's file exporter, traces or logs)")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() < 1 {
		fs.Usage()
		return exitUsage
	}
	paths := fs.Args()
	deadline := time.Now().Add(*timeout)
	var spans []evaluatedSpan
	var total int
	for {
		var err error
		spans, total, err = readEvaluatedFiles(paths)
		// While waiting, the file exporter may not have created the file yet.
		if err != nil && (*wait == 0 || !errors.Is(err, os.ErrNotExist)) {
			fmt.Fprintf(stderr, "llmeval results: %v\n", err)
			return exitFailure
		}
		if len(spans) >= *wait {
			break
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(stderr, "llmeval results: only %d of %d expected evaluated spans after %s\n", len(spans), *wait, *timeout)
			printSummary(stdout, spans, total, *full)
			return exitFailure
		}
		time.Sleep(500 * time.Millisecond)
	}
	printSummary(stdout, spans, total, *full)
	if *metricsURL != "" {
		if err := printEvaluationMetrics(stdout, *metricsURL); err != nil {
			fmt.Fprintf(stderr, "llmeval results: %v\n", err)
			return exitFailure
		}
	}
	return exitOK
}

// readEvaluatedFiles reads every file and returns the evaluated calls of
// all, in start order, and the number of spans and log records read.
func readEvaluatedFiles(paths []string) ([]evaluatedSpan, int, error) {
	var all []evaluatedSpan
	total := 0
	for _, path := range paths {
		spans, n, err := readEvaluatedSpans(path)
		if err != nil {
			return nil, 0, err
		}
		all = append(all, spans...)
		total += n
	}
	slices.SortStableFunc(all, func(a, b evaluatedSpan) int { return cmp.Compare(a.start, b.start) })
	return all, total, nil
}

// readEvaluatedSpans reads every line of path and returns the spans with
// gen_ai.evaluation.result events, and the calls with
// gen_ai.evaluation.result log records (a logs pipeline's output), and the
// number of spans and log records read.
func readEvaluatedSpans(path string) ([]evaluatedSpan, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("opening file exporter output: %w", err)
	}
	defer f.Close()
	var spans []evaluatedSpan
	total := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), maxLineBytes)
	var um ptrace.JSONUnmarshaler
	calls := map[string]int{}      // trace and span id -> index in spans, for result records
	logEvents := map[string]bool{} // trace and span ids of other log records: GenAI log events
	for line := 1; sc.Scan(); line++ {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(sc.Text()), `{"resourceLogs"`) {
			ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(sc.Bytes())
			if err != nil {
				return nil, 0, fmt.Errorf("%s line %d is not OTLP/JSON logs: %w", path, line, err)
			}
			total += ld.LogRecordCount()
			spans = addResultRecords(spans, calls, logEvents, ld)
			continue
		}
		td, err := um.UnmarshalTraces(sc.Bytes())
		if err != nil {
			return nil, 0, fmt.Errorf("%s line %d is not OTLP/JSON traces: %w", path, line, err)
		}
		for _, rs := range td.ResourceSpans().All() {
			svc := "(no service.name)"
			if v, ok := rs.Resource().Attributes().Get("service.name"); ok {
				svc = v.AsString()
			}
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					total++
					es := evaluatedSpan{
						service: svc, name: sp.Name(),
						traceID: sp.TraceID().String(), spanID: sp.SpanID().String(),
						start: uint64(sp.StartTimestamp()),
					}
					for _, ev := range sp.Events().All() {
						if ev.Name() != evalconv.EventName {
							continue
						}
						es.results = append(es.results, readResult(ev.Attributes()))
					}
					if len(es.results) > 0 {
						spans = append(spans, es)
					}
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, 0, fmt.Errorf("reading %s: %w", path, err)
	}
	for i := range spans {
		if spans[i].fromRecords {
			spans[i].name = headingSpanRecords
			if logEvents[spans[i].traceID+spans[i].spanID] {
				spans[i].name = headingLogEvents
			}
		}
	}
	// Held spans are written when their results are in, not in the order
	// they were sent; start time gives the order of the traffic back.
	slices.SortStableFunc(spans, func(a, b evaluatedSpan) int { return cmp.Compare(a.start, b.start) })
	return spans, total, nil
}

// readResult reads the attributes of one gen_ai.evaluation.result event or
// log record.
func readResult(a pcommon.Map) evaluationResult {
	r := evaluationResult{}
	if v, ok := a.Get(evalconv.AttrName); ok {
		r.name = v.AsString()
	}
	if v, ok := a.Get(evalconv.AttrScoreLabel); ok {
		r.label = v.AsString()
	}
	if v, ok := a.Get(evalconv.AttrExplanation); ok {
		r.reason = v.AsString()
	}
	if v, ok := a.Get(evalconv.AttrErrorType); ok {
		r.errorType = v.AsString()
	}
	if v, ok := a.Get(evalconv.AttrScoreValue); ok {
		r.score, r.scored = v.Double(), true
	}
	return r
}

// addResultRecords adds the gen_ai.evaluation.result records of ld to the
// call (trace and span id) they evaluate, under the resource's service, and
// notes in logEvents the calls of the other records (GenAI log events).
func addResultRecords(spans []evaluatedSpan, calls map[string]int, logEvents map[string]bool, ld plog.Logs) []evaluatedSpan {
	for _, rl := range ld.ResourceLogs().All() {
		svc := "(no service.name)"
		if v, ok := rl.Resource().Attributes().Get("service.name"); ok {
			svc = v.AsString()
		}
		for _, sl := range rl.ScopeLogs().All() {
			for _, rec := range sl.LogRecords().All() {
				key := rec.TraceID().String() + rec.SpanID().String()
				if rec.EventName() != evalconv.EventName {
					logEvents[key] = true
					continue
				}
				i, ok := calls[key]
				if !ok {
					i = len(spans)
					calls[key] = i
					spans = append(spans, evaluatedSpan{
						service: svc, fromRecords: true,
						traceID: rec.TraceID().String(), spanID: rec.SpanID().String(),
						start: uint64(rec.Timestamp()),
					})
				}
				spans[i].results = append(spans[i].results, readResult(rec.Attributes()))
			}
		}
	}
	return spans
}

func printSummary(w io.Writer, spans []evaluatedSpan, total int, full bool) {
	fmt.Fprintf(w, "%d spans and log records exported, %d evaluated calls:\n", total, len(spans))
	unreachable := 0
	// The scorer column is as wide as the longest name (conversation_completeness).
	nameWidth := 17
	for _, s := range spans {
		for _, r := range s.results {
			nameWidth = max(nameWidth, len(r.name))
		}
	}
	for _, s := range spans {
		fmt.Fprintf(w, "\n  %s / %s  (trace %s, span %s)\n", s.service, s.name, shortID(s.traceID), shortID(s.spanID))
		for _, r := range s.results {
			score := "  -  "
			if r.scored {
				score = fmt.Sprintf("%5.2f", r.score)
			}
			// Error results carry error.type and no label; the span's flat
			// attribute says "error", and so does this column.
			label, text := r.label, r.reason
			if r.errorType != "" {
				label, text = cmp.Or(label, "error"), errorCause(r.errorType, r.reason)
				if judgeNotReached[r.errorType] {
					unreachable++
				}
			}
			// An error's cause is kept whole: its end (connection refused,
			// 401) is what tells the user what to fix.
			if !full && r.errorType == "" {
				text = shorten(text, 110)
			}
			fmt.Fprintf(w, "    %-*s %s  %-13s %s\n", nameWidth, r.name, score, label, text)
		}
	}
	if unreachable > 0 {
		fmt.Fprintf(w, "\n%d results are errors because no judge answered. To see scores without an API key or network,\n"+
			"run the offline demo judge (string heuristics, not an LLM), stop make run and start it again pointed at the demo judge:\n"+
			"  bin/llmeval demo-judge\n"+
			"%s", unreachable, demoRunRecipe("127.0.0.1:8089"))
	}
	if demo := demoJudgeShare(spans); demo.labelled {
		fmt.Fprintln(w, "\nThese results come from the OFFLINE DEMO JUDGE (string heuristics, not an LLM): its scores mean nothing.")
		if demo.unlabelledJudged {
			fmt.Fprintln(w, "Judged reasons without its label were composed by llm_eval from its verdicts (reason_mode: summary).")
		}
		if demo.unlabelledNotScorable {
			fmt.Fprintln(w, "not_scorable reasons are llm_eval's own: no judge was asked.")
		}
	}
}

// demoRunRecipe is how to run make run against the demo judge at addr:
// the output files first, since they grow across runs and `results -wait`
// would otherwise find the previous run's results at once.
func demoRunRecipe(addr string) string {
	return "  rm -f llmeval-*.jsonl   # make run's output files grow across runs; start them afresh\n" +
		"  LLMEVAL_JUDGE_ENDPOINT=http://" + addr + "/v1 LLMEVAL_JUDGE_MODEL=offline-demo-judge LLMEVAL_REASON_MODE=llm make run\n"
}

// demoShare says whether any reason carries the offline demo judge's
// label (then the whole listing is demo output), and which reasons do not.
type demoShare struct {
	labelled bool
	// unlabelledJudged: a scored result (pass or fail) whose reason
	// llm_eval composed from the demo judge's verdicts (reason_mode: summary).
	unlabelledJudged bool
	// unlabelledNotScorable: a not_scorable result, whose reason is
	// llm_eval's own since no judge was asked.
	unlabelledNotScorable bool
}

func demoJudgeShare(spans []evaluatedSpan) demoShare {
	var d demoShare
	for _, s := range spans {
		for _, r := range s.results {
			// The demo judge's prefix, or the replies of scoringtest's
			// default judge, which end "(offline demo judge)".
			switch {
			case strings.Contains(r.reason, "offline demo judge"):
				d.labelled = true
			case r.errorType != "" || r.reason == "":
			case r.label == string(scoring.LabelNotScorable):
				d.unlabelledNotScorable = true
			case r.scored:
				d.unlabelledJudged = true
			}
		}
	}
	return d
}

// judgeNotReached are the error types of results no judge answered, for
// which the demo judge is the way to see scores.
var judgeNotReached = map[string]bool{
	"judge_unavailable":  true,
	"judge_timeout":      true,
	"judge_auth":         true,
	"judge_circuit_open": true,
}

// errorCauses say in a user's words what each error.type means.
var errorCauses = map[string]string{
	"judge_unavailable":     "the judge could not be reached",
	"judge_timeout":         "the judge did not answer in time (judge.timeout)",
	"judge_rate_limited":    "the judge answered 429, too many requests, after retries",
	"judge_auth":            "the judge refused the API key (judge.api_key)",
	"judge_bad_request":     "the judge rejected the request",
	"judge_parse_error":     "the judge's reply could not be read, also when asked again",
	"judge_truncated":       "the judge's reply was cut at judge.max_tokens",
	"judge_circuit_open":    "not sent: the judge failed repeatedly and calls are paused (judge.circuit_breaker)",
	"judge_budget_exceeded": "not sent: over judge.requests_per_minute or tokens_per_minute",
	"canceled":              "the evaluation was cancelled",
	"invalid_case":          "the span could not be made into a case",
	"max_wait_exceeded":     "no result within max_wait; the span was sent on without it",
	"shutdown":              "the collector shut down before the result",
	"queue_full":            "not evaluated: queue_size spans were already waiting",
	"restarted":             "the collector restarted after max_wait had passed",
}

// typeAndStep matches the error type and pipeline step a judge error's
// message names ("judge_unavailable in preprocess step: "), also where one
// error wraps another (an open circuit wraps the failure that opened it).
var typeAndStep = regexp.MustCompile(`\b(?:judge_[a-z_]+|invalid_case)(?: in [a-z_]+ step)?: `)

// errorCause is an error result's cause once: what its type means, then
// the detail of its message without the error types and pipeline steps
// it names ("judge_unavailable in preprocess step: ...").
func errorCause(errorType, reason string) string {
	detail := strings.TrimSpace(reason)
	if rest, ok := strings.CutPrefix(detail, errorType); ok {
		detail = strings.TrimSpace(rest)
		if i := strings.Index(detail, " step: "); strings.HasPrefix(detail, "in ") && i >= 0 {
			detail = detail[i+len(" step: "):]
		}
		detail = strings.TrimSpace(strings.TrimPrefix(detail, ":"))
	}
	detail = strings.TrimSpace(typeAndStep.ReplaceAllString(detail, ""))
	if errorType == "judge_unavailable" {
		// The cause already says the judge could not be reached.
		detail = strings.TrimPrefix(detail, "judge unreachable: ")
	}
	cause, known := errorCauses[errorType]
	if !known {
		cause = errorType
	}
	if detail == "" || detail == errorType {
		return cause
	}
	if known && strings.HasPrefix(detail, cause) {
		// The marker's own message already starts with the cause.
		return detail
	}
	return cause + ": " + detail
}

// shortID is the first 8 hex digits of an id: enough to tell spans apart.
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// printEvaluationMetrics prints the results counters of a Prometheus text
// endpoint (the score histogram is left out for brevity).
func printEvaluationMetrics(w io.Writer, url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
	if err != nil {
		return fmt.Errorf("metrics URL: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("fetching metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetching metrics: %s", resp.Status)
	}
	fmt.Fprintf(w, "\nPrometheus metrics at %s (gen_ai_evaluation_results_total; gen_ai_evaluation_score_* omitted):\n", url)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	zero := 0
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "gen_ai_evaluation_results_total") {
			continue
		}
		// Every label set's series start at 0 (so that rate() counts the
		// first failure); listing them all would bury the counts.
		if sampleValue(line) == "0" {
			zero++
			continue
		}
		fmt.Fprintln(w, "  "+dropScopeLabels(line))
	}
	if zero > 0 {
		fmt.Fprintf(w, "  (%d series at 0 not shown: the connector starts every series at 0, so that alerts count its first result)\n", zero)
	}
	return sc.Err()
}

// sampleValue is the value of a Prometheus text-format sample line.
func sampleValue(line string) string {
	rest := strings.TrimPrefix(line, "gen_ai_evaluation_results_total")
	if i := strings.LastIndex(rest, "}"); i >= 0 {
		rest = rest[i+1:]
	}
	if f := strings.Fields(rest); len(f) > 0 {
		return f[0]
	}
	return ""
}

// dropScopeLabels removes the otel_scope_* labels, identical on every line.
func dropScopeLabels(line string) string {
	for _, l := range []string{"otel_scope_name", "otel_scope_schema_url", "otel_scope_version"} {
		i := strings.Index(line, l+"=\"")
		if i < 0 {
			continue
		}
		j := strings.Index(line[i+len(l)+2:], "\"")
		if j < 0 {
			continue
		}
		end := i + len(l) + 2 + j + 1
		if end < len(line) && line[end] == ',' {
			end++
		}
		line = line[:i] + line[end:]
	}
	return strings.Replace(line, ",}", "}", 1)
}
