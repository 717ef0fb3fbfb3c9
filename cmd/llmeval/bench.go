package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/openai"
	"github.com/llm-eval/llm_eval/scoring/scorers"
)

// haluevalBaselineChars is the answer length above which the trivial
// HaluEval baseline calls an answer hallucinated.
const haluevalBaselineChars = 25

const benchHelp = `Usage: llmeval bench --dataset NAME [--file PATH] [--scorer NAME] [judge flags] [--json]

Measures a scorer against a labelled JSONL dataset and prints accuracy, precision, recall, F1,
the confusion matrix, judge calls and tokens per case, latency and the cases that errored.
The positive class is the outcome a scorer should flag: hallucinated (halueval), biased (crows),
not followed (ifeval), toxic (davidson). A case the scorer labels "fail" is predicted positive.

Datasets (--file defaults to ` + benchDataDir + `/FILE of the working directory or the nearest
directory above it that has the file, i.e. the repository's copy):
%s
ifeval works with --scorer checks only: each instruction id and kwargs is translated to checks
rules and compared with its "followed" label. Instructions with no translation, or no label, are
counted and listed, never guessed. No judge is needed (0 judge calls).

halueval, crows and davidson need an OpenAI-compatible judge (--judge-endpoint, --model, --api-key-env),
the same flags as "llmeval score". Accuracy with a real judge is for you to measure, e.g.
  llmeval bench --dataset halueval --judge-endpoint https://api.openai.com/v1 --model gpt-4o-mini
halueval also reports the baseline "answer longer than 25 characters means hallucinated",
davidson the majority-class baseline "every tweet is toxic".

--scripted-judge runs the judge scorers against the built-in scripted judge (the offline demo
judge's string heuristics, not an LLM) instead of an endpoint: the report says so, and its
figures check the pipeline and cost accounting, not any judge's accuracy. No open labelled set
for answer_relevancy or context_relevance could be had (see testdata/bench/README.md).

Flags:
`

// benchFlags are the flags of "llmeval bench".
type benchFlags struct {
	dataset, file, scorer      string
	endpoint, model, apiKeyEnv string
	structuredOutputs          string
	threshold                  optionalFloat
	concurrency                int
	timeout                    time.Duration
	maxTokens                  int
	limit                      int
	jsonOut                    bool
	azure                      bool
	provider                   providerFlags
	scripted                   bool
	explicitKeyEnv             bool
}

