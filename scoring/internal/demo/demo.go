// Package demo reads judge requests the way the offline demo judge does
// (scoringtest's default replies): the data blocks of a prompt and a few
// string heuristics that the scorers' demo replies share. It is not a
// judge, and its heuristics are not judgements.
package demo

import (
	"encoding/json"
	"regexp"
	"strings"
	"unicode"

	"github.com/llm-eval/llm_eval/scoring"
)

var (
	blockPattern = regexp.MustCompile(`(?ms)^<<<([A-Z0-9_]+)\n(.*?)\n?([A-Z0-9_]+)>>>$`)
	// Numbered matches the "1. " before an item of a numbered block.
	Numbered   = regexp.MustCompile(`^\d+[.)]\s*`)
	numberWord = regexp.MustCompile(`\d+(?:[.,]\d+)?`)
)

// Text returns every message's content, joined by blank lines.
func Text(req scoring.Request) string {
	parts := make([]string, len(req.Messages))
	for i, m := range req.Messages {
		parts[i] = m.Content
	}
	return strings.Join(parts, "\n\n")
}

// Blocks maps a data block's name to its decoded lines, in prompt order.
type Blocks struct {
	names  []string
	byName map[string][]string
}

// Read reads the data blocks of the user messages of req (of all its
// messages if it has no user message): a line <<<NAME, one JSON string
// per line, optionally numbered "1. ", a line NAME>>>.
func Read(req scoring.Request) Blocks {
	b := Blocks{byName: map[string][]string{}}
	var texts []string
	for _, m := range req.Messages {
		if m.Role == "user" {
			texts = append(texts, m.Content)
		}
	}
	if len(texts) == 0 {
		texts = []string{Text(req)}
	}
	for _, t := range texts {
		for _, m := range blockPattern.FindAllStringSubmatch(t, -1) {
			if m[1] != m[3] {
				continue
			}
			var lines []string
			for _, l := range strings.Split(m[2], "\n") {
				l = strings.TrimSpace(Numbered.ReplaceAllString(strings.TrimSpace(l), ""))
				if l == "" {
					continue
				}
				var s string
				if json.Unmarshal([]byte(l), &s) == nil {
					l = s
				}
				lines = append(lines, l)
			}
			if _, seen := b.byName[m[1]]; !seen {
				b.names = append(b.names, m[1])
			}
			b.byName[m[1]] = append(b.byName[m[1]], lines...)
		}
	}
	return b
}

// Lines returns the decoded lines of the block name.
func (b Blocks) Lines(name string) []string { return b.byName[name] }

// Text returns the lines of the block name, joined by line breaks.
func (b Blocks) Text(name string) string { return strings.Join(b.byName[name], "\n") }

// Items finds the list an analyze step judges: the block name, else the
// last block other than INPUT, OUTPUT and CONTEXT, else the last JSON
// array of strings in the request, else one item.
func (b Blocks) Items(req scoring.Request, name string) []string {
	if l, ok := b.byName[name]; ok {
		return l
	}
	for i := len(b.names) - 1; i >= 0; i-- {
		switch b.names[i] {
		case "INPUT", "OUTPUT", "CONTEXT":
			continue
		}
		return b.byName[b.names[i]]
	}
	if arr := lastStringArray(Text(req)); arr != nil {
		return arr
	}
	return []string{"item"}
}

// lastStringArray returns the last JSON array of strings in s.
func lastStringArray(s string) []string {
	for i := strings.LastIndexByte(s, '['); i >= 0; i = strings.LastIndexByte(s[:i], '[') {
		dec := json.NewDecoder(strings.NewReader(s[i:]))
		var arr []string
		if dec.Decode(&arr) == nil {
			return arr
		}
	}
	return nil
}

// Sentences splits text into at most 20 sentences.
func Sentences(text string) []string {
	out := SplitSentences(text)
	if len(out) > 20 {
		out = out[:20]
	}
	return out
}

