package scoring

import "context"

// Splitter splits a system prompt into its separate instructions, so that
// prompt alignment can judge each rule on its own instead of the whole
// prompt as one instruction. instructions.NewSplitter asks the judge;
// guard.SplitCache wraps a Splitter with a cache.
type Splitter interface {
	Split(ctx context.Context, prompt string) (InstructionSplit, error)
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
	// Prompt is the prompt sent, kept when the splitter is verbose.
	Prompt string `json:"prompt,omitempty"`
}
