package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/conversation"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
)

// Selection decides which items llm_eval evaluates: the trace sampler, and
// the compiled include/exclude filters of the processor and of each
// scorer, matched against an item's resource and own attributes.

// SpanFilterConfig selects spans by their resource and span attributes.
type SpanFilterConfig struct {
	// Include keeps only spans matching one of the entries; empty keeps all.
	Include []AttributeMatchConfig `mapstructure:"include"`
	// Exclude drops spans matching one of the entries.
	Exclude []AttributeMatchConfig `mapstructure:"exclude"`
}

// AttributeMatchConfig is one filter entry: every listed attribute must match.
type AttributeMatchConfig struct {
	// Resource attributes, by key (service.name, deployment.environment.name).
	Resource map[string]ValueMatchConfig `mapstructure:"resource"`
	// Span attributes, by key (gen_ai.agent.name, gen_ai.request.model).
	Span map[string]ValueMatchConfig `mapstructure:"span"`
}

// ValueMatchConfig matches one attribute value: a bare string is Equals.
type ValueMatchConfig struct {
	// Equals is the exact value.
	Equals string `mapstructure:"equals"`
	// Regexp is an RE2 expression matched anywhere in the value.
	Regexp string `mapstructure:"regexp"`
}

// UnmarshalText reads a bare string as an exact match.
func (v *ValueMatchConfig) UnmarshalText(text []byte) error {
	v.Equals = string(text)
	return nil
}

// SamplingConfig selects which traces are scored.
type SamplingConfig struct {
	// Percentage of traces whose generation spans are scored (0..100).
	Percentage float64 `mapstructure:"percentage"`
}

// Validate checks the sampling percentage.
func (sc *SamplingConfig) Validate() error {
	if p := sc.Percentage; !(p >= 0 && p <= 100) {
		return fmt.Errorf("percentage: must be between 0 and 100, got %v", p)
	}
	return nil
}

// traceSampler decides from the trace id alone, so every replica that sees
// a trace makes the same choice and a trace is scored everywhere or nowhere.
type traceSampler struct {
	all bool
	// threshold: a trace is sampled when the FNV-1a 64 hash of its id is
	// below it, so zero samples nothing.
	threshold uint64
}

// newTraceSampler samples percentage of the traces (sampling.percentage).
func newTraceSampler(percentage float64) traceSampler {
	switch {
	case percentage >= 100:
		return traceSampler{all: true}
	case !(percentage > 0):
		return traceSampler{}
	}
	f := percentage / 100 * math.Exp2(64)
	if f >= math.Exp2(64) {
		return traceSampler{all: true}
	}
	return traceSampler{threshold: uint64(f)}
}

// sampled reports whether the trace is in the sample.
func (s traceSampler) sampled(id pcommon.TraceID) bool {
	return s.all || fnv1a64(id) < s.threshold
}

// sampledID reports whether a conversation id is in the sample: by the
// same hash of its bytes, so every replica decides alike.
func (s traceSampler) sampledID(id string) bool {
	if s.all {
		return true
	}
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= prime
	}
	return h < s.threshold
}

// fnv1a64 hashes the 16 bytes of a trace id without allocating.
func fnv1a64(id pcommon.TraceID) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	for _, b := range id {
		h ^= uint64(b)
		h *= prime
	}
	return h
}

// spanFilter is a compiled include/exclude.
type spanFilter struct {
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

// compile checks and compiles the filter. Its errors start at include or
// exclude; the collector adds the path of the section holding them.
func (c SpanFilterConfig) compile() (spanFilter, error) {
	var f spanFilter
	var errs []error
	var err error
	if f.include, err = compileMatches("include", c.Include); err != nil {
		errs = append(errs, err)
	}
	if f.exclude, err = compileMatches("exclude", c.Exclude); err != nil {
		errs = append(errs, err)
	}
	return f, errors.Join(errs...)
}

func compileMatches(key string, entries []AttributeMatchConfig) ([]attributeMatch, error) {
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

func compileValues(key string, values map[string]ValueMatchConfig) ([]valueMatch, error) {
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

// empty says whether the filter lets every span through.
func (f spanFilter) empty() bool {
	return len(f.include) == 0 && len(f.exclude) == 0
}

// matches says whether an item passes: it matches an include entry (or
// there are none) and no exclude entry. res are its resource attributes,
// attrs its own: a span's, or those of a log call's records.
func (f spanFilter) matches(res, attrs pcommon.Map) bool {
	if len(f.include) > 0 && !anyMatch(f.include, res, attrs) {
		return false
	}
	return !anyMatch(f.exclude, res, attrs)
}

// passes is matches, short-cut for a filter that lets everything through.
func (f spanFilter) passes(res, attrs pcommon.Map) bool {
	return f.empty() || f.matches(res, attrs)
}

// rulesOut says whether a resource alone decides that no item under it
// passes, whatever the items' own attributes: no include entry matches the
// resource, or an exclude entry without span attributes does. The logs
// signal checks it before it copies records for joining.
func (f spanFilter) rulesOut(res pcommon.Map) bool {
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

// scorerSelection is what leaves a scorer out of an item: its include and
// exclude (scorers[].include, exclude) and its own sampling
// (scorers[].sampling.percentage).
type scorerSelection struct {
	// filters are the compiled include/exclude of each scorer that has
	// one, by scorer name.
	filters map[string]spanFilter
	// samplers are those of the scorers that sample fewer traces than
	// every trace, by scorer name.
	samplers map[string]traceSampler
}

// empty reports a selection that never leaves a scorer out.
func (s scorerSelection) empty() bool { return len(s.filters) == 0 && len(s.samplers) == 0 }

// excluded lists the scorers that do not score an item of trace, or nil;
// res and attrs are as for spanFilter.matches. A scorer's sample is
// decided by the trace id with the processor's own hash, so a trace is in
// a scorer's sample on every replica, and a scorer with a smaller
// percentage samples a subset of the traces one with a larger samples.
func (s scorerSelection) excluded(res, attrs pcommon.Map, trace pcommon.TraceID) map[string]bool {
	var out map[string]bool
	leaveOut := func(name string) {
		if out == nil {
			out = map[string]bool{}
		}
		out[name] = true
	}
	for name, f := range s.filters {
		if !f.matches(res, attrs) {
			leaveOut(name)
		}
	}
	for name, sm := range s.samplers {
		if !sm.sampled(trace) {
			leaveOut(name)
		}
	}
	return out
}

// generationAt is where a sampled generation span sits in its batch.
type generationAt struct {
	resource, scope, span int
	agent                 bool // an agent span, scored by scorers targeting agent
	// gen is the generation when indexing it as a step, or as a turn of a
	// conversation, read it already.
	gen *genai.Generation
	// conversation is the conversation it is a turn of, if it names one.
	conversation conversation.Key
}
