package pipeline

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/template"

	"github.com/llm-eval/llm_eval/scoring"
)

// markerText is scoring.TruncationMarker as the judge is told about it,
// without its leading space.
var markerText = strings.TrimSpace(scoring.TruncationMarker)

//go:embed templates/*.tmpl
var sharedFS embed.FS

// shared holds the templates every scorer's prompts include: the rules of
// the data blocks, of the reply and of agent runs ("data_rules",
// "json_only", "trajectory_rules"), and the reason step's system prompt,
// which reads the scorer's "reason_scope".
var shared = template.Must(template.New("prompts").Funcs(template.FuncMap{
	"truncationMarker": func() string { return markerText },
	"inc":              func(i int) int { return i + 1 },
}).ParseFS(sharedFS, "templates/*.tmpl"))

// PromptData is what a step's prompt is built from: system templates read
// Scorer, Scale and Criterion, user messages the rest. Text fields are raw;
// the block writers (AppendText, AppendList, AppendJSONL) escape them.
type PromptData struct {
	Scorer       string
	Input        string
	Output       string
	Context      []string
	Instructions []string
	// Items are the opinions, claims or requirements an analyze step judges.
	Items []string
	// AskUser is set when prompt alignment also asks for the instructions
	// the user gave.
	AskUser bool
	// ContextCut is set when a context item was cut to MaxInputChars.
	ContextCut bool
	// Part and Parts say which chunk of a long context Context holds,
	// from 1; Parts is 0 or 1 when it holds the whole context.
	Part, Parts int
	// Trajectory is an agent run's steps as TrajectoryLines renders them;
	// Calls is the number of its tool calls.
	Trajectory []any
	Calls      int
	// Tools are the tools the agent had as ToolLines renders them, nil
	// when unknown.
	Tools []any
	// Omissions says that steps of the trajectory were left out.
	Omissions bool
	// Turns are a conversation's messages as TurnLines renders them: the
	// whole conversation for a conversation scorer, the history before
	// Input for a scorer of one turn.
	Turns []any
	// Targets are the messages of Turns an analyze step judges.
	Targets []TurnTarget
	// Facts are what the user told the assistant, one JSON object each, as
	// knowledge_retention's analyze step reads them.
	Facts []any
	// Score and Scale are preformatted for the reason step.
	Score    string
	Scale    string
	Verdicts []any
	// Criterion is set for a criteria scorer's prompts.
	Criterion Criterion
	// SystemPrompt is the prompt an instruction split reads, and the one
	// role_adherence reads the assistant's role from.
	SystemPrompt string
}

// Criterion is what a criteria scorer's prompts read of its criterion.
type Criterion interface {
	Name() string
	Text() string
	Steps() []string
	Binary() bool
	// Uses reports whether the judge is shown the case field f.
	Uses(f string) bool
}

// Prompt is one kind of judge call: the system prompt of its step and the
// user message that carries the case.
type Prompt struct {
	// Schema is the reply's schema. Its name names the prompt, and the
	// system prompt is the template "<name>.system".
	Schema *scoring.Schema
	// User appends the user message to b: one or two sentences of task,
	// then the case's data in blocks. User messages are built in Go, not
	// from templates as the system prompts are, because every judge call
	// builds one: executing them with text/template took about a fifth of
	// an evaluation's collector CPU in a load run, in reflection and in
	// growing worker stacks for its deep calls.
	User func(b []byte, d PromptData) ([]byte, error)
	// Demo is the reply of the offline demo judge (scoringtest) to the
	// prompt: a value of the schema's shape that string heuristics build
	// from the request's data blocks. It is not a judgement.
	Demo func(req scoring.Request) any

	set *Prompts
}

// Prompts is the set of one scorer's prompts, with their system templates.
type Prompts struct {
	templates *template.Template
	byName    map[string]*Prompt
	// system holds rendered system prompts by systemKey. They are several
	// KB of fixed text that every call of a step would otherwise render
	// again; the keys are bounded by the steps, scorers and scales
	// configured.
	system sync.Map // systemKey -> string
	// version is the set's PromptVersion, computed once.
	version string
}

// systemKey is everything a system template reads apart from Criterion.
type systemKey struct{ name, scorer, scale string }

