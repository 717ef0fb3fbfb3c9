package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llm-eval/llm_eval/internal/suggest"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/criteria"
	"github.com/llm-eval/llm_eval/scoring/openai"
	"github.com/llm-eval/llm_eval/scoring/scorers"
)

const (
	defaultAPIKeyEnv = "OPENAI_API_KEY"
	// defaultMaxInputChars matches the processor's max_input_chars default.
	defaultMaxInputChars = 20000
	// defaultMaxLineBytes bounds one input line; a case is text, not a dump.
	defaultMaxLineBytes = 1 << 20
)

// knownCaseFields lists the fields of an input line, and of its
// trajectory's steps, for error messages.
const knownCaseFields = "input, output, context, instructions, trajectory, turns, metadata; " +
	"trajectory: steps, tools (name, description); a step: kind, output, tool_calls (id, name, arguments), tool, call_id, arguments, result, error, count; " +
	"a turn: role, content, count"

// scoreFlags are the flags of "llmeval score".
type scoreFlags struct {
	scorer            string
	endpoint          string
	model             string
	apiKeyEnv         string
	structuredOutputs string
	threshold         optionalFloat
	// uncertaintyWeight and the penalties tune answer_relevancy and
	// context_relevance; unset keeps the library's defaults.
	uncertaintyWeight optionalFloat
	penaltyUnused     optionalFloat
	penaltyMissing    optionalFloat
	penaltyMaxMissing optionalFloat
	scale             float64
	strict            bool
	noReason          bool
	reasonMode        string
	instructionsFile  string
	concurrency       int
	timeout           time.Duration
	maxTokens         int
	azure             bool
	provider          providerFlags
	verbose           bool
	maxInputChars     int
	// maxTurns and conversationWindow bound the conversation scorers; 0
	// keeps the library's defaults.
	maxTurns           int
	conversationWindow int
	historyTurns       int
	maxContextChunks   int
	// instructionSources says whose instructions prompt_alignment judges.
	instructionSources string
	maxLineBytes       int
	allowErrors        bool
	// The criteria scorer's settings (--scorer criteria).
	criteriaName    string
	criteria        string
	criteriaSteps   repeatedString
	criteriaFields  string
	criteriaVerdict string
	// rulesFile holds the checks scorer's rules (--scorer checks).
	rulesFile string
}

// repeatedString is a flag that may be given several times.
type repeatedString []string

func (r *repeatedString) String() string { return strings.Join(*r, "; ") }

