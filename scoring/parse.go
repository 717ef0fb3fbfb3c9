package scoring

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/llm-eval/llm_eval/internal/lenientjson"
)

// Canonical verdicts. Every verdict the judge returns is reduced to one of
// these by normalizeVerdict before anything counts it, so the score and
// the reason can never disagree about what a verdict meant.
const (
	verdictYes = "yes"
	verdictNo  = "no"
	verdictNA  = "n/a"
)

// normalizeVerdict reads a verdict of "yes", "no" or "n/a" (case and
// surrounding punctuation aside). It reports false for anything else, such
// as "Yes/No", "maybe" or a sentence; such a verdict is a parse problem.
func normalizeVerdict(raw string) (string, bool) {
	return verdictValue(raw, []string{verdictYes, verdictNo, verdictNA})
}

// isVerdictPadding reports the runes around a verdict word that do not
// change it: spaces, quotes, Markdown emphasis, final full stops.
func isVerdictPadding(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsPunct(r) || unicode.IsSymbol(r)
}

// isYes is the one predicate that decides whether a canonical verdict
// counts: biased, hallucinated or followed, depending on the scorer.
func isYes(v string) bool { return v == verdictYes }

// errIncompleteJSON reports JSON that starts but never closes, the usual
// sign of a reply cut at the token limit.
var errIncompleteJSON = errors.New("the JSON in the reply is incomplete: it was cut off before its closing bracket")

// Bounds of reading a reply.
const (
	// maxJSONCandidates bounds how many opening brackets extractJSON tries.
	maxJSONCandidates = 64
	// maxReplyBytes is the longest reply read. The longest reply a step
	// asks for, 50 verdicts of one sentence each, is about 10 KB; a reply
	// far beyond that is a runaway generation, not an answer.
	maxReplyBytes = 256 << 10
)

// extractJSON finds the reply object of schema in a judge reply. It
// tolerates code fences, prose before and after the JSON, and trailing
// commas (the shared lenient scanner reads them). The first value that
// decodes and has every key schema requires wins, so bracketed prose
// ("checked [1] and [2]") or a stray {} before the object is passed over.
// When no value has them all, the first with the most of them is
// returned, else the first value that decodes (the code fence's, when
// there is a fence), for the caller to read or reject.
func extractJSON(reply string, schema *Schema) (any, error) {
	if len(reply) > maxReplyBytes {
		return nil, fmt.Errorf("the reply is %d bytes long, more than the %d bytes allowed; reply with the JSON object only", len(reply), maxReplyBytes)
	}
	if strings.TrimSpace(reply) == "" {
		return nil, errors.New("the reply is empty")
	}
	shape := shapeOf(schema)
	body := unfence(reply)
	found := scanJSON(body, shape)
	if found.match {
		return found.value, nil
	}
	if body != reply {
		whole := scanJSON(reply, shape)
		if whole.match {
			return whole.value, nil
		}
		if (!found.decoded && found.err == nil) || whole.keys > found.keys {
			found = whole // the fence held no JSON at all, or less of the reply
		}
	}
	switch {
	case found.decoded:
		return found.value, nil
	case found.err != nil:
		return nil, found.err
	}
	return nil, errors.New("the reply contains no JSON object")
}

// scanned is what scanJSON found in a text.
type scanned struct {
	// value is the value with the shape's keys; else the first with the
	// most of them; else the first that decoded.
	value   any
	match   bool // value has all the shape's keys
	decoded bool // some value decoded
	keys    int  // required keys value has
	err     error
}

// scanJSON tries the opening brackets of text in turn, at most
// maxJSONCandidates, and stops at the first value of shape. A value that
// decodes is skipped whole, so its inner brackets are not tried again.
func scanJSON(text string, shape replyShape) scanned {
	var out scanned
	start := 0
	for range maxJSONCandidates {
		i := strings.IndexAny(text[start:], "{[")
		if i < 0 {
			break
		}
		i += start
		v, n, err := lenientjson.Prefix(text[i:])
		if err != nil {
			if out.err == nil {
				out.err = fmt.Errorf("the reply is not valid JSON: %w", err)
				if errors.Is(err, lenientjson.ErrTruncated) {
					out.err = errIncompleteJSON
				}
			}
			if errors.Is(err, lenientjson.ErrTruncated) {
				// The value runs to the end of text: every later bracket
				// is a part of it, not a reply of its own.
				break
			}
			start = i + 1
			continue
		}
		if shape.fits(v) {
			return scanned{value: v, match: true, decoded: true}
		}
		if k := shape.keysOf(v); !out.decoded || k > out.keys {
			out.value, out.decoded, out.keys = v, true, k
		}
		start = i + max(n, 1)
	}
	return out
}