func runBench(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	var f benchFlags
	fs := flag.NewFlagSet("llmeval bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, benchHelp, benchDatasetTable())
		fs.PrintDefaults()
	}
	fs.StringVar(&f.dataset, "dataset", "", benchDatasetNames()+" (required)")
	fs.StringVar(&f.file, "file", "", "dataset JSONL file (default "+benchDataDir+"/<dataset file> of the repository)")
	fs.StringVar(&f.scorer, "scorer", "", "scorer to measure (default: the dataset's)")
	fs.StringVar(&f.endpoint, "judge-endpoint", "", "OpenAI-compatible API base URL (judge scorers)")
	fs.StringVar(&f.model, "model", "", "judge model (judge scorers)")
	fs.StringVar(&f.apiKeyEnv, "api-key-env", defaultAPIKeyEnv, "environment variable holding the judge API key")
	fs.StringVar(&f.structuredOutputs, "structured-outputs", string(openai.StructuredOutputsAuto), "auto, json_schema, json_object or off")
	fs.Var(&f.threshold, "threshold", "pass/fail threshold (default: the scorer's)")
	fs.IntVar(&f.concurrency, "concurrency", 4, "cases scored at once")
	fs.DurationVar(&f.timeout, "timeout", 60*time.Second, "timeout of each judge HTTP request")
	fs.IntVar(&f.maxTokens, "max-tokens", 0, "cap on each judge reply in tokens (0: the endpoint's default)")
	fs.IntVar(&f.limit, "limit", 0, "use only the first N rows (0: all)")
	fs.BoolVar(&f.jsonOut, "json", false, "print the report as one JSON object")
	fs.BoolVar(&f.azure, "azure", false, "the endpoint is Azure OpenAI (model is the deployment name)")
	f.provider.register(fs)
	fs.BoolVar(&f.scripted, "scripted-judge", false, "use the built-in scripted judge (string heuristics, not an LLM) instead of --judge-endpoint")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		return benchUsageError(stderr, "unexpected argument %q", fs.Arg(0))
	}
	fs.Visit(func(fl *flag.Flag) { f.explicitKeyEnv = f.explicitKeyEnv || fl.Name == "api-key-env" })
	i := slices.IndexFunc(benchDatasets, func(d struct{ name, file, scorer, about string }) bool { return d.name == f.dataset })
	if i < 0 {
		return benchUsageError(stderr, "--dataset: want %s, got %q", benchDatasetNames(), f.dataset)
	}
	ds := benchDatasets[i]
	if f.file == "" {
		wd, err := os.Getwd()
		if err == nil {
			f.file, err = findBenchFile(wd, ds.file)
		}
		if err != nil {
			fmt.Fprintf(stderr, "llmeval bench: %v\n", err)
			return exitFailure
		}
	}
	if f.scorer == "" {
		f.scorer = ds.scorer
	}
	if f.concurrency < 1 || f.limit < 0 || f.timeout <= 0 {
		return benchUsageError(stderr, "--concurrency must be at least 1, --limit not negative, --timeout positive")
	}
	opts := scoring.Options{OmitReason: true}
	if f.threshold.set {
		opts.Threshold = &f.threshold.v
	}

	var rep *benchReport
	var err error
	if ds.name == "ifeval" {
		if f.scorer != scoring.Checks {
			return benchUsageError(stderr, "--dataset ifeval works with --scorer checks only, got %q", f.scorer)
		}
		rows, lerr := loadIFEval(f.file)
		if lerr != nil {
			fmt.Fprintf(stderr, "llmeval bench: %v\n", lerr)
			return exitFailure
		}
		rep = benchIFEval(rows[:limitRows(len(rows), f.limit)], opts)
	} else {
		var cases []benchCase
		switch ds.name {
		case "halueval":
			cases, err = loadHaluEval(f.file)
		case "davidson":
			cases, err = loadDavidson(f.file)
		default:
			cases, err = loadCrows(f.file)
		}
		if err != nil {
			fmt.Fprintf(stderr, "llmeval bench: %v\n", err)
			return exitFailure
		}
		if f.limit > 0 { // whole rows: a CrowS-Pairs pair is two cases
			per := 1
			if ds.name == "crows" {
				per = 2
			}
			cases = cases[:limitRows(len(cases), f.limit*per)]
		}
		if f.scripted {
			if f.endpoint != "" || f.model != "" {
				return benchUsageError(stderr, "--scripted-judge replaces --judge-endpoint and --model")
			}
			stop, serr := startScriptedJudge(&f)
			if serr != nil {
				fmt.Fprintf(stderr, "llmeval bench: %v\n", serr)
				return exitFailure
			}
			defer stop()
		}
		scorer, code := benchJudgeScorer(f, opts, stderr)
		if scorer == nil {
			return code
		}
		rep = benchLabelled(context.Background(), scorer, cases, f.concurrency)
		switch ds.name {
		case "halueval":
			rep.Baseline, rep.BaselineName = lengthBaseline(cases), "len > 25"
		case "davidson":
			rep.Baseline, rep.BaselineName = majorityBaseline(cases), "always toxic"
		}
		rep.Model = f.model
		if f.scripted {
			rep.Model, rep.Judge = "", scriptedJudgeNote
		}
	}
	rep.Dataset, rep.File = ds.name, f.file
	if f.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "llmeval bench: writing report: %v\n", err)
			return exitFailure
		}
		return exitOK
	}
	if err := rep.writeTable(stdout); err != nil {
		fmt.Fprintf(stderr, "llmeval bench: writing report: %v\n", err)
		return exitFailure
	}
	return exitOK
}

func limitRows(n, limit int) int {
	if limit > 0 && limit < n {
		return limit
	}
	return n
}

func benchUsageError(stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "llmeval bench: "+format+"\n", args...)
	fmt.Fprintln(stderr, `Run "llmeval bench -h" for usage.`)
	return exitUsage
}