func (r *repeatedString) Set(s string) error {
	*r = append(*r, s)
	return nil
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
		fmt.Fprintln(stderr, "       llmeval score --scorer checks --rules rules.json [flags] < cases.jsonl > results.jsonl")
		fmt.Fprintln(stderr, `
Reads one case per line: {"input": "...", "output": "...", "context": ["..."], "instructions": ["..."],
"trajectory": {"steps": [...]}, "turns": [...], "metadata": {...}}. A conversation (for
conversation_completeness, knowledge_retention, role_adherence and conversation_relevancy) is
{"turns": [{"role": "user", "content": "..."}, {"role": "assistant", "content": "..."}, ...],
"instructions": "the system prompt"}; output may then be left out. With "input", "turns" holds the
conversation before it, oldest first: answer_relevancy reads what a follow-up question refers to,
task_completion works out the request's requirements and prompt_alignment reads the user's
instructions with them. A trajectory (an agent run's steps, for
task_completion, tool_use and the checks trajectory rules) lists steps such as
{"kind": "generation", "output": "...", "tool_calls": [{"id": "c1", "name": "search", "arguments": "{...}"}]},
{"kind": "tool", "tool": "search", "call_id": "c1", "result": "...", "error": "..."} and {"kind": "omitted", "count": 12}.
Writes one result per case, in input order: {"line", "scorer", "score" (null when not scored), "label",
"reason", "error", "error_type", "steps", "usage", "metadata"}. Blank lines are skipped.
A line with an unknown field, without "output" (or "turns"), or longer than --max-line-bytes gets label
"error" (error_type "invalid_case") and the other lines are still scored. A summary line
(cases, pass, fail, not_scorable, error) goes to stderr.

Exit status: 0 when every case has a verdict (pass, fail or not_scorable); 3 when any case
ended in error (judge unreachable, malformed line), unless --allow-errors; 2 for bad flags;
1 when reading or writing fails.
A failed reason step keeps the score; steps.generateReasonError says why.

Custom criteria (G-Eval style): --scorer criteria --criteria-name NAME --criteria "TEXT", optionally
--criteria-step "STEP" (repeat, in order), --criteria-fields input,output,context,instructions
(default input,output) and --criteria-verdict score (judge gives 0-10, scaled) or binary (yes/no).
Higher is better; the result's "scorer" is NAME. Example:
  llmeval score --scorer criteria --criteria-name politeness \
    --criteria "The response is polite and never blames the user." \
    --judge-endpoint https://api.openai.com/v1 --model gpt-4o-mini < cases.jsonl

The checks scorer needs no judge: --rules names a JSON file holding a list of rules, e.g.
[{"type": "json_valid"}, {"type": "words", "max": 100}, {"type": "regex_absent", "pattern": "(?i)as an ai"}]
(rule types and their keys: docs/scorers.md / checks.Rule). Its score is the share of rules passed.

Flags:`)
		fs.PrintDefaults()
	}
	fs.StringVar(&f.scorer, "scorer", "", "scorer, or a comma-separated list of judge scorers: "+strings.Join(cliScorerNames(), ", ")+" (required)")
	fs.StringVar(&f.rulesFile, "rules", "", "JSON file with the rules of the checks scorer")
	fs.StringVar(&f.endpoint, "judge-endpoint", "", "OpenAI-compatible API base URL, e.g. https://api.openai.com/v1 (required)")
	fs.StringVar(&f.model, "model", "", "judge model, or Azure deployment name (required)")
	fs.StringVar(&f.apiKeyEnv, "api-key-env", defaultAPIKeyEnv, "environment variable holding the judge API key")
	fs.StringVar(&f.structuredOutputs, "structured-outputs", string(openai.StructuredOutputsAuto), "auto, json_schema, json_object or off")
	fs.Var(&f.threshold, "threshold", "pass/fail threshold (default: half the scale)")
	fs.Float64Var(&f.scale, "scale", 1, "maximum score")
	fs.Var(&f.uncertaintyWeight, "uncertainty-weight", "answer_relevancy: what an \"unsure\" statement counts for, 0 to 1 (default 0.3)")
	fs.Var(&f.penaltyUnused, "penalty-unused-high", "context_relevance: deduction per highly relevant item the answer did not use (default 0.1)")
	fs.Var(&f.penaltyMissing, "penalty-missing", "context_relevance: deduction per piece of information no item had (default 0.15)")
	fs.Var(&f.penaltyMaxMissing, "penalty-max-missing", "context_relevance: cap on the deduction for missing information (default 0.5)")
	fs.BoolVar(&f.strict, "strict", false, "binary scores (0 or scale) and the strictest threshold")
	fs.BoolVar(&f.noReason, "no-reason", false, "no reason at all (one judge call less per case)")
	fs.StringVar(&f.reasonMode, "reason-mode", string(scoring.ReasonLLM), "llm (the judge writes the reason in one more call) or summary (built from the verdicts, no extra call)")
	fs.StringVar(&f.instructionsFile, "instructions-file", "", "file with one instruction per line, used for cases that have none")
	fs.IntVar(&f.concurrency, "concurrency", 4, "cases scored at once")
	fs.DurationVar(&f.timeout, "timeout", 60*time.Second, "timeout of each judge HTTP request")
	fs.IntVar(&f.maxTokens, "max-tokens", 0, "cap on each judge reply in tokens (0: the endpoint's default)")
	fs.BoolVar(&f.azure, "azure", false, "the endpoint is Azure OpenAI (model is the deployment name)")
	f.provider.register(fs)
	fs.BoolVar(&f.verbose, "verbose", false, "include the prompts sent at every step in the results")
	fs.IntVar(&f.maxInputChars, "max-input-chars", defaultMaxInputChars, "cap on each text sent to the judge, in characters (0: no cap); cut text carries a marker")
	fs.IntVar(&f.maxTurns, "max-turns", scoring.DefaultMaxTurns, "conversation scorers: messages of a conversation sent to the judge; a longer one keeps its first and last messages")
	fs.IntVar(&f.conversationWindow, "conversation-window", scoring.DefaultConversationWindow, "conversation_relevancy: exchanges each reply is judged against, its own included")
	fs.IntVar(&f.historyTurns, "history-turns", scoring.DefaultHistoryTurns, "answer_relevancy, task_completion and prompt_alignment: the last messages of a case's turns they read as the conversation before the input")
	fs.IntVar(&f.maxContextChunks, "max-context-chunks", scoring.DefaultMaxContextChunks, "hallucination: requests at most for a context longer than --max-input-chars, judged in chunks of that many characters")
	fs.StringVar(&f.instructionSources, "instruction-sources", "", "prompt_alignment: whose instructions are judged, both (the case's instructions and the user's), system or user (default both)")
	fs.IntVar(&f.maxLineBytes, "max-line-bytes", defaultMaxLineBytes, "longest input line accepted, in bytes")
	fs.BoolVar(&f.allowErrors, "allow-errors", false, "exit 0 even when some cases end in error")
	fs.StringVar(&f.criteriaName, "criteria-name", "", "criteria scorer: its name in results (lowercase, digits, _)")
	fs.StringVar(&f.criteria, "criteria", "", "criteria scorer: what a good response does, in plain words")
	fs.Var(&f.criteriaSteps, "criteria-step", "criteria scorer: an evaluation step for the judge (repeat, in order)")
	fs.StringVar(&f.criteriaFields, "criteria-fields", "", "criteria scorer: comma-separated fields the judge sees: input, output, context, instructions (default input,output)")
	fs.StringVar(&f.criteriaVerdict, "criteria-verdict", string(criteria.Score), "criteria scorer: score (0-10 points, scaled) or binary (yes/no)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "unexpected argument %q (cases are read from stdin)", fs.Arg(0))
	}
	names, err := parseScorerList(f.scorer)
	if err != nil {
		return usageError(stderr, "--scorer: %v", err)
	}
	if f.scorer == scoring.Checks {
		return runChecksScore(f, stdin, stdout, stderr)
	}
	if f.rulesFile != "" {
		return usageError(stderr, "--rules is for --scorer %s only", scoring.Checks)
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
	if !slices.Contains(names, scoring.Criteria) {
		var stray []string
		fs.Visit(func(fl *flag.Flag) {
			if strings.HasPrefix(fl.Name, "criteria") {
				stray = append(stray, "--"+fl.Name)
			}
		})
		if len(stray) > 0 {
			return usageError(stderr, "%s only apply to --scorer %s", strings.Join(stray, ", "), scoring.Criteria)
		}
	}
	if f.concurrency < 1 {
		return usageError(stderr, "--concurrency must be at least 1, got %d", f.concurrency)
	}
	if f.timeout <= 0 {
		return usageError(stderr, "--timeout must be positive, got %s", f.timeout)
	}
	if f.maxInputChars < 0 {
		return usageError(stderr, "--max-input-chars must not be negative, got %d", f.maxInputChars)
	}
	if f.maxContextChunks < 1 {
		return usageError(stderr, "--max-context-chunks must be at least 1, got %d", f.maxContextChunks)
	}
	if f.maxLineBytes < 1 {
		return usageError(stderr, "--max-line-bytes must be at least 1, got %d", f.maxLineBytes)
	}
	explicitKeyEnv := false
	fs.Visit(func(fl *flag.Flag) { explicitKeyEnv = explicitKeyEnv || fl.Name == "api-key-env" })
	var instructions []string
	if f.instructionsFile != "" {
		var err error
		if instructions, err = readInstructions(f.instructionsFile); err != nil {
			return usageError(stderr, "--instructions-file: %v", err)
		}
	}
	judge, err := judgeSettings{
		endpoint: f.endpoint, model: f.model, apiKeyEnv: f.apiKeyEnv, structuredOutputs: f.structuredOutputs,
		explicitKeyEnv: explicitKeyEnv, timeout: f.timeout, maxTokens: f.maxTokens, azure: f.azure,
		provider: f.provider,
	}.newJudge()
	if err != nil {
		return usageError(stderr, "%v", err)
	}
	if m := scoring.ReasonMode(f.reasonMode); m != scoring.ReasonLLM && m != scoring.ReasonSummary {
		return usageError(stderr, "--reason-mode %q: want %s or %s", f.reasonMode, scoring.ReasonLLM, scoring.ReasonSummary)
	}
	if f.maxTurns < 2 {
		return usageError(stderr, "--max-turns must be at least 2, got %d", f.maxTurns)
	}
	if f.conversationWindow < 1 {
		return usageError(stderr, "--conversation-window must be at least 1, got %d", f.conversationWindow)
	}
	if f.historyTurns < 1 {
		return usageError(stderr, "--history-turns must be at least 1, got %d", f.historyTurns)
	}
	opts := scoring.Options{Scale: f.scale, StrictMode: f.strict, OmitReason: f.noReason, ReasonMode: scoring.ReasonMode(f.reasonMode),
		Verbose: f.verbose, MaxInputChars: f.maxInputChars, MaxContextChunks: f.maxContextChunks,
		MaxTurns: f.maxTurns, ConversationWindow: f.conversationWindow, HistoryTurns: f.historyTurns}
	if msg := instructionSourcesFlag(f, names, &opts); msg != "" {
		return usageError(stderr, "%s", msg)
	}
	if f.threshold.set {
		opts.Threshold = &f.threshold.v
	}
	if msg := ragFlags(f, names, &opts); msg != "" {
		return usageError(stderr, "%s", msg)
	}
	// One builder for the run: lines that repeat a request are measured
	// against one list of task_completion requirements.
	builder := scorers.NewBuilder(judge)
	var built []scoring.Scorer
	for _, name := range names {
		scorer, err := newCLIScorer(builder, name, f, opts)
		if err != nil {
			return usageError(stderr, "%v", err)
		}
		built = append(built, scorer)
	}

	s := &scoreRun{scorers: built, instructions: instructions, concurrency: f.concurrency, maxLineBytes: f.maxLineBytes}
	return s.execute(stdin, stdout, stderr, f.allowErrors)
}

