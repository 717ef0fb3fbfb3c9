package selection // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/selection"

import (
	"errors"
	"fmt"
	"regexp"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Match is one filter entry: every listed attribute must match.
type Match struct {
	Resource map[string]Value // resource attributes, by key
	Span     map[string]Value // the item's own attributes, by key
}

// Value matches one attribute value: exactly (Equals) or by an RE2
// expression found anywhere in it (Regexp); one of the two.
type Value struct {
	Equals string
	Regexp string
}

// Filter is a compiled include/exclude.
type Filter struct {
	include, exclude []attributeMatch
}

type attributeMatch struct {
	resource, span []valueMatch
}

type valueMatch struct {
	key    string
	equals string
	re     *regexp.Regexp // nil for an exact match
}

// Compile checks and compiles a filter. Its errors start at include or
// exclude; the collector adds the path of the section holding them.
func Compile(include, exclude []Match) (Filter, error) {
	var f Filter
	var errs []error
	var err error
	if f.include, err = compileMatches("include", include); err != nil {
		errs = append(errs, err)
	}
	if f.exclude, err = compileMatches("exclude", exclude); err != nil {
		errs = append(errs, err)
	}
	return f, errors.Join(errs...)
}
func compileMatches(key string, entries []Match) ([]attributeMatch, error) {
	out := make([]attributeMatch, 0, len(entries))
	var errs []error
	for i, e := range entries {
		entryKey := fmt.Sprintf("%s[%d]", key, i)
		if len(e.Resource) == 0 && len(e.Span) == 0 {
			errs = append(errs, fmt.Errorf("%s: must list at least one resource or span attribute", entryKey))
			continue
		}
		res, err1 := compileValues(entryKey+".resource", e.Resource)
		span, err2 := compileValues(entryKey+".span", e.Span)
		if err1 != nil || err2 != nil {
			errs = append(errs, err1, err2)
			continue
		}
		out = append(out, attributeMatch{resource: res, span: span})
	}
	return out, errors.Join(errs...)
}

func compileValues(key string, values map[string]Value) ([]valueMatch, error) {
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	slices.Sort(keys) // stable error order
	out := make([]valueMatch, 0, len(values))
	var errs []error
	for _, k := range keys {
		v := values[k]
		attrKey := fmt.Sprintf("%s[%q]", key, k)
		switch {
		case k == "":
			errs = append(errs, fmt.Errorf("%s: attribute key must not be empty", key))
		case v.Equals != "" && v.Regexp != "":
			errs = append(errs, fmt.Errorf("%s: set equals or regexp, not both", attrKey))
		case v.Regexp != "":
			re, err := regexp.Compile(v.Regexp)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s.regexp: %w", attrKey, err))
				continue
			}
			out = append(out, valueMatch{key: k, re: re})
		case v.Equals != "":
			out = append(out, valueMatch{key: k, equals: v.Equals})
		default:
			errs = append(errs, fmt.Errorf("%s: needs a value, {equals: ...} or {regexp: ...} (use regexp \"^$\" for an empty value)", attrKey))
		}
	}
	return out, errors.Join(errs...)
}

// Empty says whether the filter lets every span through.
func (f Filter) Empty() bool {
	return len(f.include) == 0 && len(f.exclude) == 0
}

// Matches says whether an item passes: it matches an include entry (or
// there are none) and no exclude entry. res are its resource attributes,
// attrs its own: a span's, or those of a log call's records.
func (f Filter) Matches(res, attrs pcommon.Map) bool {
	if len(f.include) > 0 && !anyMatch(f.include, res, attrs) {
		return false
	}
	return !anyMatch(f.exclude, res, attrs)
}

// Passes is Matches, short-cut for a filter that lets everything through.
func (f Filter) Passes(res, attrs pcommon.Map) bool {
	return f.Empty() || f.Matches(res, attrs)
}

// RulesOut says whether a resource alone decides that no item under it
// passes, whatever the items' own attributes: no include entry matches the
// resource, or an exclude entry without span attributes does. The logs
// signal checks it before it copies records for joining.
func (f Filter) RulesOut(res pcommon.Map) bool {
	if len(f.include) > 0 && !slices.ContainsFunc(f.include, func(e attributeMatch) bool { return allMatch(e.resource, res) }) {
		return true
	}
	return slices.ContainsFunc(f.exclude, func(e attributeMatch) bool { return len(e.span) == 0 && allMatch(e.resource, res) })
}

func anyMatch(entries []attributeMatch, res, attrs pcommon.Map) bool {
	for _, e := range entries {
		if allMatch(e.resource, res) && allMatch(e.span, attrs) {
			return true
		}
	}
	return false
}

func allMatch(values []valueMatch, attrs pcommon.Map) bool {
	for _, vm := range values {
		v, ok := attrs.Get(vm.key)
		if !ok {
			return false
		}
		s := v.AsString()
		if vm.re != nil {
			if !vm.re.MatchString(s) {
				return false
			}
		} else if s != vm.equals {
			return false
		}
	}
	return true
}

// PerScorer holds the compiled include/exclude of each scorer that has
// one, by scorer name.
type PerScorer map[string]Filter

// Excluded lists the scorers whose filter an item does not pass, or nil;
// res and attrs are as for Filter.Matches.
func (fs PerScorer) Excluded(res, attrs pcommon.Map) map[string]bool {
	var out map[string]bool
	for name, f := range fs {
		if f.Matches(res, attrs) {
			continue
		}
		if out == nil {
			out = map[string]bool{}
		}
		out[name] = true
	}
	return out
}