// NewPrompts parses the system templates of fsys (every *.tmpl file; each
// defines "<name>.system" for its prompts, and "reason_scope", the line
// saying what the score measures, when the scorer has a reason step)
// with the shared ones and funcs, and binds prompts to them. A set whose
// templates define "reason_scope" also holds the reason step's prompt. It
// panics when a template does not parse, as template.Must does: the
// templates are the calling package's own files.
func NewPrompts(fsys fs.FS, funcs template.FuncMap, prompts ...*Prompt) *Prompts {
	t := template.Must(template.Must(shared.Clone()).Funcs(funcs).ParseFS(fsys, "*.tmpl"))
	set := &Prompts{templates: t, byName: map[string]*Prompt{}}
	if t.Lookup("reason_scope") != nil {
		prompts = append(prompts, &Prompt{Schema: schemaReason, User: reasonMessage, Demo: demoReason})
	}
	for _, p := range prompts {
		if t.Lookup(p.Schema.Name+".system") == nil {
			panic(fmt.Sprintf("pipeline: prompt %s has no template %s.system", p.Schema.Name, p.Schema.Name))
		}
		p.set = set
		set.byName[p.Schema.Name] = p
	}
	set.version = promptsVersion(t, prompts)
	return set
}

// Version identifies the set's prompts: the first 12 hex digits of a
// SHA-256 over every template the set's system prompts can include (its
// own and the shared ones, by name, as parsed), every reply schema (by
// name, compacted) and scoring.PromptVersion, which is raised by hand
// when the Go code that writes the user messages changes what they say.
// It is the same in every process that runs the same prompts, and changes
// with any of them.
func (s *Prompts) Version() string { return s.version }