// instructionSourcesFlag moves --instruction-sources into opts, or says
// why it does not apply.
func instructionSourcesFlag(f scoreFlags, names []string, opts *scoring.Options) string {
	if f.instructionSources == "" {
		return ""
	}
	if !slices.Contains(names, scoring.PromptAlignment) {
		return "--instruction-sources is for --scorer " + scoring.PromptAlignment + " only"
	}
	switch src := scoring.InstructionSources(f.instructionSources); src {
	case scoring.SourcesBoth, scoring.SourcesSystem, scoring.SourcesUser:
		opts.InstructionSources = src
		return ""
	}
	return fmt.Sprintf("--instruction-sources %q: want %s, %s or %s", f.instructionSources, scoring.SourcesBoth, scoring.SourcesSystem, scoring.SourcesUser)
}

// ragFlags moves the answer_relevancy and context_relevance flags into
// opts, shared by the scorers of names (the others ignore them), or says
// why they do not apply. Their ranges are checked by the
// library.
func ragFlags(f scoreFlags, names []string, opts *scoring.Options) string {
	if f.uncertaintyWeight.set {
		if !slices.Contains(names, scoring.AnswerRelevancy) {
			return "--uncertainty-weight is for --scorer " + scoring.AnswerRelevancy + " only"
		}
		opts.UncertaintyWeight = &f.uncertaintyWeight.v
	}
	penalties := []*optionalFloat{&f.penaltyUnused, &f.penaltyMissing, &f.penaltyMaxMissing}
	if !slices.ContainsFunc(penalties, func(o *optionalFloat) bool { return o.set }) {
		return ""
	}
	if !slices.Contains(names, scoring.ContextRelevance) {
		return "--penalty-* flags are for --scorer " + scoring.ContextRelevance + " only"
	}
	p := scoring.DefaultContextPenalties()
	for i, dst := range []*float64{&p.UnusedHighRelevance, &p.MissingPerItem, &p.MaxMissing} {
		if penalties[i].set {
			*dst = penalties[i].v
		}
	}
	opts.ContextPenalties = &p
	return ""
}