// benchJudgeScorer builds a judge scorer from the judge flags. On failure
// it returns nil and the exit code.
func benchJudgeScorer(f benchFlags, opts scoring.Options, stderr io.Writer) (scoring.Scorer, int) {
	if f.scorer == scoring.Checks {
		benchUsageError(stderr, "--scorer checks needs rules; it is measured on --dataset ifeval")
		return nil, exitUsage
	}
	if strings.TrimSpace(f.endpoint) == "" || strings.TrimSpace(f.model) == "" {
		benchUsageError(stderr, "--scorer %s needs --judge-endpoint and --model", f.scorer)
		return nil, exitUsage
	}
	judge, err := judgeSettings{
		endpoint: f.endpoint, model: f.model, apiKeyEnv: f.apiKeyEnv, structuredOutputs: f.structuredOutputs,
		explicitKeyEnv: f.explicitKeyEnv, timeout: f.timeout, maxTokens: f.maxTokens, azure: f.azure,
		provider: f.provider,
	}.newJudge()
	if err != nil {
		benchUsageError(stderr, "%v", err)
		return nil, exitUsage
	}
	scorer, err := scorers.NewBuilder(judge).Build(scorers.Spec{Name: f.scorer, Options: opts})
	if err != nil {
		benchUsageError(stderr, "%v", err)
		return nil, exitUsage
	}
	return scorer, exitOK
}

// confusion counts predictions against labels; positive is the flagged class.
type confusion struct {
	TP int `json:"tp"`
	FP int `json:"fp"`
	FN int `json:"fn"`
	TN int `json:"tn"`
}

func (c *confusion) add(predicted, actual bool) {
	switch {
	case predicted && actual:
		c.TP++
	case predicted:
		c.FP++
	case actual:
		c.FN++
	default:
		c.TN++
	}
}