func promptsVersion(t *template.Template, prompts []*Prompt) string {
	h := sha256.New()
	fmt.Fprintf(h, "prompt_version=%s\n", scoring.PromptVersion)
	tmpls := t.Templates()
	slices.SortFunc(tmpls, func(a, b *template.Template) int { return strings.Compare(a.Name(), b.Name()) })
	for _, tm := range tmpls {
		if tm.Tree == nil || tm.Tree.Root == nil {
			continue
		}
		fmt.Fprintf(h, "template %s\n%s\n", tm.Name(), tm.Tree.Root.String())
	}
	sorted := slices.Clone(prompts)
	slices.SortFunc(sorted, func(a, b *Prompt) int { return strings.Compare(a.Schema.Name, b.Schema.Name) })
	for _, p := range sorted {
		var compact bytes.Buffer
		if err := json.Compact(&compact, p.Schema.Schema); err != nil {
			compact.Reset()
			compact.Write(p.Schema.Schema)
		}
		fmt.Fprintf(h, "schema %s\n%s\n", p.Schema.Name, compact.Bytes())
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// Lookup returns the prompt named name, nil when the set has none.
func (s *Prompts) Lookup(name string) *Prompt { return s.byName[name] }

// All returns the set's prompts, in no particular order.
func (s *Prompts) All() []*Prompt {
	out := make([]*Prompt, 0, len(s.byName))
	for _, p := range s.byName {
		out = append(out, p)
	}
	return out
}

// Render builds the system and user messages of the prompt.
func (p *Prompt) Render(d PromptData) ([]scoring.Message, error) {
	sys, err := p.System(d)
	if err != nil {
		return nil, err
	}
	size := 256 + 128*len(d.Tools) + len(d.Input) + len(d.Output) + 256*len(d.Trajectory) + 256*len(d.Turns) + 32*len(d.Targets) + 128*len(d.Facts) + len(d.SystemPrompt)
	for _, list := range [][]string{d.Context, d.Instructions, d.Items} {
		for _, s := range list {
			size += 16 + len(s)
		}
	}
	user, err := p.User(make([]byte, 0, size+size/8), d)
	if err != nil {
		return nil, fmt.Errorf("rendering %s user prompt: %w", p.Schema.Name, err)
	}
	return []scoring.Message{
		{Role: "system", Content: sys},
		{Role: "user", Content: string(user)},
	}, nil
}

// System returns the prompt's system message. System templates read only
// Scorer, Scale and Criterion; those of criteria scorers are rendered
// every time, the others once per systemKey.
func (p *Prompt) System(d PromptData) (string, error) {
	name := p.Schema.Name
	key := systemKey{name: name, scorer: d.Scorer, scale: d.Scale}
	if d.Criterion == nil {
		if s, ok := p.set.system.Load(key); ok {
			return s.(string), nil
		}
	}
	var sys strings.Builder
	if err := p.set.templates.ExecuteTemplate(&sys, name+".system", PromptData{Scorer: d.Scorer, Scale: d.Scale, Criterion: d.Criterion}); err != nil {
		return "", fmt.Errorf("rendering %s system prompt: %w", name, err)
	}
	if d.Criterion == nil {
		p.set.system.Store(key, sys.String())
	}
	return sys.String(), nil
}

// reasonMessage is the reason step's user message: the verdicts and the
// score they gave, last, so that the prompt up to the verdicts is the same
// in every call of the step (a provider's prefix cache).
func reasonMessage(b []byte, d PromptData) ([]byte, error) {
	b, err := AppendJSONL(b, "VERDICTS", d.Verdicts)
	if err != nil {
		return nil, err
	}
	return append(b, "\n\nScore: "+d.Score+" (scale 0 to "+d.Scale+")"...), nil
}

// PromptText is how a prompt is kept in Result.Steps when verbose.
func PromptText(msgs []scoring.Message) string {
	var b strings.Builder
	for i, m := range msgs {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("[" + m.Role + "]\n" + m.Content)
	}
	return b.String()
}

// FormatScore renders a score for prompts and reasons, to at most two
// decimals. The Result keeps the exact value.
func FormatScore(f float64) string {
	return strconv.FormatFloat(math.Round(f*100)/100, 'f', -1, 64)
}

// Delimiters of a data block: a line blockOpen+NAME starts it and a line
// NAME+blockClose ends it. Block text is JSON with '<' and '>' escaped, so
// evaluated text can never contain either delimiter.
const (
	blockOpen  = "<<<"
	blockClose = ">>>"
)

// AppendText appends a block holding s as one JSON string.
func AppendText(b []byte, name, s string) []byte {
	b = append(b, blockOpen+name+"\n"...)
	b = appendJSONString(b, s)
	return append(b, "\n"+name+blockClose...)
}

// AppendList appends a block holding items as numbered JSON strings.
func AppendList(b []byte, name string, items []string) []byte {
	b = append(b, blockOpen+name+"\n"...)
	for i, it := range items {
		b = strconv.AppendInt(b, int64(i+1), 10)
		b = append(b, ". "...)
		b = appendJSONString(b, it)
		b = append(b, '\n')
	}
	return append(b, name+blockClose...)
}

// HistoryLines renders the conversation before a request for a scorer of
// one turn, as TurnLines does; nil when it holds no message.
func HistoryLines(turns []scoring.Turn) []any {
	if len(NumberTurns(turns)) == 0 {
		return nil
	}
	return TurnLines(turns)
}

// AppendHistory appends the conversation before the request (d.Turns, as
// HistoryLines renders it) as a HISTORY block, one message a line,
// followed by a blank line; nothing when there is none.
func AppendHistory(b []byte, d PromptData) ([]byte, error) {
	if len(d.Turns) == 0 {
		return b, nil
	}
	b, err := AppendJSONL(b, "HISTORY", d.Turns)
	if err != nil {
		return nil, err
	}
	return append(b, "\n\n"...), nil
}

// AppendRun appends an agent run: the conversation before its request
// (when the scorer sends it), its request, its steps and its final
// answer.
func AppendRun(b []byte, d PromptData) ([]byte, error) {
	b, err := AppendHistory(b, d)
	if err != nil {
		return nil, err
	}
	b = AppendText(b, "INPUT", d.Input)
	b = append(b, "\n\n"...)
	b, err = AppendJSONL(b, "TRAJECTORY", d.Trajectory)
	if err != nil {
		return nil, err
	}
	b = append(b, "\n\n"...)
	return AppendText(b, "OUTPUT", d.Output), nil
}

// appendJSONString appends s as a JSON string as json.Marshal writes it:
// with '<', '>' and '&' escaped, which keeps the block delimiters out.
func appendJSONString(b []byte, s string) []byte {
	j, _ := json.Marshal(s) // cannot fail for a string
	return append(b, j...)
}

// AppendJSONL appends a block holding items as JSON objects, one a line.
func AppendJSONL(b []byte, name string, items []any) ([]byte, error) {
	b = append(b, blockOpen+name+"\n"...)
	for _, it := range items {
		j, err := json.Marshal(it)
		if err != nil {
			return nil, fmt.Errorf("encoding %s item: %w", name, err)
		}
		b = append(append(b, j...), '\n')
	}
	return append(b, name+blockClose...), nil
}