// unfence returns the body of the first Markdown code fence in s, or s
// when it has none.
func unfence(s string) string {
	i := strings.Index(s, "```")
	if i < 0 {
		return s
	}
	body := s[i+3:]
	// Skip the info string (```json).
	if nl := strings.IndexByte(body, '\n'); nl >= 0 && !strings.ContainsAny(body[:nl], "{[") {
		body = body[nl+1:]
	}
	if j := strings.Index(body, "```"); j >= 0 {
		body = body[:j]
	}
	if !strings.ContainsAny(body, "{[") {
		return s
	}
	return body
}

// listField returns the list a step's reply carries under field. It also
// accepts a bare list, a single object where a list was expected (one
// holding one of itemKeys), a differently capitalised field name, and an
// object whose only list is under another name. A string where the list
// was expected is rejected: it is usually the whole text, not one item.
func listField(v any, field string, itemKeys ...string) ([]any, error) {
	switch t := v.(type) {
	case []any:
		return t, nil
	case map[string]any:
		val, ok := t[field]
		if !ok {
			for k, kv := range t {
				if strings.EqualFold(strings.TrimSpace(k), field) {
					val, ok = kv, true
					break
				}
			}
		}
		if !ok {
			for _, key := range itemKeys {
				if hasKey(t, key) {
					return []any{t}, nil
				}
			}
			if l, only := onlyList(t); only {
				return l, nil
			}
			return nil, fmt.Errorf("the reply has no %q field", field)
		}
		switch vt := val.(type) {
		case []any:
			return vt, nil
		case map[string]any:
			return []any{vt}, nil
		}
		return nil, fmt.Errorf("the %q field must be a list, got %s", field, jsonKind(val))
	}
	return nil, fmt.Errorf("the reply must be a JSON object with a %q list, got %s", field, jsonKind(v))
}

func hasKey(m map[string]any, key string) bool {
	for k := range m {
		if strings.EqualFold(strings.TrimSpace(k), key) {
			return true
		}
	}
	return false
}

func lookup(m map[string]any, keys ...string) (any, bool) {
	for _, key := range keys {
		if v, ok := m[key]; ok {
			return v, true
		}
	}
	for _, key := range keys {
		for k, v := range m {
			if strings.EqualFold(strings.TrimSpace(k), key) {
				return v, true
			}
		}
	}
	return nil, false
}

// onlyList returns the value of m's single list-valued property.
func onlyList(m map[string]any) ([]any, bool) {
	var found []any
	n := 0
	for _, v := range m {
		if l, ok := v.([]any); ok {
			found = l
			n++
		}
	}
	return found, n == 1
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// parseStrings parses a preprocess reply: a list of strings under field.
// Blank entries are dropped.
func parseStrings(reply string, schema *Schema, field string) ([]string, error) {
	v, err := extractJSON(reply, schema)
	if err != nil {
		return nil, err
	}
	list, err := listField(v, field)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(list))
	for i, it := range list {
		s, ok := it.(string)
		if !ok {
			return nil, fmt.Errorf("item %d of %q must be a string, got %s", i+1, field, jsonKind(it))
		}
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

// judged is one analyze item after parsing: a canonical verdict and its
// reason.
type judged struct {
	Verdict   string
	Reason    string
	Statement string // the item the judge echoed, if it did
	number    int    // the item number the judge echoed, from 1; 0 if none
	points    int    // a criteria score, 0..10
}

// verdictSpec says how to read an analyze reply.
type verdictSpec struct {
	schema  *Schema  // the reply's schema: its required keys and verdict values
	field   string   // top-level list: results or verdicts
	keys    []string // verdict key, then accepted aliases
	allowNA bool     // whether n/a is a valid verdict, where the schema allows it
	unit    string   // what each item judges: opinion, claim, instruction
	echo    string   // key under which the judge repeats the item (default "statement")
}

// values returns the verdicts the spec allows: the schema's enum for its
// verdict key (else yes and no, and n/a), without n/a unless allowNA.
// allowNA narrows the schema for one reply: a schema that allows n/a may
// allow it only in some cases, such as task_completion's when steps were
// left out.
func (spec verdictSpec) values() []string {
	all := shapeOf(spec.schema).allowed(spec.keys[0], verdictYes, verdictNo, verdictNA)
	if spec.allowNA {
		return all
	}
	return slices.DeleteFunc(slices.Clone(all), func(v string) bool { return v == verdictNA })
}

// parseVerdicts parses an analyze reply that must hold exactly want items.
func parseVerdicts(reply string, spec verdictSpec, want int) ([]judged, error) {
	v, err := extractJSON(reply, spec.schema)
	if err != nil {
		return nil, err
	}
	list, err := listField(v, spec.field, spec.keys...)
	if err != nil {
		return nil, err
	}
	if len(list) != want {
		return nil, fmt.Errorf("expected exactly %d items in %q, one per %s in the given order, got %d",
			want, spec.field, spec.unit, len(list))
	}
	allowed := spec.values()
	echo := cmp.Or(spec.echo, "statement")
	out := make([]judged, len(list))
	for i, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("item %d of %q must be an object, got %s", i+1, spec.field, jsonKind(it))
		}
		raw, ok := lookup(m, spec.keys...)
		if !ok {
			return nil, fmt.Errorf("item %d of %q has no %q", i+1, spec.field, spec.keys[0])
		}
		verdict, ok := verdictValue(raw, allowed)
		if !ok {
			return nil, fmt.Errorf("item %d of %q has %s %s; it must be exactly %s",
				i+1, spec.field, spec.keys[0], describe(raw), quoteList(allowed))
		}
		out[i] = judged{Verdict: verdict, Reason: optionalString(m, "reason"), Statement: optionalString(m, echo)}
		if raw, ok := lookup(m, "number"); ok {
			out[i].number = itemNumber(raw, want)
		}
	}
	return out, nil
}

