package pipeline

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/llm-eval/llm_eval/scoring"
)

// Canonical verdicts. Every verdict the judge returns is reduced to one of
// these (VerdictValue) before anything counts it, so the score and the
// reason can never disagree about what a verdict meant.
const (
	VerdictYes = "yes"
	VerdictNo  = "no"
	VerdictNA  = "n/a"
)

// NormalizeVerdict reads a verdict of "yes", "no" or "n/a" (case and
// surrounding punctuation aside). It reports false for anything else, such
// as "Yes/No", "maybe" or a sentence; such a verdict is a parse problem.
func NormalizeVerdict(raw string) (string, bool) {
	return VerdictValue(raw, []string{VerdictYes, VerdictNo, VerdictNA})
}

// isVerdictPadding reports the runes around a verdict word that do not
// change it: spaces, quotes, Markdown emphasis, final full stops.
func isVerdictPadding(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsPunct(r) || unicode.IsSymbol(r)
}

// IsYes is the one predicate that decides whether a canonical verdict
// counts: biased, hallucinated or followed, depending on the scorer.
func IsYes(v string) bool { return v == VerdictYes }

// Judged is one analyze item after parsing: a canonical verdict and its
// reason.
type Judged struct {
	Verdict   string
	Reason    string
	Statement string // the item the judge echoed, if it did
	Number    int    // the item number the judge echoed, from 1; 0 if none
}

// VerdictSpec says how to read an analyze reply that judges a list of
// items one by one.
type VerdictSpec struct {
	Schema  *scoring.Schema // the reply's schema: its required keys and verdict values
	Field   string          // top-level list: results or verdicts
	Keys    []string        // verdict key, then accepted aliases
	AllowNA bool            // whether n/a is a valid verdict, where the schema allows it
	Unit    string          // what each item judges: opinion, claim, instruction
	Echo    string          // key under which the judge repeats the item (default "statement")
}

// values returns the verdicts the spec allows: the schema's enum for its
// verdict key (else yes and no, and n/a), without n/a unless AllowNA.
// AllowNA narrows the schema for one reply: a schema that allows n/a may
// allow it only in some cases, such as task_completion's when steps were
// left out.
func (spec VerdictSpec) values() []string {
	all := Allowed(spec.Schema, spec.Keys[0], VerdictYes, VerdictNo, VerdictNA)
	if spec.AllowNA {
		return all
	}
	return slices.DeleteFunc(slices.Clone(all), func(v string) bool { return v == VerdictNA })
}

func (spec VerdictSpec) echo() string { return cmp.Or(spec.Echo, "statement") }

// ParseVerdicts parses an analyze reply that must hold exactly want items.
func ParseVerdicts(reply string, spec VerdictSpec, want int) ([]Judged, error) {
	v, err := ExtractJSON(reply, spec.Schema)
	if err != nil {
		return nil, err
	}
	list, err := ListField(v, spec.Field, spec.Keys...)
	if err != nil {
		return nil, err
	}
	if len(list) != want {
		return nil, fmt.Errorf("expected exactly %d items in %q, one per %s in the given order, got %d",
			want, spec.Field, spec.Unit, len(list))
	}
	allowed := spec.values()
	echo := spec.echo()
	out := make([]Judged, len(list))
	for i, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("item %d of %q must be an object, got %s", i+1, spec.Field, JSONKind(it))
		}
		raw, ok := Lookup(m, spec.Keys...)
		if !ok {
			return nil, fmt.Errorf("item %d of %q has no %q", i+1, spec.Field, spec.Keys[0])
		}
		verdict, ok := VerdictValue(raw, allowed)
		if !ok {
			return nil, fmt.Errorf("item %d of %q has %s %s; it must be exactly %s",
				i+1, spec.Field, spec.Keys[0], Describe(raw), QuoteList(allowed))
		}
		out[i] = Judged{Verdict: verdict, Reason: OptionalString(m, "reason"), Statement: OptionalString(m, echo)}
		if raw, ok := Lookup(m, "number"); ok {
			out[i].Number = ItemNumber(raw, want)
		}
	}
	return out, nil
}

