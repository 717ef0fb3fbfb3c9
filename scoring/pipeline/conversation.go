package pipeline

import (
	"cmp"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/llm-eval/llm_eval/scoring"
)

// checkTurnOptions validates the conversation bounds of opts and fills in
// their defaults.
func checkTurnOptions(opts *scoring.Options) error {
	for _, o := range []struct {
		name string
		v    *int
		def  int
	}{
		{"max turns", &opts.MaxTurns, scoring.DefaultMaxTurns},
		{"history turns", &opts.HistoryTurns, scoring.DefaultHistoryTurns},
		{"conversation window", &opts.ConversationWindow, scoring.DefaultConversationWindow},
	} {
		switch {
		case *o.v < 0:
			return fmt.Errorf("%s must not be negative, got %d", o.name, *o.v)
		case *o.v == 0:
			*o.v = o.def
		}
	}
	// An omitted turn takes a line: a bound of one line could show
	// nothing else.
	if opts.MaxTurns < 2 {
		return fmt.Errorf("max turns must be at least 2, got %d", opts.MaxTurns)
	}
	return nil
}

// prepareTurns returns the turns the scorer sends: the whole conversation
// for a conversation scorer, bounded to MaxTurns by keeping its first and
// last messages, its texts capped together to MaxInputChars; the history
// before Input for a scorer of one turn, bounded to HistoryTurns by
// keeping its last messages, the newest kept whole within MaxInputChars
// (fitHistory). Blank messages are skipped; texts are redacted and their
// markers neutralised, but for the trailing marker of a message the
// caller cut (Turn.Cut). It reports whether a conversation lost messages to
// the bound or a text was cut or left out for MaxInputChars; history left
// out for HistoryTurns does not count as a cut, as the judge is meant to
// see only the recent part.
func (s *scorer) prepareTurns(c scoring.Case) ([]scoring.Turn, bool, error) {
	src := c.Turns
	if s.def.Conversation {
		src = c.Conversation()
	}
	if err := scoring.ValidateTurns(src); err != nil {
		return nil, false, err
	}
	turns := make([]scoring.Turn, 0, len(src))
	for _, t := range src {
		if t.Role != scoring.RoleOmitted && strings.TrimSpace(t.Content) == "" {
			continue
		}
		turns = append(turns, t)
	}
	cut := false
	if s.def.Conversation {
		turns, cut = boundTurns(turns, s.opts.MaxTurns)
	} else {
		turns = lastTurns(turns, s.opts.HistoryTurns)
	}
	texts := make([]*string, 0, len(turns))
	cutByCaller := false
	for i := range turns {
		t := &turns[i]
		if t.Role == scoring.RoleOmitted {
			continue
		}
		if s.opts.Redact != nil {
			t.Content = s.opts.Redact(t.Content)
		}
		// A message the caller cut (Turn.Cut) keeps its trailing marker and
		// the result is truncated; any other marker is neutralised.
		if t.Cut && strings.HasSuffix(t.Content, scoring.TruncationMarker) {
			cutByCaller = true
		}
		if t.Cut {
			t.Content = neutralizeKeepingCut(t.Content)
		} else {
			t.Content = scoring.NeutralizeTruncationMarkers(t.Content)
		}
		texts = append(texts, &t.Content)
	}
	if s.def.Conversation {
		cut = fitTexts(texts, s.opts.MaxInputChars) || cut
	} else {
		var cutHistory bool
		turns, cutHistory = fitHistory(turns, s.opts.MaxInputChars)
		cut = cut || cutHistory
	}
	// A conversation judged without some of its messages, whoever left
	// them out, is not the whole conversation.
	if s.def.Conversation && TurnsOmitted(turns) > 0 {
		cut = true
	}
	cut = cut || cutByCaller
	return turns, cut, nil
}

