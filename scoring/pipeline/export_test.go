package pipeline

import (
	"time"

	"github.com/llm-eval/llm_eval/scoring"
)

// What the external tests reach inside the package.

// SetClock makes s, a scorer New built, read now instead of time.Now.
func SetClock(s scoring.Scorer, now func() time.Time) { s.(*scorer).now = now }

// Prepare returns c as s prepares it for the judge, the fields cut and
// whether the result is truncated.
func Prepare(s scoring.Scorer, c scoring.Case) (scoring.Case, map[scoring.Field]bool, bool, error) {
	e := &Evaluation{}
	err := s.(*scorer).prepare(c, e)
	return e.Case, e.cut, e.Result.Truncated, err
}

// FreshSystem renders p's system prompt without the cache.
func FreshSystem(p *Prompt, d PromptData) (string, error) {
	var b []byte
	w := &byteWriter{&b}
	err := p.set.templates.ExecuteTemplate(w, p.Schema.Name+".system", d)
	return string(b), err
}

type byteWriter struct{ b *[]byte }

func (w *byteWriter) Write(p []byte) (int, error) { *w.b = append(*w.b, p...); return len(p), nil }

// Bounds of a trajectory.
const (
	MaxToolNameChars        = maxToolNameChars
	MaxToolDescriptionChars = maxToolDescriptionChars
	MaxTrajectoryTools      = maxTrajectoryTools
)

// ParseReason parses a reason reply.
var ParseReason = parseReason

// Required returns the keys a reply of schema must have.
func Required(schema *scoring.Schema) []string { return shapeOf(schema).required }

// HasKey reports whether m has key, spelled in any case.
var HasKey = hasKey

// Threshold is the threshold s, a scorer New built, decides by.
func Threshold(s scoring.Scorer) float64 { return s.(*scorer).threshold }

// SchemaFor copies a schema as a request carries it.
var SchemaFor = schemaFor
