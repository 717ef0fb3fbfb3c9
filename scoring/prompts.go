package scoring

import (
	"embed"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"text/template"
)

//go:embed prompts/*.tmpl
var promptFS embed.FS

// prompts holds every step's system prompt. They never see evaluated
// text, which only user messages carry (userMessage).
var prompts = template.Must(template.New("prompts").Funcs(template.FuncMap{
	// The marker as the judge sees it, without its leading space.
	"truncationMarker": func() string { return strings.TrimSpace(TruncationMarker) },
	"inc":              func(i int) int { return i + 1 },
	// The caps the scorers apply to what the judge returns.
	"maxStatements": func() int { return MaxStatements },
}).ParseFS(promptFS, "prompts/*.tmpl"))

// promptData is what a step's prompt is built from: system templates read
// Scorer, Scale and Criterion, userMessage the rest. Text fields are raw;
// the block writers escape them.
type promptData struct {
	Scorer       string
	Input        string
	Output       string
	Context      []string
	Instructions []string
	// Items are the opinions, claims or requirements an analyze step judges.
	Items []string
	// ContextCut is set when a context item was cut to MaxInputChars.
	ContextCut bool
	// Trajectory is an agent run's steps as trajectoryLines renders them;
	// Calls is the number of its tool calls.
	Trajectory []any
	Calls      int
	// Tools are the tools the agent had as toolLines renders them, nil
	// when unknown.
	Tools []any
	// Omissions says that steps of the trajectory were left out.
	Omissions bool
	// Score and Scale are preformatted for the reason step.
	Score    string
	Scale    string
	Verdicts []any
	// Criterion is set for a criteria scorer's prompts.
	Criterion *criterion
	// SystemPrompt is the prompt an instruction split reads.
	SystemPrompt string
}

// render builds the system and user messages of the named prompt.
func render(name string, data promptData) ([]Message, error) {
	sys, err := renderSystem(name, data)
	if err != nil {
		return nil, err
	}
	user, err := userMessage(name, data)
	if err != nil {
		return nil, err
	}
	return []Message{
		{Role: "system", Content: sys},
		{Role: "user", Content: user},
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