// boundTurns cuts turns (a copy of which it returns) to at most limit
// lines by keeping the first and the last ones and putting one omitted
// turn in place of those between; omitted turns met there are merged into
// it. It reports whether it cut.
func boundTurns(turns []scoring.Turn, limit int) ([]scoring.Turn, bool) {
	if len(turns) <= limit {
		return turns, false
	}
	head := limit / 2
	tail := len(turns) - (limit - 1 - head) // one line for the omitted turn
	gap := scoring.Turn{Role: scoring.RoleOmitted, Count: scoring.TurnCount(turns[head:tail])}
	out := make([]scoring.Turn, 0, limit)
	out = append(out, turns[:head]...)
	out = append(out, gap)
	return append(out, turns[tail:]...), true
}

// lastTurns keeps the last limit lines of turns, an omitted turn in front
// standing for the earlier ones.
func lastTurns(turns []scoring.Turn, limit int) []scoring.Turn {
	if len(turns) <= limit {
		return turns
	}
	keep := max(limit-1, 1) // one line for the omitted turn
	from := len(turns) - keep
	out := make([]scoring.Turn, 0, keep+1)
	out = append(out, scoring.Turn{Role: scoring.RoleOmitted, Count: scoring.TurnCount(turns[:from])})
	return append(out, turns[from:]...)
}

// minHistoryTurnChars is the least of a message's text worth sending when
// the history is cut to MaxInputChars: a message that would keep less is
// left out, with the older ones.
const minHistoryTurnChars = 64

// fitHistory keeps the newest messages of a history (a copy, written to)
// whole while their texts fit in budget characters together (0: no
// bound), as the last messages are what a follow-up refers to. The
// message that does not fit is cut to what is left, or left out when less
// than minHistoryTurnChars would be left, and the older ones are left
// out, one omitted turn in front standing for them. It reports whether it
// cut or left out a message.
func fitHistory(turns []scoring.Turn, budget int) ([]scoring.Turn, bool) {
	if budget <= 0 {
		return turns, false
	}
	remaining := budget
	for i := len(turns) - 1; i >= 0; i-- {
		t := &turns[i]
		if t.Role == scoring.RoleOmitted {
			continue
		}
		n := utf8.RuneCountInString(t.Content)
		if n <= remaining {
			remaining -= n
			continue
		}
		from := i + 1 // the first message kept
		if remaining >= minHistoryTurnChars {
			t.Content, _ = Truncate(t.Content, remaining)
			from = i
		}
		if from == 0 {
			return turns, true
		}
		gap := scoring.Turn{Role: scoring.RoleOmitted, Count: scoring.TurnCount(turns[:from])}
		return append([]scoring.Turn{gap}, turns[from:]...), true
	}
	return turns, false
}

// TurnLine is how one message of a conversation is shown to the judge:
// one JSON object per line of a CONVERSATION or HISTORY block. Turn is
// the message's number in the whole conversation, from 1; an omitted
// turn shows only how many messages it stands for, and the numbers after
// it skip them.
type TurnLine struct {
	Turn    int    `json:"turn,omitempty"`
	Role    string `json:"role,omitempty"`
	Content string `json:"content,omitempty"`
	Omitted int    `json:"omitted_turns,omitempty"`
}

// NumberedTurn is a message of a prepared conversation with its number in
// the whole conversation, from 1.
type NumberedTurn struct {
	Number int
	scoring.Turn
}

// NumberTurns numbers turns as the judge sees them: each message by its
// place in the whole conversation, an omitted turn advancing the number
// by its count. Omitted turns are not returned.
func NumberTurns(turns []scoring.Turn) []NumberedTurn {
	out := make([]NumberedTurn, 0, len(turns))
	n := 0
	for _, t := range turns {
		if t.Role == scoring.RoleOmitted {
			n += t.Count
			continue
		}
		n++
		out = append(out, NumberedTurn{Number: n, Turn: t})
	}
	return out
}

