package checks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// jsonText returns the JSON text of an output: trimmed and, when fence is
// set, without one surrounding Markdown code fence.
func jsonText(text string, fence bool) string {
	t := strings.TrimSpace(text)
	if fence && strings.HasPrefix(t, "```") && strings.HasSuffix(t, "```") && len(t) >= 6 {
		t = strings.TrimSuffix(t[3:], "```")
		if nl := strings.IndexByte(t, '\n'); nl >= 0 && strings.TrimSpace(t[:nl]) != "" &&
			!strings.ContainsAny(t[:nl], "{[\"") {
			t = t[nl+1:] // a language tag such as json
		}
		t = strings.TrimSpace(t)
	}
	return t
}

// decodeJSON decodes exactly one JSON value, keeping numbers exact.
func decodeJSON(t string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("text after the JSON value")
	}
	return v, nil
}

func jsonValidCheck(fence bool) ruleCheck {
	return func(text string) (bool, string) {
		if _, err := decodeJSON(jsonText(text, fence)); err != nil {
			return false, "not valid JSON: " + err.Error()
		}
		return true, "valid JSON"
	}
}

func jsonSchemaCheck(r Rule) (ruleCheck, error) {
	if r.Schema == nil {
		return nil, errors.New("schema: missing")
	}
	// Round-trip through JSON so YAML-decoded maps and Go values look alike.
	raw, err := json.Marshal(r.Schema)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	doc, err := decodeJSON(string(raw))
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	s, err := compileSchema(doc, "")
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return func(text string) (bool, string) {
		v, err := decodeJSON(jsonText(text, r.AllowCodeFence))
		if err != nil {
			return false, "not valid JSON: " + err.Error()
		}
		if err := s.validate(v, "$"); err != nil {
			return false, err.Error()
		}
		return true, "valid against the schema"
	}, nil
}

// jsonSchema is a compiled schema of the supported JSON Schema subset:
// type (a name or a list), enum, const, properties, required,
// additionalProperties (boolean or schema), items, minItems, maxItems,
// minLength, maxLength, pattern, minimum, maximum, exclusiveMinimum,
// exclusiveMaximum (numbers). Annotations (title, description, $schema,
// $id, default, examples) are allowed and ignored; any other keyword is
// rejected, so a schema is never silently checked less than it says.
type jsonSchema struct {
	types          []string
	enum           []any
	constant       *any
	props          map[string]*jsonSchema
	required       []string
	additional     *jsonSchema
	noAdditional   bool
	items          *jsonSchema
	minItems       *int
	maxItems       *int
	minLen, maxLen *int
	pattern        *regexp.Regexp
	min, max       *float64
	exMin, exMax   *float64
}

var schemaAnnotations = []string{"title", "description", "$schema", "$id", "$comment", "default", "examples"}

var schemaTypes = []string{"object", "array", "string", "number", "integer", "boolean", "null"}

func compileSchema(doc any, path string) (*jsonSchema, error) {
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: a schema must be an object", schemaPath(path))
	}
	s := &jsonSchema{}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		at := path + "/" + k
		var err error
		switch k {
		case "type":
			s.types, err = schemaTypeList(v, at)
		case "enum":
			list, ok := v.([]any)
			if !ok || len(list) == 0 {
				err = fmt.Errorf("%s: want a non-empty list", at)
			}
			s.enum = list
		case "const":
			c := v
			s.constant = &c
		case "properties":
			props, ok := v.(map[string]any)
			if !ok {
				err = fmt.Errorf("%s: want an object", at)
				break
			}
			s.props = map[string]*jsonSchema{}
			for name, sub := range props {
				if s.props[name], err = compileSchema(sub, at+"/"+name); err != nil {
					break
				}
			}
		case "required":
			list, ok := v.([]any)
			for _, x := range list {
				name, isStr := x.(string)
				if !isStr {
					ok = false
					break
				}
				s.required = append(s.required, name)
			}
			if !ok {
				err = fmt.Errorf("%s: want a list of property names", at)
			}
		case "additionalProperties":
			if b, isBool := v.(bool); isBool {
				s.noAdditional = !b
			} else {
				s.additional, err = compileSchema(v, at)
			}
		case "items":
			s.items, err = compileSchema(v, at)
		case "minItems":
			s.minItems, err = schemaCount(v, at)
		case "maxItems":
			s.maxItems, err = schemaCount(v, at)
		case "minLength":
			s.minLen, err = schemaCount(v, at)
		case "maxLength":
			s.maxLen, err = schemaCount(v, at)
		case "pattern":
			p, isStr := v.(string)
			if !isStr {
				err = fmt.Errorf("%s: want a string", at)
				break
			}
			if s.pattern, err = regexp.Compile(p); err != nil {
				err = fmt.Errorf("%s: %w", at, err)
			}
		case "minimum":
			s.min, err = schemaNumber(v, at)
		case "maximum":
			s.max, err = schemaNumber(v, at)
		case "exclusiveMinimum":
			s.exMin, err = schemaNumber(v, at)
		case "exclusiveMaximum":
			s.exMax, err = schemaNumber(v, at)
		default:
			if !slices.Contains(schemaAnnotations, k) {
				err = fmt.Errorf("%s: unsupported keyword", at)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

func schemaPath(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

func schemaTypeList(v any, at string) ([]string, error) {
	var names []string
	switch t := v.(type) {
	case string:
		names = []string{t}
	case []any:
		for _, x := range t {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("%s: want a type name or a list of them", at)
			}
			names = append(names, s)
		}
	default:
		return nil, fmt.Errorf("%s: want a type name or a list of them", at)
	}
	for _, n := range names {
		if !slices.Contains(schemaTypes, n) {
			return nil, fmt.Errorf("%s: unknown type %q", at, n)
		}
	}
	return names, nil
}

func schemaNumber(v any, at string) (*float64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, fmt.Errorf("%s: want a number", at)
	}
	f, err := n.Float64()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", at, err)
	}
	return &f, nil
}