// execute scores every case of stdin onto stdout, prints the summary line on
// stderr and returns the exit code: exitCasesErrored when a case ended in
// error, unless --allow-errors.
func (s *scoreRun) execute(stdin io.Reader, stdout, stderr io.Writer, allowErrors bool) int {
	if isTerminal(stderr) {
		s.progress = stderr
	}
	tally, err := s.run(context.Background(), stdin, stdout)
	fmt.Fprintf(stderr, "llmeval score: %s\n", tally)
	if err != nil {
		fmt.Fprintf(stderr, "llmeval score: %v\n", err)
		return exitFailure
	}
	if tally.errors > 0 && !allowErrors {
		return exitCasesErrored
	}
	return exitOK
}

// tally counts the labels of a run's results.
type tally struct {
	cases, pass, fail, notScorable, errors int // cases counts results: one per case and scorer
}

func (t *tally) add(l scoring.Label) {
	t.cases++
	switch l {
	case scoring.LabelPass:
		t.pass++
	case scoring.LabelFail:
		t.fail++
	case scoring.LabelNotScorable:
		t.notScorable++
	default:
		t.errors++
	}
}

func (t tally) String() string {
	return fmt.Sprintf("%d results: %d pass, %d fail, %d not_scorable, %d error", t.cases, t.pass, t.fail, t.notScorable, t.errors)
}