// TurnLines renders turns for the judge, numbered as NumberTurns numbers
// them.
func TurnLines(turns []scoring.Turn) []any {
	lines := make([]any, 0, len(turns))
	n := 0
	for _, t := range turns {
		if t.Role == scoring.RoleOmitted {
			lines = append(lines, TurnLine{Omitted: t.Count})
			n += t.Count
			continue
		}
		n++
		lines = append(lines, TurnLine{Turn: n, Role: string(t.Role), Content: t.Content})
	}
	return lines
}

// TurnsOmitted counts the messages that the omitted turns of turns stand
// for: those the judge does not see.
func TurnsOmitted(turns []scoring.Turn) int {
	n := 0
	for _, t := range turns {
		if t.Role == scoring.RoleOmitted {
			n += t.Count
		}
	}
	return n
}

// TurnTarget is one message of a conversation that an analyze step
// judges, by its number; From, when set, is the first message of the
// window it is judged against (conversation_relevancy).
type TurnTarget struct {
	Turn int `json:"turn"`
	From int `json:"window_from,omitempty"`
}

// AppendTargets appends a block listing the messages to judge, one JSON
// object a line.
func AppendTargets(b []byte, name string, targets []TurnTarget) ([]byte, error) {
	lines := make([]any, len(targets))
	for i, t := range targets {
		lines[i] = t
	}
	return AppendJSONL(b, name, lines)
}

// ParseTurnVerdicts parses an analyze reply that judges the messages
// numbered targets one by one: exactly one verdict per target, each
// naming its message under "turn". The verdicts are returned in the order
// of targets with Number set to the message's number. A verdict naming a
// message that is not a target, or a target judged twice, is an error for
// a re-ask; verdicts that name no message are taken in order.
func ParseTurnVerdicts(reply string, spec VerdictSpec, targets []int) (out []Judged, reordered bool, err error) {
	parsed, err := ParseVerdicts(reply, spec, len(targets))
	if err != nil {
		return nil, false, err
	}
	v, _ := ExtractJSON(reply, spec.Schema) // parsed above, so it reads
	list, _ := ListField(v, spec.Field, spec.Keys...)
	at := make(map[int]int, len(targets))
	for i, n := range targets {
		at[n] = i
	}
	named := make([]int, len(list))
	given := 0
	by := make(map[int]int, len(list)) // target index -> the verdict naming it
	for i, it := range list {
		named[i] = -1
		raw, ok := Lookup(it.(map[string]any), "turn") // ParseVerdicts checked it is an object
		if !ok {
			continue
		}
		n := ItemNumber(raw, int(^uint(0)>>1))
		j, ok := at[n]
		if !ok {
			return nil, false, fmt.Errorf("verdict %d gives turn %s, which is not one of the turns to judge (%s); give exactly one verdict per listed turn, with its number",
				i+1, Describe(raw), turnList(targets))
		}
		if k, dup := by[j]; dup {
			return nil, false, fmt.Errorf("verdicts %d and %d both judge turn %d; give exactly one verdict per listed turn, with its number", k+1, i+1, n)
		}
		by[j] = i
		named[i] = j
		given++
	}
	if given > 0 && given < len(list) {
		return nil, false, fmt.Errorf("%d of %d verdicts give no turn; give each verdict the number of the turn it judges", len(list)-given, len(list))
	}
	order, reordered, err := PlaceVerdicts(named, "turn", "in the listed order, with its number")
	if err != nil {
		return nil, false, err
	}
	out = make([]Judged, len(targets))
	for i, j := range order {
		out[i] = parsed[j]
		out[i].Number = targets[i]
	}
	return out, reordered, nil
}

// turnList lists message numbers for an error message, at most ten.
func turnList(targets []int) string {
	var b strings.Builder
	for i, n := range targets {
		if i == 10 {
			fmt.Fprintf(&b, ", ... %d more", len(targets)-10)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, n)
	}
	return b.String()
}

