package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/confmap"

	"github.com/llm-eval/llm_eval/internal/suggest"
)

// unknownKeys reports every key of raw that t does not decode, once, by its
// YAML path (segments joined with "::" as the collector does), with the
// closest known key when one is close enough to be a typo.
func unknownKeys(raw map[string]any, t reflect.Type) error {
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
	if best := suggestKey(key, known); best != "" {
		return fmt.Errorf("%s: unknown key (did you mean %s?)", path, best)
	}
	return fmt.Errorf("%s: unknown key (known keys here: %s)", path, strings.Join(sortedKeys(known), ", "))
}

// closestKey returns the known key nearest to key, if it is near enough
// to be a typo (see suggest.Closest).
func closestKey[V any](key string, known map[string]V) string {
	return suggest.Closest(key, sortedKeys(known))
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + confmap.KeyDelimiter + key
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
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