// cliScorerNames are the names --scorer takes.
func cliScorerNames() []string {
	return append(scorers.Names(), scoring.Criteria, scoring.Checks)
}

// parseScorerList reads --scorer: one name, or a comma-separated list of
// judge scorers, each scored on every case. checks needs no judge and
// takes its own flags, so it is scored alone.
func parseScorerList(value string) ([]string, error) {
	var names []string
	for _, n := range strings.Split(value, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if !slices.Contains(cliScorerNames(), n) {
			hint := ""
			if best := suggest.Scorer(n, cliScorerNames()); best != "" {
				hint = fmt.Sprintf(" (did you mean %s?)", best)
			}
			return nil, fmt.Errorf("unknown scorer %q%s: want one of %s", n, hint, strings.Join(cliScorerNames(), ", "))
		}
		if slices.Contains(names, n) {
			return nil, fmt.Errorf("scorer %q is listed twice", n)
		}
		names = append(names, n)
	}
	if len(names) > 1 && slices.Contains(names, scoring.Checks) {
		return nil, fmt.Errorf("%s needs no judge and is scored alone; run it separately", scoring.Checks)
	}
	return names, nil
}

// newCLIScorer builds the named scorer; criteria errors name their flag.
func newCLIScorer(b *scorers.Builder, name string, f scoreFlags, opts scoring.Options) (scoring.Scorer, error) {
	spec := scorers.Spec{Name: name, Options: opts}
	if name == scoring.Criteria {
		cfg := criteria.Config{Criteria: f.criteria, Steps: f.criteriaSteps, Verdict: criteria.Verdict(f.criteriaVerdict)}
		for _, field := range strings.Split(f.criteriaFields, ",") {
			if field = strings.TrimSpace(field); field != "" {
				cfg.Fields = append(cfg.Fields, scoring.Field(field))
			}
		}
		spec = scorers.Spec{Name: f.criteriaName, Criteria: &cfg, Options: opts}
		if err := spec.Validate(); err != nil {
			// Validate names the key (name, criteria, steps, fields,
			// verdict); on the command line each is a --criteria-... flag.
			key, msg, _ := strings.Cut(err.Error(), ": ")
			flagName := "--criteria-" + strings.TrimSuffix(key, "s")
			switch key {
			case "criteria":
				flagName = "--criteria"
			case "fields":
				flagName = "--criteria-fields"
			}
			return nil, fmt.Errorf("%s: %s", flagName, msg)
		}
	}
	return b.Build(spec)
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
	scorers      []scoring.Scorer // each scores every case, in this order
	instructions []string         // used when a case has none
	concurrency  int
	maxLineBytes int       // longer lines become invalid_case results
	progress     io.Writer // nil: no progress
}