func schemaCount(v any, at string) (*int, error) {
	f, err := schemaNumber(v, at)
	if err != nil {
		return nil, err
	}
	if *f < 0 || *f != math.Trunc(*f) || *f > math.MaxInt32 {
		return nil, fmt.Errorf("%s: want a non-negative integer", at)
	}
	n := int(*f)
	return &n, nil
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch x := v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		if f, err := x.Float64(); err == nil && f == math.Trunc(f) && !math.IsInf(f, 0) {
			return "integer"
		}
		return "number"
	case bool:
		return "boolean"
	default:
		return "null"
	}
}

// validate reports the first violation found, naming its JSON location.
func (s *jsonSchema) validate(v any, at string) error {
	if len(s.types) > 0 {
		t := jsonType(v)
		if !slices.Contains(s.types, t) && !(t == "integer" && slices.Contains(s.types, "number")) {
			return fmt.Errorf("%s: is %s, want %s", at, t, strings.Join(s.types, " or "))
		}
	}
	if s.enum != nil && !slices.ContainsFunc(s.enum, func(e any) bool { return jsonEqual(e, v) }) {
		return fmt.Errorf("%s: not one of the enum values", at)
	}
	if s.constant != nil && !jsonEqual(*s.constant, v) {
		return fmt.Errorf("%s: not the const value", at)
	}
	switch x := v.(type) {
	case map[string]any:
		for _, name := range s.required {
			if _, ok := x[name]; !ok {
				return fmt.Errorf("%s: missing required property %q", at, name)
			}
		}
		names := make([]string, 0, len(x))
		for k := range x {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			sub, ok := s.props[k]
			switch {
			case ok:
			case s.noAdditional:
				return fmt.Errorf("%s: property %q is not allowed", at, k)
			case s.additional != nil:
				sub = s.additional
			default:
				continue
			}
			if err := sub.validate(x[k], at+"."+k); err != nil {
				return err
			}
		}
	case []any:
		if s.minItems != nil && len(x) < *s.minItems {
			return fmt.Errorf("%s: %d items, want at least %d", at, len(x), *s.minItems)
		}
		if s.maxItems != nil && len(x) > *s.maxItems {
			return fmt.Errorf("%s: %d items, want at most %d", at, len(x), *s.maxItems)
		}
		if s.items != nil {
			for i, item := range x {
				if err := s.items.validate(item, fmt.Sprintf("%s[%d]", at, i)); err != nil {
					return err
				}
			}
		}
	case string:
		n := len([]rune(x))
		if s.minLen != nil && n < *s.minLen {
			return fmt.Errorf("%s: %d characters, want at least %d", at, n, *s.minLen)
		}
		if s.maxLen != nil && n > *s.maxLen {
			return fmt.Errorf("%s: %d characters, want at most %d", at, n, *s.maxLen)
		}
		if s.pattern != nil && !s.pattern.MatchString(x) {
			return fmt.Errorf("%s: does not match the pattern", at)
		}
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
		if s.min != nil && f < *s.min {
			return fmt.Errorf("%s: %v is below the minimum %v", at, f, *s.min)
		}
		if s.max != nil && f > *s.max {
			return fmt.Errorf("%s: %v is above the maximum %v", at, f, *s.max)
		}
		if s.exMin != nil && f <= *s.exMin {
			return fmt.Errorf("%s: %v is not above %v", at, f, *s.exMin)
		}
		if s.exMax != nil && f >= *s.exMax {
			return fmt.Errorf("%s: %v is not below %v", at, f, *s.exMax)
		}
	}
	return nil
}

// jsonEqual compares decoded JSON values, numbers by value.
func jsonEqual(a, b any) bool {
	na, aNum := a.(json.Number)
	nb, bNum := b.(json.Number)
	if aNum && bNum {
		fa, ea := na.Float64()
		fb, eb := nb.Float64()
		return ea == nil && eb == nil && fa == fb
	}
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}
