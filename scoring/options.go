package scoring

import (
	"context"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Options tune a scorer. The zero value is valid: scale 1, the scorer's
// default threshold, reasons on.
type Options struct {
	// Scale is the maximum score (default 1). It must be positive.
	Scale float64
	// Threshold decides pass or fail. Bias, hallucination and toxicity
	// pass when score <= threshold; the others (prompt alignment, answer
	// relevancy, context relevance, criteria, task completion, tool use
	// and the conversation scorers) pass when score >= threshold.
	// Nil means the default, half the scale (0.5 at the default scale).
	// It must lie in [0, Scale].
	Threshold *float64
	// StrictMode makes the score binary (0 or Scale) and forces the
	// threshold to 0 (bias, hallucination, toxicity) or Scale (the others).
	StrictMode bool
	// OmitReason skips the reason step (include_reason: false).
	OmitReason bool
	// Verbose keeps the prompts sent at every step in Result.Steps.
	Verbose bool
	// ReasonMode is ReasonLLM (default: the reason step asks the judge) or
	// ReasonSummary (the reason is composed from the verdicts' reasons with
	// no extra call).
	ReasonMode ReasonMode
	// MaxInputChars caps each evaluated text sent to the judge, in
	// characters (runes); 0 means no cap. Cut text ends with
	// TruncationMarker, and the result has Truncated set when the scorer
	// sends the cut field. A marker the text carries itself is neutralised
	// first (NeutralizeTruncationMarkers), except one TruncationMarker at
	// its very end: that text was cut by the caller, and the result has
	// Truncated set as well. A trajectory's
	// texts (step outputs, tool arguments, results, errors) are capped
	// together: when they exceed MaxInputChars, the longest are cut to the
	// common length that makes the sum fit, but never below 64 characters
	// each, so a run of many texts can still send more.
	MaxInputChars int
	// MaxContextChunks bounds the requests the hallucination scorer
	// spends on one case's context: a context longer than MaxInputChars is
	// judged in chunks of at most MaxInputChars characters, at most this
	// many (0 means DefaultMaxContextChunks).
	MaxContextChunks int
	// MaxTrajectorySteps caps the steps of a trajectory sent to the judge,
	// each tool call counting as a step (0 means
	// DefaultMaxTrajectorySteps). A longer trajectory keeps its first and
	// last steps, the judge is told how many were left out between them,
	// and the result has Truncated set.
	MaxTrajectorySteps int
	// MaxTurns caps the messages of a conversation sent to the judge by
	// the conversation scorers, an omitted turn counting as one (0 means
	// DefaultMaxTurns). A longer conversation keeps its first and last
	// messages, the judge is told how many were left out between them,
	// and the result has Truncated set. The texts of the messages kept are
	// capped together by MaxInputChars, as a trajectory's are.
	MaxTurns int
	// HistoryTurns caps the earlier messages (Case.Turns) that a scorer
	// of one turn reads as the conversation so far (0 means
	// DefaultHistoryTurns): the last ones are kept, and the judge is told
	// how many earlier messages it does not see. Leaving out history does
	// not set Truncated; cutting the texts kept to MaxInputChars does.
	HistoryTurns int
	// ConversationWindow is how many exchanges conversation_relevancy
	// judges each assistant reply against: the reply's own exchange (a
	// user message and the replies to it) and the ones before it, at most
	// this many in all (0 means DefaultConversationWindow).
	ConversationWindow int
	// Redact, when set, is applied to every evaluated text (input, output,
	// each context item and instruction) before it is sent to the judge.
	// It runs before MaxInputChars is applied.
	Redact func(string) string
	// UncertaintyWeight is what an "unsure" statement counts for in
	// answer_relevancy, between 0 and 1; nil means
	// DefaultUncertaintyWeight.
	UncertaintyWeight *float64
	// ContextPenalties are context_relevance's deductions; nil means
	// DefaultContextPenalties.
	ContextPenalties *ContextPenalties
	// InstructionSources says whose instructions prompt_alignment judges:
	// SourcesBoth (the default, as Mastra's evaluationMode "both"), the
	// system instructions only (SourcesSystem) or the user's only
	// (SourcesUser).
	InstructionSources InstructionSources
	// Requirements, when set, gives task_completion the requirements of a
	// request (guard.RequirementCache keeps them by the hash of the request
	// and its conversation, so a request repeated across runs is split by
	// the judge once); nil asks the scorer's judge every time. It gets the
	// request and its conversation redacted and cut.
	Requirements RequirementLister
}

// InstructionSources names the messages whose instructions
// prompt_alignment judges.
type InstructionSources string

// Instruction sources.
const (
	// SourcesBoth judges the system instructions (Case.Instructions) and
	// the instructions the user gave in the request and the earlier user
	// turns that still apply (Case.Input, Case.Turns).
	SourcesBoth InstructionSources = "both"
	// SourcesSystem judges the system instructions only.
	SourcesSystem InstructionSources = "system"
	// SourcesUser judges the user's instructions only.
	SourcesUser InstructionSources = "user"
)

// ReasonMode selects how a result's reason is produced.
type ReasonMode string

// Reason modes.
const (
	ReasonLLM     ReasonMode = "llm"
	ReasonSummary ReasonMode = "summary"
)

// TruncationMarker ends evaluated text cut to Options.MaxInputChars.
const TruncationMarker = " [...truncated by llm_eval]"

// DefaultMaxContextChunks is the chunk bound when Options.MaxContextChunks
// is 0: a context of up to four times MaxInputChars is judged whole.
const DefaultMaxContextChunks = 4

// DefaultMaxTrajectorySteps is the step bound when Options.MaxTrajectorySteps is 0.
const DefaultMaxTrajectorySteps = 50

// DefaultMaxTurns is the message bound of a conversation when
// Options.MaxTurns is 0: 25 exchanges of a user message and a reply. At
// the default MaxInputChars of the processor (20,000 characters for the
// texts together) that leaves 400 characters a message when every message
// is long, and about 5,000 prompt tokens a judge call.
const DefaultMaxTurns = 50

// DefaultHistoryTurns is how many earlier messages a scorer of one turn
// reads when Options.HistoryTurns is 0: the last five exchanges, enough to
// resolve what a follow-up ("yes, do that") refers to, while the prompt
// of every turn grows by at most ten messages (Mastra's scorers also
// remember the last ten by default).
const DefaultHistoryTurns = 10

// DefaultConversationWindow is conversation_relevancy's window when
// Options.ConversationWindow is 0: deepeval's window_size, 10 exchanges.
const DefaultConversationWindow = 10

// DefaultUncertaintyWeight is what an "unsure" statement counts for in
// answer_relevancy unless Options.UncertaintyWeight says otherwise
// (Mastra's default).
const DefaultUncertaintyWeight = 0.3

// ContextPenalties are the deductions context_relevance makes from the
// mean relevance of the context items, before scaling. Each lies in [0, 1].
type ContextPenalties struct {
	// UnusedHighRelevance is deducted for each high-relevance item the
	// response did not use.
	UnusedHighRelevance float64 `json:"unused_high_relevance"`
	// MissingPerItem is deducted for each piece of information the answer
	// needed that no item had.
	MissingPerItem float64 `json:"missing_per_item"`
	// MaxMissing caps the total deduction for missing information.
	MaxMissing float64 `json:"max_missing"`
}

// DefaultContextPenalties returns Mastra's defaults: 0.1 per unused
// high-relevance item, 0.15 per missing piece, at most 0.5 for missing
// information.
func DefaultContextPenalties() ContextPenalties {
	return ContextPenalties{UnusedHighRelevance: 0.1, MissingPerItem: 0.15, MaxMissing: 0.5}
}

// RequirementLister works out the requirements of a request for
// task_completion. taskcompletion.NewRequirementLister asks the judge;
// guard.RequirementCache wraps one with a cache keyed by the hash of the
// whole request, its conversation included.
type RequirementLister interface {
	ListRequirements(ctx context.Context, req TaskRequest) (TaskRequirements, error)
}

// TaskRequest is what task_completion works out requirements from: the
// request (the last user turn) and the turns of the conversation before
// it, which give a follow-up such as "Yes, go ahead" its meaning.
type TaskRequest struct {
	History []Turn
	Request string
}

// TaskRequirements is what a request asks an agent to do: the task in one
// sentence and the separate requirements it must all meet, the first being
// the main one (the action or answer asked for, with its details). It
// comes from the request and its conversation alone, so the same request
// is always measured against the same requirements.
type TaskRequirements struct {
	Task         string   `json:"task"`
	Requirements []string `json:"requirements"`
	// Cached is set when a cache answered (stored requirements, or those
	// of an identical request in flight); Usage is then zero.
	Cached bool `json:"cached,omitempty"`
	// Usage is the cost of the judge calls made for these requirements.
	Usage Usage `json:"-"`
}

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
	// Reasked is set when the judge's first reply could not be used and it
	// was asked again; a split that then found nothing is not cached.
	Reasked bool `json:"reasked,omitempty"`
	// Prompt is the prompt sent, kept when the splitter is verbose.
	Prompt string `json:"prompt,omitempty"`
}

