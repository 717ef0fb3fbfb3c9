package scoring

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds of an instruction split.
const (
	// DefaultMaxInstructions is how many instructions a split keeps unless
	// SplitOptions says otherwise. Prompt alignment sends every instruction
	// to the judge in one call and needs exactly one verdict back for each:
	// 50 verdicts of one short sentence are about 1,500 completion tokens,
	// which fits the reply limits judges are usually run with, and a
	// system prompt with more separate rules than that is rare.
	DefaultMaxInstructions = 50
	// DefaultSplitMaxInputChars is how much of a system prompt a split
	// sends, in characters (runes), unless SplitOptions says otherwise.
	DefaultSplitMaxInputChars = 20000
)

// SplitOptions tune an InstructionSplitter. The zero value is valid.
type SplitOptions struct {
	// MaxInputChars caps the prompt sent to the judge, in characters
	// (runes); 0 means DefaultSplitMaxInputChars. A cut prompt ends with
	// TruncationMarker and the split has Truncated set.
	MaxInputChars int
	// MaxInstructions caps the instructions kept; 0 means
	// DefaultMaxInstructions. The rest are counted in Dropped.
	MaxInstructions int
	// Redact, when set, is applied to the prompt before it is cut and sent.
	Redact func(string) string
	// Verbose keeps the prompt sent in InstructionSplit.Prompt.
	Verbose bool
}

// InstructionSplit is what a Splitter found in one system prompt.
type InstructionSplit struct {
	// Instructions are the prompt's separate instructions in its own
	// words, in the prompt's order, each once. Empty when the prompt gives
	// none (only a role, background facts) or is blank.
	Instructions []string `json:"instructions"`
	// Usage is what the judge calls cost, the re-ask included; zero when
	// Cached.
	Usage Usage `json:"usage"`
	// Truncated is set when the prompt was cut to MaxInputChars before it
	// was sent: instructions after the cut are missing.
	Truncated bool `json:"truncated,omitempty"`
	// Dropped counts the instructions the judge listed beyond
	// MaxInstructions, or beyond twice the prompt's length in all, which
	// were not kept.
	Dropped int `json:"dropped,omitempty"`
	// Cached is set when a cache answered (a stored split, or one shared
	// with an identical call in flight): no judge call was made for it.
	Cached bool `json:"cached,omitempty"`
	// Prompt is the prompt sent, kept when SplitOptions.Verbose is set.
	Prompt string `json:"prompt,omitempty"`
}

// Splitter splits a system prompt into its separate instructions.
// *InstructionSplitter is one; guard.SplitCache wraps one with a cache.
type Splitter interface {
	Split(ctx context.Context, prompt string) (InstructionSplit, error)
}

// InstructionSplitter asks the judge to split a system prompt into its
// separate instructions, so that prompt alignment can judge each rule on
// its own instead of the whole prompt as one instruction. It is safe for
// concurrent use.
type InstructionSplitter struct {
	judge Judge
	opts  SplitOptions
	now   func() time.Time
}

var _ Splitter = (*InstructionSplitter)(nil)

// NewInstructionSplitter returns a splitter that asks judge. It reports a
// nil judge and negative bounds.
func NewInstructionSplitter(judge Judge, opts SplitOptions) (*InstructionSplitter, error) {
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
		opts.MaxInputChars = DefaultSplitMaxInputChars
	}
	if opts.MaxInstructions == 0 {
		opts.MaxInstructions = DefaultMaxInstructions
	}
	return &InstructionSplitter{judge: judge, opts: opts, now: time.Now}, nil
}

// Split asks the judge for the instructions of prompt: one call, plus one
// re-ask when the reply cannot be used. The prompt is redacted and cut to
// MaxInputChars first, and sent as data in a delimited block. A blank
// prompt makes no call and has no instructions.
//
// The error is an *Error with Step StepSplit: the judge's failure
// (ErrorJudgeUnavailable, ErrorCircuitOpen, ...), ErrorJudgeParse or
// ErrorJudgeTruncated after the re-ask, ErrorInvalidCase when Redact
// panicked. The split returned with an error still carries the calls'
// Usage. A reply that lists no instruction is not an error.
func (s *InstructionSplitter) Split(ctx context.Context, prompt string) (InstructionSplit, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	var out InstructionSplit
	text, truncated, err := s.prepare(prompt)
	if err != nil {
		return out, &Error{Type: ErrorInvalidCase, Step: StepSplit, Err: err}
	}
	out.Truncated = truncated
	if strings.TrimSpace(text) == "" {
		return out, nil
	}
	msgs, err := render(SchemaInstructionSplit, promptData{SystemPrompt: text})
	if err != nil {
		return out, &Error{Type: ErrorInvalidCase, Step: StepSplit, Err: err}
	}
	if s.opts.Verbose {
		out.Prompt = promptText(msgs)
	}
	var listed []string
	x := exchange{ctx: ctx, judge: s.judge, now: s.now, usage: &out.Usage}
	if err := x.ask(StepSplit, schemaInstructionSplit, msgs, func(reply string) error {
		var perr error
		listed, perr = parseStrings(reply, schemaInstructionSplit, "instructions")
		return perr
	}); err != nil {
		return out, err
	}
	out.Instructions, out.Dropped = s.keep(listed, utf8.RuneCountInString(text))
	return out, nil
}

// prepare redacts prompt and cuts it to MaxInputChars, turning a panic in
// Redact into an error.
func (s *InstructionSplitter) prepare(prompt string) (text string, truncated bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("redact panicked: %v", r)
		}
	}()
	if s.opts.Redact != nil {
		prompt = s.opts.Redact(prompt)
	}
	text, truncated = truncate(NeutralizeTruncationMarkers(prompt), s.opts.MaxInputChars)
	return text, truncated, nil
}

// keep returns the listed instructions without blanks, a copied
// truncation marker or repeats, at most MaxInstructions of them and at
// most twice the prompt's length in all, and how many it left out. The
// length bound keeps a runaway reply from being stored: instructions are
// the prompt's own words, so together they are never much longer than it.
func (s *InstructionSplitter) keep(listed []string, promptRunes int) (kept []string, dropped int) {
	marker := strings.TrimSpace(TruncationMarker)
	budget := 2 * promptRunes
	seen := make(map[string]bool, len(listed))
	for _, in := range listed {
		in = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(in), marker))
		key := statementKey(in)
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
