package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/openai"
)

const defaultAPIKeyEnv = "OPENAI_API_KEY"

// scoreFlags are the flags of "llmeval score".
type scoreFlags struct {
	scorer            string
	endpoint          string
	model             string
	apiKeyEnv         string
	structuredOutputs string
	threshold         optionalFloat
	scale             float64
	strict            bool
	noReason          bool
	instructionsFile  string
	concurrency       int
	timeout           time.Duration
	maxTokens         int
	azure             bool
	verbose           bool
}

// optionalFloat is a float flag that knows whether it was set.
type optionalFloat struct {
	v   float64
	set bool
}

func (o *optionalFloat) String() string {
	if !o.set {
		return ""
	}
	return strconv.FormatFloat(o.v, 'g', -1, 64)
}

func (o *optionalFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return errors.New("not a number")
	}
	o.v, o.set = v, true
	return nil
}

func runScore(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var f scoreFlags
	fs := flag.NewFlagSet("llmeval score", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: llmeval score --scorer NAME --judge-endpoint URL --model MODEL [flags] < cases.jsonl > results.jsonl")
		fmt.Fprintln(stderr, `
Reads one case per line: {"input": "...", "output": "...", "context": ["..."], "instructions": ["..."], "metadata": {...}}
Writes one result per case, in input order: {"line", "scorer", "score" (null when not scored), "label",
"reason", "error", "error_type", "steps", "usage", "metadata"}. Blank lines are skipped.

Flags:`)
		fs.PrintDefaults()
	}
	fs.StringVar(&f.scorer, "scorer", "", "scorer: "+strings.Join(scoring.Names(), ", ")+" (required)")
	fs.StringVar(&f.endpoint, "judge-endpoint", "", "OpenAI-compatible API base URL, e.g. https://api.openai.com/v1 (required)")
	fs.StringVar(&f.model, "model", "", "judge model, or Azure deployment name (required)")
	fs.StringVar(&f.apiKeyEnv, "api-key-env", defaultAPIKeyEnv, "environment variable holding the judge API key")
	fs.StringVar(&f.structuredOutputs, "structured-outputs", string(openai.StructuredOutputsAuto), "auto, json_schema, json_object or off")
	fs.Var(&f.threshold, "threshold", "pass/fail threshold (default: half the scale)")
	fs.Float64Var(&f.scale, "scale", 1, "maximum score")
	fs.BoolVar(&f.strict, "strict", false, "binary scores (0 or scale) and the strictest threshold")
	fs.BoolVar(&f.noReason, "no-reason", false, "skip the reason step (one judge call less per case)")
	fs.StringVar(&f.instructionsFile, "instructions-file", "", "file with one instruction per line, used for cases that have none")
	fs.IntVar(&f.concurrency, "concurrency", 4, "cases scored at once")
	fs.DurationVar(&f.timeout, "timeout", 60*time.Second, "timeout of each judge HTTP request")
	fs.IntVar(&f.maxTokens, "max-tokens", 0, "cap on each judge reply in tokens (0: the endpoint's default)")
	fs.BoolVar(&f.azure, "azure", false, "the endpoint is Azure OpenAI (model is the deployment name)")
	fs.BoolVar(&f.verbose, "verbose", false, "include the prompts sent at every step in the results")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "unexpected argument %q (cases are read from stdin)", fs.Arg(0))
	}
	var missing []string
	for _, m := range []struct{ name, v string }{{"--scorer", f.scorer}, {"--judge-endpoint", f.endpoint}, {"--model", f.model}} {
		if strings.TrimSpace(m.v) == "" {
			missing = append(missing, m.name)
		}
	}
	if len(missing) > 0 {
		return usageError(stderr, "missing required flag %s", strings.Join(missing, ", "))
	}
	if f.concurrency < 1 {
		return usageError(stderr, "--concurrency must be at least 1, got %d", f.concurrency)
	}
	if f.timeout <= 0 {
		return usageError(stderr, "--timeout must be positive, got %s", f.timeout)
	}
	apiKey := os.Getenv(f.apiKeyEnv)
	explicitKeyEnv := false
	fs.Visit(func(fl *flag.Flag) { explicitKeyEnv = explicitKeyEnv || fl.Name == "api-key-env" })
	if explicitKeyEnv && apiKey == "" {
		return usageError(stderr, "--api-key-env: environment variable %s is empty or unset", f.apiKeyEnv)
	}
	mode, err := openai.ParseStructuredOutputs(f.structuredOutputs)
	if err != nil {
		return usageError(stderr, "--structured-outputs: %v", err)
	}
	var instructions []string
	if f.instructionsFile != "" {
		if instructions, err = readInstructions(f.instructionsFile); err != nil {
			return usageError(stderr, "--instructions-file: %v", err)
		}
	}

	judge, err := openai.NewJudge(openai.Config{
		BaseURL:           f.endpoint,
		APIKey:            apiKey,
		Model:             f.model,
		HTTPClient:        &http.Client{Timeout: f.timeout},
		MaxTokens:         f.maxTokens,
		StructuredOutputs: mode,
		Azure:             f.azure,
	})
	if err != nil {
		return usageError(stderr, "%v", err)
	}
	opts := scoring.Options{Scale: f.scale, StrictMode: f.strict, OmitReason: f.noReason, Verbose: f.verbose}
	if f.threshold.set {
		opts.Threshold = &f.threshold.v
	}
	scorer, err := scoring.New(f.scorer, judge, opts)
	if err != nil {
		return usageError(stderr, "%v", err)
	}

	s := &scoreRun{scorer: scorer, instructions: instructions, concurrency: f.concurrency}
	if isTerminal(stderr) {
		s.progress = stderr
	}
	if err := s.run(context.Background(), stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "llmeval score: %v\n", err)
		return exitFailure
	}
	return exitOK
}