// SplitSentences splits text into sentences.
func SplitSentences(text string) []string {
	out := []string{}
	var cur strings.Builder
	rs := []rune(text)
	for i, r := range rs {
		cur.WriteRune(r)
		end := r == '.' || r == '!' || r == '?' || r == '\n'
		if end && (i+1 == len(rs) || unicode.IsSpace(rs[i+1])) {
			if s := strings.TrimSpace(cur.String()); s != "" {
				out = append(out, s)
			}
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

// Supported is the toy grounding check: every number of claim is in ctx
// (lower case) and so are at least half of its words of five letters or
// more.
func Supported(claim, ctx string) bool {
	claim = strings.ToLower(claim)
	for _, n := range Numbers(claim) {
		if !strings.Contains(ctx, n) {
			return false
		}
	}
	words := strings.FieldsFunc(claim, func(r rune) bool { return !unicode.IsLetter(r) })
	long, found := 0, 0
	for _, w := range words {
		if len(w) < 5 {
			continue
		}
		long++
		if strings.Contains(ctx, w) {
			found++
		}
	}
	return long == 0 || 2*found >= long
}

// Numbers returns the numbers written in s.
func Numbers(s string) []string { return numberWord.FindAllString(s, -1) }

// SharesLongWord reports whether a word of five letters or more of text
// occurs in other, or the word without a plural s does ("refunds" shares
// "refund" with "the refund window").
func SharesLongWord(text, other string) bool {
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len(w) < 5 {
			continue
		}
		if strings.Contains(other, w) {
			return true
		}
		if stem := strings.TrimSuffix(w, "s"); len(stem) >= 5 && stem != w && strings.Contains(other, stem) {
			return true
		}
	}
	return false
}

// Words returns the words of s in lower case, split at anything that is
// not a letter.
func Words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) })
}

// Step is one line of a TRAJECTORY block, as the pipeline renders it.
type Step struct {
	Kind      string `json:"kind"`
	Text      string `json:"text"`
	ToolCalls []struct {
		Call      int    `json:"call"`
		Tool      string `json:"tool"`
		Arguments string `json:"arguments"`
	} `json:"tool_calls"`
	Call      int     `json:"call"`
	Tool      string  `json:"tool"`
	Arguments *string `json:"arguments"`
	Result    string  `json:"result"`
	Error     string  `json:"error"`
}

// Steps decodes the TRAJECTORY block; lines that are not steps are skipped.
func (b Blocks) Steps() []Step {
	var out []Step
	for _, l := range b.Lines("TRAJECTORY") {
		var s Step
		if json.Unmarshal([]byte(l), &s) == nil && s.Kind != "" {
			out = append(out, s)
		}
	}
	return out
}

// Verdicts gives each item a verdict under the reply's keys: the item
// under echo, then under verdict "yes" with yesReason where yes holds,
// else "no" with noReason.
func Verdicts(items []string, echo, verdict string, yes func(string) bool, yesReason, noReason string) []map[string]string {
	out := make([]map[string]string, len(items))
	for i, it := range items {
		out[i] = map[string]string{echo: it, verdict: "no", "reason": noReason}
		if yes(it) {
			out[i] = map[string]string{echo: it, verdict: "yes", "reason": yesReason}
		}
	}
	return out
}

// OutputSentences is a preprocess reply listing the sentences of the
// OUTPUT block (at most 20) under field.
func OutputSentences(req scoring.Request, field string) any {
	return map[string]any{field: Sentences(Read(req).Text("OUTPUT"))}
}

// Turn is one line of a CONVERSATION block, as the pipeline renders it.
type Turn struct {
	Turn    int    `json:"turn"`
	Role    string `json:"role"`
	Content string `json:"content"`
	Omitted int    `json:"omitted_turns"`
}

// Turns decodes the CONVERSATION block; omitted turns and lines that are
// not messages are skipped.
func (b Blocks) Turns() []Turn {
	var out []Turn
	for _, l := range b.Lines("CONVERSATION") {
		var t Turn
		if json.Unmarshal([]byte(l), &t) == nil && t.Turn > 0 && t.Role != "" {
			out = append(out, t)
		}
	}
	return out
}

// Target is one line of a block of messages to judge.
type Target struct {
	Turn int `json:"turn"`
	From int `json:"window_from"`
}

// Targets decodes the block name of messages to judge.
func (b Blocks) Targets(name string) []Target {
	var out []Target
	for _, l := range b.Lines(name) {
		var t Target
		if json.Unmarshal([]byte(l), &t) == nil && t.Turn > 0 {
			out = append(out, t)
		}
	}
	return out
}

// TurnVerdicts gives each target a verdict under "turn" and "verdict":
// "yes" with yesReason where yes holds for the target's message, else
// "no" with noReason.
func TurnVerdicts(turns []Turn, targets []Target, yes func(t Turn, target Target) bool, yesReason, noReason string) []map[string]any {
	byNumber := make(map[int]Turn, len(turns))
	for _, t := range turns {
		byNumber[t.Turn] = t
	}
	out := make([]map[string]any, len(targets))
	for i, tg := range targets {
		out[i] = map[string]any{"turn": tg.Turn, "verdict": "no", "reason": noReason}
		if yes(byNumber[tg.Turn], tg) {
			out[i] = map[string]any{"turn": tg.Turn, "verdict": "yes", "reason": yesReason}
		}
	}
	return out
}