// itemNumber reads an item number of 1..n written as a number or a
// numeric string ("3", "#3"); anything else is 0 (no number).
func itemNumber(raw any, n int) int {
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

// describe renders a bad value for an error message, bounded in length.
func describe(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return jsonKind(v)
	}
	const limit = 60
	if len(b) > limit {
		return string(b[:limit]) + "..."
	}
	return string(b)
}

func optionalString(m map[string]any, key string) string {
	v, ok := lookup(m, key)
	if !ok {
		return ""
	}
	s, _ := v.(string)
	return strings.TrimSpace(s)
}

// parseReason parses a reason reply: a JSON object with a non-empty
// "reason" string. Prose around it is ignored and prose alone is rejected,
// so the reason is always the field the judge filled in.
func parseReason(reply string) (string, error) {
	v, err := extractJSON(reply, schemaReason)
	if err != nil {
		return "", err
	}
	return reasonField(v)
}

// reasonField returns the "reason" string of a decoded reply.
func reasonField(v any) (string, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", fmt.Errorf("the reply must be a JSON object with a %q string, got %s", "reason", jsonKind(v))
	}
	raw, ok := lookup(m, "reason")
	if !ok {
		return "", errors.New(`the reply has no "reason" field`)
	}
	s, ok := raw.(string)
	if !ok || strings.TrimSpace(s) == "" {
		return "", fmt.Errorf(`the "reason" field must be a non-empty string, got %s`, describe(raw))
	}
	return strings.TrimSpace(s), nil
}

// matchStatements pairs verdicts with items by the item number (from 1)
// or the statement each verdict echoes under spec's echo key. A verdict
// names the item whose number it gives, else the item it echoes exactly
// as sent, up to case, spacing and final punctuation; a number and an echo
// naming different items is an error. See placeVerdicts for what happens
// then. When the judge reworded or left out the statements and gave no
// numbers, the verdicts are paired by position.
func matchStatements(verdicts []judged, items []string, spec verdictSpec) (out []judged, reordered bool, err error) {
	index := make(map[string]int, len(items))
	for i, it := range items {
		k := statementKey(it)
		if _, dup := index[k]; dup {
			index[k] = -1 // ambiguous: the same item twice
			continue
		}
		index[k] = i
	}
	echo := cmp.Or(spec.echo, "statement")
	named := make([]int, len(verdicts))
	for i, v := range verdicts {
		j, ok := index[statementKey(v.Statement)]
		if !ok || v.Statement == "" {
			j = -1
		}
		if v.number > 0 {
			if j >= 0 && j != v.number-1 {
				return nil, false, fmt.Errorf("verdict %d gives number %d but repeats %s %d as its %q; give each verdict the number and the words of the same %s",
					i+1, v.number, spec.unit, j+1, echo, spec.unit)
			}
			j = v.number - 1
		}
		named[i] = j
	}
	order, reordered, err := placeVerdicts(named, spec.unit, fmt.Sprintf("in the given order, repeating each as %q", echo))
	if err != nil || !reordered {
		return verdicts, false, err
	}
	out = make([]judged, len(order))
	for i, j := range order {
		out[i] = verdicts[j]
	}
	return out, true, nil
}

// placeVerdicts decides where verdicts go, given for each the item it
// names (named[i], from 0; -1 when it names none or none clearly). It
// returns, for each item, the index of its verdict. When every verdict
// names a different item, verdicts go to the items they name and
// reordered says whether that moved any. When no verdict names an item
// other than its own position, they stay in order. Anything in between,
// such as a verdict naming another item among some that name none, or an
// item judged twice, is an error for a re-ask; how says how the judge is
// to give its verdicts then ("in call order, with its number").
func placeVerdicts(named []int, unit, how string) (order []int, reordered bool, err error) {
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

// statementKey is how echoed statements are compared with the items sent:
// case, runs of spaces and surrounding punctuation do not count.
func statementKey(s string) string {
	s = strings.Join(strings.Fields(strings.ToLower(s)), " ")
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
}