// run reads cases from in and writes results to out in input order, with
// at most concurrency cases in flight. It returns an error only when
// reading or writing fails; bad cases become error results.
func (s *scoreRun) run(ctx context.Context, in io.Reader, out io.Writer) (tally, error) {
	ordered := make(chan chan []record, s.concurrency)
	sem := make(chan struct{}, s.concurrency)
	readErr := make(chan error, 1)
	go func() {
		defer close(ordered)
		r := bufio.NewReader(in)
		for line := 1; ; line++ {
			text, tooLong, err := readLine(r, s.maxLineBytes)
			if tooLong {
				res := make(chan []record, 1)
				res <- s.invalid(line, fmt.Errorf("line is longer than %d bytes (--max-line-bytes)", s.maxLineBytes))
				ordered <- res
			} else if strings.TrimSpace(text) != "" {
				res := make(chan []record, 1)
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
	var t tally
	for res := range ordered {
		for _, rec := range <-res {
			t.add(rec.Label)
			if writeErr == nil {
				if writeErr = enc.Encode(rec); writeErr == nil {
					writeErr = w.Flush()
				}
			}
		}
		if s.progress != nil {
			fmt.Fprintf(s.progress, "\rscored %d cases, %d errors", t.cases, t.errors)
		}
	}
	if s.progress != nil && t.cases > 0 {
		fmt.Fprintln(s.progress)
	}
	select {
	case err := <-readErr:
		return t, err
	default:
	}
	if writeErr != nil {
		return t, fmt.Errorf("writing results: %w", writeErr)
	}
	return t, nil
}

// readLine reads one line of at most max bytes (without the newline). A
// longer line is consumed to its end and reported as tooLong, so one huge
// line costs no more memory than max.
func readLine(r *bufio.Reader, max int) (text string, tooLong bool, err error) {
	var b []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(b)+len(chunk) > max+1 { // +1: the newline itself
				tooLong, b = true, nil
			} else {
				b = append(b, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			return "", true, err
		}
		return string(b), false, err
	}
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
	Input        string              `json:"input"`
	Output       *string             `json:"output"` // required; may be ""
	Context      stringList          `json:"context"`
	Instructions stringList          `json:"instructions"`
	Trajectory   *scoring.Trajectory `json:"trajectory"`
	// Turns are a conversation's messages (before input and output, when
	// those are given); with turns, output may be left out.
	Turns    []scoring.Turn    `json:"turns"`
	Metadata map[string]string `json:"metadata"`
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

// invalid is each scorer's result of a line that is not a usable case.
func (s *scoreRun) invalid(line int, err error) []record {
	msg := fmt.Sprintf("line %d: not a valid case: %v", line, err)
	typ := string(scoring.ErrorInvalidCase)
	recs := make([]record, len(s.scorers))
	for i, sc := range s.scorers {
		recs[i] = record{Line: line, Scorer: sc.Name(), Label: scoring.LabelError, Error: &msg, ErrorType: &typ}
	}
	return recs
}

// decodeCase parses one line strictly: a misspelled field is an error, not
// a silently empty one.
func decodeCase(text string) (inputCase, error) {
	var in inputCase
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return in, fmt.Errorf("unknown field %s (known fields: %s)", field, knownCaseFields)
		}
		return in, err
	}
	if dec.More() {
		return in, errors.New("more than one JSON value on the line")
	}
	if in.Output == nil && in.Turns == nil {
		return in, fmt.Errorf(`missing field "output" (known fields: %s)`, knownCaseFields)
	}
	if err := in.Trajectory.Validate(); err != nil {
		return in, err
	}
	if err := scoring.ValidateTurns(in.Turns); err != nil {
		return in, err
	}
	// A line cannot say a message was cut (scoring.Turn.Cut, set by the
	// processor for its reader's cut), as it cannot list cut fields: a
	// marker ending one of its texts is the text's own.
	for i, t := range in.Turns {
		if t.Cut {
			return in, fmt.Errorf(`turn %d: unknown field "cut" (known turn fields: role, content, count)`, i)
		}
	}
	return in, nil
}

// scoreLine scores one line with every scorer, one record each.
func (s *scoreRun) scoreLine(ctx context.Context, line int, text string) []record {
	in, err := decodeCase(text)
	if err != nil {
		return s.invalid(line, err)
	}
	c := scoring.Case{Input: in.Input, Context: in.Context, Instructions: in.Instructions,
		Trajectory: in.Trajectory, Turns: in.Turns, Metadata: in.Metadata}
	if in.Output != nil {
		c.Output = *in.Output
	}
	if len(c.Instructions) == 0 {
		c.Instructions = s.instructions
	}
	recs := make([]record, len(s.scorers))
	for i, sc := range s.scorers {
		recs[i] = newRecord(line, sc.Score(ctx, c), in.Metadata)
	}
	return recs
}

// newRecord is the output line of one result.
func newRecord(line int, res scoring.Result, metadata map[string]string) record {
	rec := record{
		Line: line, Scorer: res.Scorer, Label: res.Label, Reason: res.Reason,
		Steps: res.Steps, Usage: res.Usage, Truncated: res.Truncated, Metadata: metadata,
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
