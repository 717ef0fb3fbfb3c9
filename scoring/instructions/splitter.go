// Package instructions splits a system prompt into its separate
// instructions with one judge call, so that prompt alignment (or a
// criteria scorer that shows the judge the instructions) can judge each
// rule on its own instead of the whole prompt as one instruction.
package instructions

import (
	"context"
	"embed"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
)

// Bounds of an instruction split.
const (
	// DefaultMaxInstructions is how many instructions a split keeps unless
	// Options says otherwise. Prompt alignment sends every instruction
	// to the judge in one call and needs exactly one verdict back for each:
	// 50 verdicts of one short sentence are about 1,500 completion tokens,
	// which fits the reply limits judges are usually run with, and a
	// system prompt with more separate rules than that is rare.
	DefaultMaxInstructions = 50
	// DefaultMaxInputChars is how much of a system prompt a split sends,
	// in characters (runes), unless Options says otherwise.
	DefaultMaxInputChars = 20000
)

// Options tune a Splitter. The zero value is valid.
type Options struct {
	// MaxInputChars caps the prompt sent to the judge, in characters
	// (runes); 0 means DefaultMaxInputChars. A cut prompt ends with
	// scoring.TruncationMarker and the split has Truncated set.
	MaxInputChars int
	// MaxInstructions caps the instructions kept; 0 means
	// DefaultMaxInstructions. The rest are counted in Dropped.
	MaxInstructions int
	// Redact, when set, is applied to the prompt before it is cut and sent.
	Redact func(string) string
	// Verbose keeps the prompt sent in InstructionSplit.Prompt.
	Verbose bool
}

// Splitter asks the judge to split a system prompt into its separate
// instructions. It is safe for concurrent use.
type Splitter struct {
	judge scoring.Judge
	opts  Options
	now   func() time.Time
}

var _ scoring.Splitter = (*Splitter)(nil)

//go:embed *.tmpl
var templates embed.FS

var (
	splitPrompt = &pipeline.Prompt{Schema: pipeline.ListSchema(scoring.SchemaInstructionSplit, "instructions"), User: splitMessage, Demo: demoSplit}
	prompts     = pipeline.NewPrompts(templates, nil, splitPrompt)
)

// Prompts are the splitter's prompts.
func Prompts() *pipeline.Prompts { return prompts }

// NewSplitter returns a splitter that asks judge. It reports a nil judge
// and negative bounds.
func NewSplitter(judge scoring.Judge, opts Options) (*Splitter, error) {
	if judge == nil {
		return nil, fmt.Errorf("instruction splitter: judge is nil")
	}
	if opts.MaxInputChars < 0 {
		return nil, fmt.Errorf("instruction splitter: max input chars must not be negative, got %d", opts.MaxInputChars)
	}
	if opts.MaxInstructions < 0 {
		return nil, fmt.Errorf("instruction splitter: max instructions must not be negative, got %d", opts.MaxInstructions)
	}
	if opts.MaxInputChars == 0 {
		opts.MaxInputChars = DefaultMaxInputChars
	}
	if opts.MaxInstructions == 0 {
		opts.MaxInstructions = DefaultMaxInstructions
	}
	return &Splitter{judge: judge, opts: opts, now: time.Now}, nil
}

// Split asks the judge for the instructions of prompt: one call, plus one
// re-ask when the reply cannot be used. The prompt is redacted and cut to
// MaxInputChars first, and sent as data in a delimited block. A blank
// prompt makes no call and has no instructions.
//
// The error is an *scoring.Error with Step StepSplit: the judge's failure
// (ErrorJudgeUnavailable, ErrorCircuitOpen, ...), ErrorJudgeParse or
// ErrorJudgeTruncated after the re-ask, ErrorInvalidCase when Redact
// panicked. The split returned with an error still carries the calls'
// Usage. A reply that lists no instruction is not an error.
func (s *Splitter) Split(ctx context.Context, prompt string) (scoring.InstructionSplit, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	var out scoring.InstructionSplit
	text, truncated, err := s.prepare(prompt)
	if err != nil {
		return out, &scoring.Error{Type: scoring.ErrorInvalidCase, Step: scoring.StepSplit, Err: err}
	}
	out.Truncated = truncated
	if strings.TrimSpace(text) == "" {
		return out, nil
	}
	data := pipeline.PromptData{SystemPrompt: text}
	if s.opts.Verbose {
		msgs, err := splitPrompt.Render(data)
		if err != nil {
			return out, &scoring.Error{Type: scoring.ErrorInvalidCase, Step: scoring.StepSplit, Err: err}
		}
		out.Prompt = pipeline.PromptText(msgs)
	}
	var listed []string
	x := pipeline.Exchange{Judge: s.judge, Now: s.now, Usage: &out.Usage, Reasked: &out.Reasked}
	if err := x.Ask(ctx, scoring.StepSplit, splitPrompt, data, func(reply string) error {
		var perr error
		listed, perr = pipeline.ParseStrings(reply, splitPrompt.Schema, "instructions")
		return perr
	}); err != nil {
		return out, err
	}
	out.Instructions, out.Dropped = s.keep(listed, utf8.RuneCountInString(text))
	return out, nil
}

// prepare redacts prompt and cuts it to MaxInputChars, turning a panic in
// Redact into an error.
func (s *Splitter) prepare(prompt string) (text string, truncated bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("redact panicked: %v", r)
		}
	}()
	if s.opts.Redact != nil {
		prompt = s.opts.Redact(prompt)
	}
	text, truncated = pipeline.Truncate(scoring.NeutralizeTruncationMarkers(prompt), s.opts.MaxInputChars)
	return text, truncated, nil
}

// keep returns the listed instructions without blanks, a copied
// truncation marker or repeats, at most MaxInstructions of them and at
// most twice the prompt's length in all, and how many it left out. The
// length bound keeps a runaway reply from being stored: instructions are
// the prompt's own words, so together they are never much longer than it.
func (s *Splitter) keep(listed []string, promptRunes int) (kept []string, dropped int) {
	marker := strings.TrimSpace(scoring.TruncationMarker)
	budget := 2 * promptRunes
	seen := make(map[string]bool, len(listed))
	for _, in := range listed {
		in = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(in), marker))
		key := pipeline.StatementKey(in)
		if key == "" || seen[key] {
			continue
		}
		seen[key] = true
		n := utf8.RuneCountInString(in)
		if len(kept) == s.opts.MaxInstructions || n > budget {
			dropped++
			continue
		}
		budget -= n
		kept = append(kept, in)
	}
	return kept, dropped
}

func splitMessage(b []byte, d pipeline.PromptData) ([]byte, error) {
	b = append(b, "List the separate instructions this system prompt gives.\n\n"...)
	return pipeline.AppendText(b, "PROMPT", d.SystemPrompt), nil
}