func usageError(stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "llmeval score: "+format+"\n", args...)
	fmt.Fprintln(stderr, `Run "llmeval score -h" for usage.`)
	return exitUsage
}

// readInstructions reads one instruction per non-blank line.
func readInstructions(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no instructions", path)
	}
	return out, nil
}

// isTerminal reports whether w is a character device such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// scoreRun scores a JSONL stream.
type scoreRun struct {
	scorer       scoring.Scorer
	instructions []string // used when a case has none
	concurrency  int
	progress     io.Writer // nil: no progress
}

// run reads cases from in and writes results to out in input order, with
// at most concurrency cases in flight. It returns an error only when
// reading or writing fails; bad cases become error results.
func (s *scoreRun) run(ctx context.Context, in io.Reader, out io.Writer) error {
	ordered := make(chan chan record, s.concurrency)
	sem := make(chan struct{}, s.concurrency)
	readErr := make(chan error, 1)
	go func() {
		defer close(ordered)
		r := bufio.NewReader(in)
		for line := 1; ; line++ {
			text, err := r.ReadString('\n')
			if strings.TrimSpace(text) != "" {
				res := make(chan record, 1)
				ordered <- res
				sem <- struct{}{}
				go func(line int, text string) {
					defer func() { <-sem }()
					res <- s.scoreLine(ctx, line, text)
				}(line, text)
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					readErr <- fmt.Errorf("reading cases at line %d: %w", line, err)
				}
				return
			}
		}
	}()

	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	var writeErr error
	done, failed := 0, 0
	for res := range ordered {
		rec := <-res
		done++
		if rec.Label == scoring.LabelError {
			failed++
		}
		if writeErr == nil {
			if writeErr = enc.Encode(rec); writeErr == nil {
				writeErr = w.Flush()
			}
		}
		if s.progress != nil {
			fmt.Fprintf(s.progress, "\rscored %d cases, %d errors", done, failed)
		}
	}
	if s.progress != nil && done > 0 {
		fmt.Fprintln(s.progress)
	}
	select {
	case err := <-readErr:
		return err
	default:
	}
	if writeErr != nil {
		return fmt.Errorf("writing results: %w", writeErr)
	}
	return nil
}

// record is one output line.
type record struct {
	Line      int               `json:"line"`
	Scorer    string            `json:"scorer"`
	Score     *float64          `json:"score"`
	Label     scoring.Label     `json:"label"`
	Reason    string            `json:"reason"`
	Error     *string           `json:"error"`
	ErrorType *string           `json:"error_type"`
	Steps     scoring.Steps     `json:"steps"`
	Usage     scoring.Usage     `json:"usage"`
	Truncated bool              `json:"truncated,omitempty"`
	Metadata  map[string]string `json:"metadata,omitempty"`
}

// inputCase is one input line. Context and instructions may be a string
// or a list of strings.
type inputCase struct {
	Input        string            `json:"input"`
	Output       string            `json:"output"`
	Context      stringList        `json:"context"`
	Instructions stringList        `json:"instructions"`
	Metadata     map[string]string `json:"metadata"`
}

type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*l = []string{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("want a string or a list of strings")
	}
	*l = many
	return nil
}

func (s *scoreRun) scoreLine(ctx context.Context, line int, text string) record {
	var in inputCase
	if err := json.Unmarshal([]byte(text), &in); err != nil {
		msg := fmt.Sprintf("line %d: not a valid case: %v", line, err)
		typ := string(scoring.ErrorInvalidCase)
		return record{Line: line, Scorer: s.scorer.Name(), Label: scoring.LabelError, Error: &msg, ErrorType: &typ}
	}
	c := scoring.Case{Input: in.Input, Output: in.Output, Context: in.Context, Instructions: in.Instructions, Metadata: in.Metadata}
	if len(c.Instructions) == 0 {
		c.Instructions = s.instructions
	}
	res := s.scorer.Score(ctx, c)
	rec := record{
		Line: line, Scorer: res.Scorer, Label: res.Label, Reason: res.Reason,
		Steps: res.Steps, Usage: res.Usage, Truncated: res.Truncated, Metadata: in.Metadata,
	}
	if res.Scored() {
		score := res.Score
		rec.Score = &score
	}
	if res.Err != nil {
		msg := res.Err.Error()
		typ := "unknown"
		var se *scoring.Error
		if errors.As(res.Err, &se) {
			typ = string(se.Type)
		}
		rec.Error, rec.ErrorType = &msg, &typ
	}
	return rec
}
