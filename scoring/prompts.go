package scoring

import (
	"embed"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"text/template"
)

//go:embed prompts/*.tmpl
var promptFS embed.FS

// Delimiters of a data block: a line blockOpen+NAME starts it and a line
// NAME+blockClose ends it. json.Marshal escapes '<' and '>', so evaluated
// text can never contain either delimiter.
const (
	blockOpen  = "<<<"
	blockClose = ">>>"
)

// prompts holds every step's system and user templates. Templates only
// reach evaluated text through text, list and jsonl, which JSON-escape it.
var prompts = template.Must(template.New("prompts").Funcs(template.FuncMap{
	"text":  textBlock,
	"list":  listBlock,
	"jsonl": jsonlBlock,
	// The marker as the judge sees it, without its leading space.
	"truncationMarker": func() string { return strings.TrimSpace(TruncationMarker) },
	"inc":              func(i int) int { return i + 1 },
}).ParseFS(promptFS, "prompts/*.tmpl"))

// promptData is what the templates see. Text fields are raw; the block
// functions escape them.
type promptData struct {
	Scorer       string
	Input        string
	Output       string
	Context      []string
	Instructions []string
	// Items are the opinions or claims an analyze step judges.
	Items []string
	// Score and Scale are preformatted for the reason step.
	Score    string
	Scale    string
	Verdicts []any
	// Criterion is set for a criteria scorer's prompts.
	Criterion *criterion
}

// quote renders s as a JSON string literal: one line, with quotes, control
// characters and angle brackets escaped.
func quote(s string) string {
	b, err := json.Marshal(s)
	if err != nil { // cannot happen for a string
		return `""`
	}
	return string(b)
}

func textBlock(name, s string) string {
	return blockOpen + name + "\n" + quote(s) + "\n" + name + blockClose
}

func listBlock(name string, items []string) string {
	var b strings.Builder
	b.WriteString(blockOpen + name + "\n")
	for i, it := range items {
		fmt.Fprintf(&b, "%d. %s\n", i+1, quote(it))
	}
	b.WriteString(name + blockClose)
	return b.String()
}

func jsonlBlock(name string, items []any) (string, error) {
	var b strings.Builder
	b.WriteString(blockOpen + name + "\n")
	for _, it := range items {
		j, err := json.Marshal(it)
		if err != nil {
			return "", fmt.Errorf("encoding %s item: %w", name, err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	b.WriteString(name + blockClose)
	return b.String(), nil
}

// render builds the system and user messages of the named prompt.
func render(name string, data promptData) ([]Message, error) {
	sys, err := renderSystem(name, data)
	if err != nil {
		return nil, err
	}
	var user strings.Builder
	if err := prompts.ExecuteTemplate(&user, name+".user", data); err != nil {
		return nil, fmt.Errorf("rendering %s user prompt: %w", name, err)
	}
	return []Message{
		{Role: "system", Content: sys},
		{Role: "user", Content: user.String()},
	}, nil
}

// systemKey is everything a system template reads apart from Criterion.
type systemKey struct{ name, scorer, scale string }

// systemPrompts holds rendered system prompts by systemKey. They are
// several KB of fixed text that every call of a step would otherwise
// render again; the keys are bounded by the steps, scorers and scales
// configured.
var systemPrompts sync.Map // systemKey -> string

// renderSystem returns the system prompt of the named step. System
// templates read only Scorer, Scale and Criterion; those of criteria
// scorers are rendered every time, the others once per systemKey.
func renderSystem(name string, data promptData) (string, error) {
	key := systemKey{name: name, scorer: data.Scorer, scale: data.Scale}
	if data.Criterion == nil {
		if s, ok := systemPrompts.Load(key); ok {
			return s.(string), nil
		}
	}
	var sys strings.Builder
	if err := prompts.ExecuteTemplate(&sys, name+".system", promptData{Scorer: data.Scorer, Scale: data.Scale, Criterion: data.Criterion}); err != nil {
		return "", fmt.Errorf("rendering %s system prompt: %w", name, err)
	}
	if data.Criterion == nil {
		systemPrompts.Store(key, sys.String())
	}
	return sys.String(), nil
}

// promptText is how a prompt is kept in Result.Steps when verbose.
func promptText(msgs []Message) string {
	var b strings.Builder
	for i, m := range msgs {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("[" + m.Role + "]\n" + m.Content)
	}
	return b.String()
}

// formatScore renders a score for prompts and reasons, to at most two
// decimals. The Result keeps the exact value.
func formatScore(f float64) string {
	return strconv.FormatFloat(math.Round(f*100)/100, 'f', -1, 64)
}