// neutralMarker replaces a truncation marker that evaluated text carries
// itself: an elision mark that claims no cut by llm_eval.
const neutralMarker = "[...]"

// markerLike matches TruncationMarker and the variants a model or a
// document could write to pass for it, in text folded by foldMarkerText:
// any case, spacing, an ellipsis character or two dots, "llm eval" or
// "llm-eval".
var markerLike = regexp.MustCompile(`(?i)\[\s*(?:\.{2,}|…)?\s*truncated\s+by\s+llm[\s_.-]?eval\s*\]`)

// markerOpeners are the runes that fold to the marker's "[": a text holding
// none of them holds no marker.
const markerOpeners = "[\uff3b\ufe47"

// NeutralizeTruncationMarkers replaces every TruncationMarker in s, and
// anything written to look like one, with "[...]". The judge is told that
// text ending with the marker was cut by llm_eval and must not be held to
// length or format rules for the missing part; an output that wrote the
// marker itself could otherwise exempt itself from them. Look-alikes are
// found in a folded copy of s (compatibility forms such as fullwidth
// letters, dash variants, zero-width, format and combining characters);
// the text around them is kept as written. Scorers apply it to every
// evaluated text before they cut it. A caller that cuts text before
// scoring (as the processor cuts agent step texts and documents) applies
// it first and then appends TruncationMarker.
func NeutralizeTruncationMarkers(s string) string {
	if !strings.ContainsAny(s, markerOpeners) {
		return s // the common case, without folding
	}
	folded, from := foldMarkerText(s)
	matches := markerLike.FindAllStringIndex(folded, -1)
	if matches == nil {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, m := range matches {
		start, end := from[m[0]], from[m[1]]
		b.WriteString(s[last:start])
		b.WriteString(neutralMarker)
		last = end
	}
	b.WriteString(s[last:])
	return b.String()
}

// foldMarkerText folds s for markerLike: each rune is decomposed to its
// compatibility form (NFKD: "［" is "[", "…" is "...", "ｔ" is "t"), dashes
// become "-", spaces " ", and combining marks, format characters (zero-width
// space and joiners, soft hyphen, byte order mark) and other ignorable runes
// are left out. from[i] is the offset in s of the rune that gave folded
// byte i; from[len(folded)] is len(s), so a match [a, b) of the folded text
// stands for s[from[a]:from[b]], whole runes of s.
func foldMarkerText(s string) (folded string, from []int) {
	b := make([]byte, 0, len(s))
	from = make([]int, 0, len(s)+1)
	emit := func(r rune, at int) {
		switch {
		case r < utf8.RuneSelf: // as it is: ASCII needs no folding
		case unicode.Is(unicode.Mn, r), unicode.Is(unicode.Cf, r),
			unicode.Is(unicode.Variation_Selector, r), unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r):
			return
		case unicode.Is(unicode.Dash, r):
			r = '-'
		case unicode.IsSpace(r):
			r = ' '
		}
		n := len(b)
		b = utf8.AppendRune(b, r)
		for range len(b) - n {
			from = append(from, at)
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			emit(rune(c), i)
			i++
			continue
		}
		p := norm.NFKD.PropertiesString(s[i:])
		size := max(p.Size(), 1)
		if d := p.Decomposition(); len(d) > 0 {
			for _, r := range string(d) {
				emit(r, i)
			}
		} else {
			r, _ := utf8.DecodeRuneInString(s[i:])
			emit(r, i)
		}
		i += size
	}
	from = append(from, len(s))
	return string(b), from
}
