package configcheck // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/configcheck"

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/confmap"
)

// This package keeps its own check although confmap rejects unknown keys itself: its error
// (mapstructure's ErrorUnused) names the map holding a stray key
// ("'judge' has invalid keys: modle"), not the key's whole path in the
// collector's own "::" form, and suggests nothing. unknownKeys gives the
// path and the closest known key, so a typo in a deep scorer entry is
// found without reading the configuration reference.

// UnknownKeys reports every key of raw that t does not decode, once, by its
// YAML path (segments joined with "::" as the collector does), with the
// closest known key when one is close enough to be a typo.
func UnknownKeys(raw map[string]any, t reflect.Type) error {
	var errs []error
	walkKeys("", raw, t, &errs)
	return errors.Join(errs...)
}

// walkKeys checks value v, found at path, against the Go type t it decodes
// into. Types that decode themselves from something other than their
// fields (MapList, TextUnmarshaler scalars, maps) accept any keys.
func walkKeys(path string, v any, t reflect.Type, errs *[]error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if inner, ok := optionalElem(t); ok {
		m, isMap := v.(map[string]any)
		if isMap {
			// configoptional.Optional accepts "enabled" beside T's keys.
			m = withoutKey(m, "enabled")
		}
		if isMap {
			walkKeys(path, m, inner, errs)
		}
		return
	}
	if reflect.PointerTo(t).Implements(reflect.TypeFor[encoding.TextUnmarshaler]()) {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		fields := structKeys(t)
		for _, k := range sortedKeys(m) {
			ft, known := fields[k]
			if !known {
				*errs = append(*errs, unknownKeyError(join(path, k), k, fields))
				continue
			}
			walkKeys(join(path, k), m[k], ft, errs)
		}
	case reflect.Slice, reflect.Array:
		if reflect.PointerTo(t).Implements(reflect.TypeFor[confmap.Unmarshaler]()) {
			return
		}
		list, ok := v.([]any)
		if !ok {
			return
		}
		for i, item := range list {
			walkKeys(join(path, strconv.Itoa(i)), item, t.Elem(), errs)
		}
	}
}

// structKeys maps each key a struct decodes to the type of its field,
// following squashed fields as mapstructure does.
func structKeys(t reflect.Type) map[string]reflect.Type {
	keys := map[string]reflect.Type{}
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get(confmap.MapstructureTag), ",")
		if name == "-" {
			continue
		}
		if name == "" && slices.Contains(strings.Split(opts, ","), "squash") {
			for k, ft := range structKeys(f.Type) {
				keys[k] = ft
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		keys[name] = f.Type
	}
	return keys
}

// optionalElem returns T for configoptional.Optional[T].
func optionalElem(t reflect.Type) (reflect.Type, bool) {
	if t.Kind() != reflect.Struct || t.PkgPath() != "go.opentelemetry.io/collector/config/configoptional" || !strings.HasPrefix(t.Name(), "Optional[") {
		return nil, false
	}
	get, ok := reflect.PointerTo(t).MethodByName("Get")
	if !ok || get.Type.NumOut() != 1 || get.Type.Out(0).Kind() != reflect.Pointer {
		return nil, false
	}
	return get.Type.Out(0).Elem(), true
}

func unknownKeyError(path, key string, known map[string]reflect.Type) error {
	if best := SuggestKey(key, known); best != "" {
		return fmt.Errorf("%s: unknown key (did you mean %s?)", path, best)
	}
	return fmt.Errorf("%s: unknown key (known keys here: %s)", path, strings.Join(sortedKeys(known), ", "))
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + confmap.KeyDelimiter + key
}

func withoutKey(m map[string]any, key string) map[string]any {
	if _, ok := m[key]; !ok {
		return m
	}
	c := make(map[string]any, len(m)-1)
	for k, v := range m {
		if k != key {
			c[k] = v
		}
	}
	return c
}

// fieldErrors are the problems one Validate found, printed on one line.
// The collector prefixes a Validate error with the section's key path
// once, so on separate lines every line but the first would lose it.
type fieldErrors []error

func (fe fieldErrors) Error() string {
	msgs := make([]string, len(fe))
	for i, err := range fe {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

func (fe fieldErrors) Unwrap() []error { return fe }

// JoinFields returns nil for no errors, else the errors as one.
func JoinFields(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return fieldErrors(errs)
}