// ParseItemVerdicts parses an analyze reply judging items one by one and
// puts its verdicts in the items' order (ParseVerdicts, then
// MatchStatements).
func ParseItemVerdicts(reply string, spec VerdictSpec, items []string) (verdicts []Judged, reordered bool, err error) {
	parsed, err := ParseVerdicts(reply, spec, len(items))
	if err != nil {
		return nil, false, err
	}
	return MatchStatements(parsed, items, spec)
}

// ItemNumber reads an item number of 1..n written as a number or a
// numeric string ("3", "#3"); anything else is 0 (no number).
func ItemNumber(raw any, n int) int {
	var s string
	switch t := raw.(type) {
	case json.Number:
		s = t.String()
	case string:
		s = strings.TrimPrefix(strings.TrimSpace(t), "#")
	default:
		return 0
	}
	k, err := strconv.Atoi(s)
	if err != nil || k < 1 || k > n {
		return 0
	}
	return k
}

// MatchStatements pairs verdicts with items by the item number (from 1)
// or the statement each verdict echoes under spec's echo key. A verdict
// names the item whose number it gives, else the item it echoes exactly
// as sent, up to case, spacing and final punctuation; a number and an echo
// naming different items is an error. See PlaceVerdicts for what happens
// then. When the judge reworded or left out the statements and gave no
// numbers, the verdicts are paired by position.
func MatchStatements(verdicts []Judged, items []string, spec VerdictSpec) (out []Judged, reordered bool, err error) {
	index := make(map[string]int, len(items))
	for i, it := range items {
		k := StatementKey(it)
		if _, dup := index[k]; dup {
			index[k] = -1 // ambiguous: the same item twice
			continue
		}
		index[k] = i
	}
	echo := spec.echo()
	named := make([]int, len(verdicts))
	for i, v := range verdicts {
		j, ok := index[StatementKey(v.Statement)]
		if !ok || v.Statement == "" {
			j = -1
		}
		if v.Number > 0 {
			if j >= 0 && j != v.Number-1 {
				return nil, false, fmt.Errorf("verdict %d gives number %d but repeats %s %d as its %q; give each verdict the number and the words of the same %s",
					i+1, v.Number, spec.Unit, j+1, echo, spec.Unit)
			}
			j = v.Number - 1
		}
		named[i] = j
	}
	order, reordered, err := PlaceVerdicts(named, spec.Unit, fmt.Sprintf("in the given order, repeating each as %q", echo))
	if err != nil || !reordered {
		return verdicts, false, err
	}
	out = make([]Judged, len(order))
	for i, j := range order {
		out[i] = verdicts[j]
	}
	return out, true, nil
}

// PlaceVerdicts decides where verdicts go, given for each the item it
// names (named[i], from 0; -1 when it names none or none clearly). It
// returns, for each item, the index of its verdict. When every verdict
// names a different item, verdicts go to the items they name and
// reordered says whether that moved any. When no verdict names an item
// other than its own position, they stay in order. Anything in between,
// such as a verdict naming another item among some that name none, or an
// item judged twice, is an error for a re-ask; how says how the judge is
// to give its verdicts then ("in call order, with its number").
func PlaceVerdicts(named []int, unit, how string) (order []int, reordered bool, err error) {
	order = make([]int, len(named))
	for i := range order {
		order[i] = i
	}
	all, misplaced := true, false
	for i, j := range named {
		if j < 0 {
			all = false
			continue
		}
		if j != i {
			misplaced = true
		}
	}
	if !misplaced {
		return order, false, nil
	}
	if all {
		seen := make([]bool, len(named))
		for i, j := range named {
			if seen[j] {
				return nil, false, fmt.Errorf("%s %d is judged twice; give exactly one verdict per %s, %s", unit, j+1, unit, how)
			}
			seen[j] = true
			order[j] = i
		}
		return order, true, nil
	}
	for i, j := range named {
		if j >= 0 && j != i {
			return nil, false, fmt.Errorf("verdict %d is about %s %d; give exactly one verdict per %s, %s", i+1, unit, j+1, unit, how)
		}
	}
	return order, false, nil
}

// StatementKey is how echoed statements are compared with the items sent:
// case, runs of spaces and surrounding punctuation do not count.
func StatementKey(s string) string {
	s = strings.Join(strings.Fields(strings.ToLower(s)), " ")
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
}