// JudgeTurns runs an analyze step that judges the messages d.Targets one
// by one with p and puts the verdicts in the targets' order
// (ParseTurnVerdicts). It reports false when the step failed, which ends
// the evaluation.
func (e *Evaluation) JudgeTurns(p *Prompt, d PromptData, spec VerdictSpec) (verdicts []Judged, reordered, ok bool) {
	numbers := make([]int, len(d.Targets))
	for i, t := range d.Targets {
		numbers[i] = t.Turn
	}
	if err := e.Ask(scoring.StepAnalyze, p, d, func(reply string) error {
		var perr error
		verdicts, reordered, perr = ParseTurnVerdicts(reply, spec, numbers)
		return perr
	}); err != nil {
		e.Fail(err)
		return nil, false, false
	}
	return verdicts, reordered, true
}

// HasRole reports whether turns hold a message of role.
func HasRole(turns []scoring.Turn, role scoring.TurnRole) bool {
	for _, t := range turns {
		if t.Role == role {
			return true
		}
	}
	return false
}

// OmittedNote is the clause a summary reason ends with when the judge did
// not see every message of the conversation, "" when it did.
func OmittedNote(turns []scoring.Turn) string {
	if n := TurnsOmitted(turns); n > 0 {
		return fmt.Sprintf(" (%d of the conversation's %d messages were left out to keep it bounded)", n, scoring.TurnCount(turns))
	}
	return ""
}

// TurnVerdictsSchema is the schema of a reply that judges messages of a
// conversation by number: a "verdicts" list of {turn, verdict, reason},
// verdict "yes" or "no".
func TurnVerdictsSchema(name string) *scoring.Schema {
	return ItemsSchema(name, "verdicts",
		Property{Name: "turn", Integer: true},
		Property{Name: "verdict", Enum: []string{VerdictYes, VerdictNo}})
}

// TurnVerdictSpec is how a reply of TurnVerdictsSchema is read; unit
// names what a verdict judges (reply, message) in its problems.
func TurnVerdictSpec(schema *scoring.Schema, unit string) VerdictSpec {
	return VerdictSpec{Schema: schema, Field: "verdicts", Keys: []string{"verdict", "result"}, Unit: unit}
}

// TurnVerdict is the verdict on one message of a conversation: Turn is
// its number, From the first message of the window it was judged against
// when it had one.
type TurnVerdict struct {
	Turn    int    `json:"turn"`
	From    int    `json:"window_from,omitempty"`
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
}

// TurnVerdicts is the analyze result of a scorer that judges messages of
// a conversation.
type TurnVerdicts struct {
	// Window is conversation_relevancy's window, in exchanges.
	Window    int           `json:"window,omitempty"`
	Verdicts  []TurnVerdict `json:"verdicts"`
	Reordered bool          `json:"reordered,omitempty"`
}

// ScoreTurns ends the evaluation of a scorer that judged the messages
// targets with verdicts (in their order, as JudgeTurns returns them): it
// keeps them as the analyze result, scores "yes" / verdicts (ScoreRatio)
// and runs the reason step. The summary reason is what(score, yes, n),
// then failed and the reasons of the other verdicts, then a note of the
// messages the judge did not see.
func (e *Evaluation) ScoreTurns(result TurnVerdicts, targets []TurnTarget, verdicts []Judged, what func(score string, yes, n int) string, failed string) {
	result.Verdicts = make([]TurnVerdict, len(verdicts))
	forJudge := make([]any, len(verdicts))
	var others []string
	for i, v := range verdicts {
		r := TurnVerdict{Turn: v.Number, From: targets[i].From, Verdict: v.Verdict, Reason: v.Reason}
		result.Verdicts[i] = r
		forJudge[i] = r
		if !IsYes(v.Verdict) {
			others = append(others, cmp.Or(v.Reason, fmt.Sprintf("message %d", v.Number)))
		}
	}
	e.Result.Steps.Analyze = result
	n := len(verdicts)
	yes := n - len(others)
	e.ScoreRatio(yes, n)
	e.Reason(forJudge, func() string {
		s := what(FormatScore(e.Result.Score), yes, n)
		if len(others) > 0 {
			s += "; " + failed + ": " + JoinReasons(others)
		}
		return s + OmittedNote(e.Case.Turns) + "."
	})
}