// metrics are the usual binary classification figures; a ratio with a zero
// denominator is 0.
type metrics struct {
	N         int       `json:"n"`
	Accuracy  float64   `json:"accuracy"`
	Precision float64   `json:"precision"`
	Recall    float64   `json:"recall"`
	F1        float64   `json:"f1"`
	Confusion confusion `json:"confusion"`
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func metricsOf(c confusion) metrics {
	m := metrics{N: c.TP + c.FP + c.FN + c.TN, Confusion: c}
	m.Accuracy = ratio(c.TP+c.TN, m.N)
	m.Precision = ratio(c.TP, c.TP+c.FP)
	m.Recall = ratio(c.TP, c.TP+c.FN)
	if m.Precision+m.Recall > 0 {
		m.F1 = 2 * m.Precision * m.Recall / (m.Precision + m.Recall)
	}
	return m
}

// benchReport is what bench prints. The metrics are those of the scorer
// over the cases (instructions for ifeval) it scored.
type benchReport struct {
	Dataset string `json:"dataset"`
	File    string `json:"file"`
	Scorer  string `json:"scorer"`
	Model   string `json:"model,omitempty"`
	// Cases is the number of cases read (IFEval: prompts).
	Cases int `json:"cases"`
	metrics
	// IFEval only: agreement over mapped, labelled instructions.
	Agreement    *float64   `json:"agreement,omitempty"`
	Mapped       *int       `json:"mapped,omitempty"`
	Labelled     *int       `json:"labelled,omitempty"`
	Instructions int        `json:"instructions,omitempty"`
	Unlabelled   int        `json:"unlabelled,omitempty"`
	Unmapped     []unmapped `json:"unmapped,omitempty"`
	// CrowS-Pairs only: pairs whose more stereotypical sentence scored higher.
	PairsScored     int      `json:"pairs_scored,omitempty"`
	MoreRatedHigher *float64 `json:"more_rated_higher,omitempty"`
	// A trivial baseline over the same cases (HaluEval: answer length;
	// Davidson: the majority class), named by BaselineName.
	Baseline     *metrics `json:"baseline,omitempty"`
	BaselineName string   `json:"baseline_name,omitempty"`
	// Judge is set when the scripted judge gave the verdicts.
	Judge string `json:"judge,omitempty"`

	JudgeCalls                int         `json:"judge_calls"`
	JudgeCallsPerCase         float64     `json:"judge_calls_per_case"`
	PromptTokensPerCase       float64     `json:"prompt_tokens_per_case"`
	CompletionTokensPerCase   float64     `json:"completion_tokens_per_case"`
	LatencyMeanMS             float64     `json:"latency_mean_ms"`
	LatencyP50MS              float64     `json:"latency_p50_ms"`
	LatencyP95MS              float64     `json:"latency_p95_ms"`
	Errored                   int         `json:"errored"`
	Errors                    []caseError `json:"errors,omitempty"`
	promptTokens, complTokens int
}

// unmapped counts IFEval instructions of one id that bench did not score.
type unmapped struct {
	ID     string `json:"id"`
	Count  int    `json:"count"`
	Reason string `json:"reason"`
}

// caseError is a case the scorer could not score.
type caseError struct {
	ID    string `json:"id"`
	Type  string `json:"type"`
	Error string `json:"error"`
}

// finish fills the per-case figures from the totals.
func (r *benchReport) finish(latencies []time.Duration) {
	r.metrics = metricsOf(r.Confusion)
	r.JudgeCallsPerCase = ratio(r.JudgeCalls, r.Cases)
	r.PromptTokensPerCase = ratio(r.promptTokens, r.Cases)
	r.CompletionTokensPerCase = ratio(r.complTokens, r.Cases)
	if len(latencies) == 0 {
		return
	}
	slices.Sort(latencies)
	var sum time.Duration
	for _, l := range latencies {
		sum += l
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	r.LatencyMeanMS = ms(sum / time.Duration(len(latencies)))
	r.LatencyP50MS = ms(latencies[(len(latencies)-1)*50/100])
	r.LatencyP95MS = ms(latencies[(len(latencies)-1)*95/100])
}

// benchIFEval scores every mapped, labelled instruction with the checks
// scorer; positive means "not followed".
func benchIFEval(rows []ifevalRow, opts scoring.Options) *benchReport {
	rep := &benchReport{Scorer: scoring.Checks, Cases: len(rows)}
	mapped, labelled := 0, 0
	missing := map[string]*unmapped{}
	var latencies []time.Duration
	for _, row := range rows {
		start := time.Now()
		for _, ins := range row.Instructions {
			rep.Instructions++
			if ins.Followed == nil {
				rep.Unlabelled++
				continue
			}
			labelled++
			rules, err := ifevalRules(ins.ID, ins.Kwargs)
			var scorer scoring.Scorer
			if err == nil {
				scorer, err = scorers.NewBuilder(nil).Build(scorers.Spec{Name: scoring.Checks, Rules: rules, Options: opts})
			}
			if err != nil {
				u := missing[ins.ID]
				if u == nil {
					u = &unmapped{ID: ins.ID, Reason: err.Error()}
					missing[ins.ID] = u
				}
				u.Count++
				continue
			}
			mapped++
			res := scorer.Score(context.Background(), scoring.Case{Input: row.Prompt, Output: row.Response})
			rep.JudgeCalls += res.Usage.LLMCalls
			if !res.Scored() {
				rep.Errored++
				rep.Errors = append(rep.Errors, caseError{ID: fmt.Sprintf("%d/%s", row.Key, ins.ID), Type: string(res.Label), Error: res.Reason})
				continue
			}
			rep.Confusion.add(res.Label == scoring.LabelFail, !*ins.Followed)
		}
		latencies = append(latencies, time.Since(start))
	}
	for _, u := range missing {
		rep.Unmapped = append(rep.Unmapped, *u)
	}
	sort.Slice(rep.Unmapped, func(i, j int) bool { return rep.Unmapped[i].ID < rep.Unmapped[j].ID })
	rep.finish(latencies)
	agreement := rep.Accuracy
	rep.Agreement, rep.Mapped, rep.Labelled = &agreement, &mapped, &labelled
	return rep
}

// benchLabelled scores cases with up to concurrency at once.
func benchLabelled(ctx context.Context, scorer scoring.Scorer, cases []benchCase, concurrency int) *benchReport {
	results := make([]scoring.Result, len(cases))
	latencies := make([]time.Duration, len(cases))
	var wg sync.WaitGroup
	sem := make(chan struct{}, concurrency)
	for i := range cases {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			start := time.Now()
			results[i] = scorer.Score(ctx, cases[i].Case)
			latencies[i] = time.Since(start)
		}()
	}
	wg.Wait()

	rep := &benchReport{Scorer: scorer.Name(), Cases: len(cases)}
	pairs := map[string][2]*scoring.Result{}
	for i, res := range results {
		c := cases[i]
		rep.JudgeCalls += res.Usage.LLMCalls
		rep.promptTokens += res.Usage.PromptTokens
		rep.complTokens += res.Usage.CompletionTokens
		if !res.Scored() {
			rep.Errored++
			ce := caseError{ID: c.ID, Type: string(res.Label), Error: res.Reason}
			var se *scoring.Error
			if errors.As(res.Err, &se) {
				ce.Type, ce.Error = string(se.Type), se.Error()
			}
			rep.Errors = append(rep.Errors, ce)
			continue
		}
		rep.Confusion.add(res.Label == scoring.LabelFail, c.Positive)
		if c.Pair != "" {
			p := pairs[c.Pair]
			if c.More {
				p[0] = &results[i]
			} else {
				p[1] = &results[i]
			}
			pairs[c.Pair] = p
		}
	}
	if len(pairs) > 0 {
		higher := 0
		for _, p := range pairs {
			if p[0] != nil && p[1] != nil {
				rep.PairsScored++
				if p[0].Score > p[1].Score {
					higher++
				}
			}
		}
		share := ratio(higher, rep.PairsScored)
		rep.MoreRatedHigher = &share
	}
	rep.finish(latencies)
	return rep
}

// lengthBaseline predicts "hallucinated" for answers longer than
// haluevalBaselineChars characters.
func lengthBaseline(cases []benchCase) *metrics {
	var c confusion
	for _, bc := range cases {
		c.add(utf8.RuneCountInString(bc.Case.Output) > haluevalBaselineChars, bc.Positive)
	}
	m := metricsOf(c)
	return &m
}

// majorityBaseline predicts the more common label of cases for every case.
func majorityBaseline(cases []benchCase) *metrics {
	positives := 0
	for _, bc := range cases {
		if bc.Positive {
			positives++
		}
	}
	predict := 2*positives >= len(cases)
	var c confusion
	for _, bc := range cases {
		c.add(predict, bc.Positive)
	}
	m := metricsOf(c)
	return &m
}

// writeTable prints the report for a reader.
func (r *benchReport) writeTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "dataset\t%s (%s)\n", r.Dataset, r.File)
	fmt.Fprintf(tw, "scorer\t%s\n", r.Scorer)
	if r.Model != "" {
		fmt.Fprintf(tw, "judge model\t%s\n", r.Model)
	}
	if r.Judge != "" {
		fmt.Fprintf(tw, "judge\t%s\n", r.Judge)
	}
	fmt.Fprintf(tw, "cases\t%d\n", r.Cases)
	if r.Agreement != nil {
		fmt.Fprintf(tw, "instructions\t%d (%d labelled, %d without a label)\n", r.Instructions, *r.Labelled, r.Unlabelled)
		fmt.Fprintf(tw, "mapped\t%d of %d labelled (%.1f %%)\n", *r.Mapped, *r.Labelled, 100*ratio(*r.Mapped, *r.Labelled))
		fmt.Fprintf(tw, "agreement\t%.4f\n", *r.Agreement)
	}
	fmt.Fprintln(tw)
	if r.Baseline != nil {
		fmt.Fprintf(tw, "\tscorer\tbaseline (%s)\n", r.BaselineName)
	}
	row := func(name string, v, b float64) {
		if r.Baseline != nil {
			fmt.Fprintf(tw, "%s\t%.4f\t%.4f\n", name, v, b)
		} else {
			fmt.Fprintf(tw, "%s\t%.4f\t\n", name, v)
		}
	}
	var b metrics
	if r.Baseline != nil {
		b = *r.Baseline
	}
	row("accuracy", r.Accuracy, b.Accuracy)
	row("precision", r.Precision, b.Precision)
	row("recall", r.Recall, b.Recall)
	row("f1", r.F1, b.F1)
	cm := func(c confusion) string { return fmt.Sprintf("tp %d fp %d fn %d tn %d", c.TP, c.FP, c.FN, c.TN) }
	if r.Baseline != nil {
		fmt.Fprintf(tw, "confusion\t%s\t%s\n", cm(r.Confusion), cm(b.Confusion))
	} else {
		fmt.Fprintf(tw, "confusion\t%s\t\n", cm(r.Confusion))
	}
	if r.MoreRatedHigher != nil {
		fmt.Fprintf(tw, "more biased scored higher\t%.4f of %d pairs\t\n", *r.MoreRatedHigher, r.PairsScored)
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "judge calls\t%d (%.2f per case)\n", r.JudgeCalls, r.JudgeCallsPerCase)
	fmt.Fprintf(tw, "tokens per case\t%.1f prompt, %.1f completion\n", r.PromptTokensPerCase, r.CompletionTokensPerCase)
	fmt.Fprintf(tw, "latency per case\tmean %.2f ms, p50 %.2f ms, p95 %.2f ms\n", r.LatencyMeanMS, r.LatencyP50MS, r.LatencyP95MS)
	fmt.Fprintf(tw, "errored\t%d\n", r.Errored)
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "  error %s: %s: %s\n", e.ID, e.Type, e.Error)
	}
	for _, u := range r.Unmapped {
		fmt.Fprintf(w, "  not mapped: %s ×%d: %s\n", u.ID, u.Count, u.Reason)
	}
	return nil
}
