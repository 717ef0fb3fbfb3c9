// Package llmevalconverter is a confmap converter that checks, in the
// collector's validate command as at start, what no component's own
// Validate can see: that the storage extension an llm_eval processor names
// (storage) is configured under extensions and listed in
// service::extensions. It changes nothing in the configuration.
//
// Add it to an ocb manifest under converters:
//
//	converters:
//	  - gomod: github.com/llm-eval/llm_eval <version>
//	    import: github.com/llm-eval/llm_eval/converter/llmevalconverter
package llmevalconverter // import "github.com/llm-eval/llm_eval/converter/llmevalconverter"

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
)

// processorType is the type of the llm_eval processor.
const processorType = "llm_eval"

// NewFactory returns the factory of the converter.
func NewFactory() confmap.ConverterFactory {
	return confmap.NewConverterFactory(func(confmap.ConverterSettings) confmap.Converter { return converter{} })
}

type converter struct{}

// Convert checks the storage of every llm_eval processor that a pipeline
// uses (the collector builds no other).
func (converter) Convert(_ context.Context, conf *confmap.Conf) error {
	used := map[component.ID]bool{}
	if pipelines, ok := conf.Get("service::pipelines").(map[string]any); ok {
		for _, p := range pipelines {
			if p, ok := p.(map[string]any); ok {
				for _, key := range stringList(p["processors"]) {
					if id, ok := parseID(key); ok {
						used[id] = true
					}
				}
			}
		}
	}
	extensions := map[component.ID]bool{}
	if exts, ok := conf.Get("extensions").(map[string]any); ok {
		for key := range exts {
			if id, ok := parseID(key); ok {
				extensions[id] = true
			}
		}
	}
	var enabled []component.ID
	for _, key := range stringList(conf.Get("service::extensions")) {
		if id, ok := parseID(key); ok {
			enabled = append(enabled, id)
		}
	}
	processors, _ := conf.Get("processors").(map[string]any)
	var errs []error
	for key, cfg := range processors {
		id, ok := parseID(key)
		if !ok || id.Type().String() != processorType || !used[id] {
			continue
		}
		cfg, _ := cfg.(map[string]any)
		name, _ := cfg["storage"].(string)
		storage, ok := parseID(name)
		if !ok {
			continue // empty or malformed: the processor's own config says so
		}
		switch {
		case !extensions[storage]:
			errs = append(errs, fmt.Errorf("processors::%s::storage: extension %q is not configured: configure it under extensions and list it in service::extensions", key, name))
		case !slices.Contains(enabled, storage):
			errs = append(errs, fmt.Errorf("processors::%s::storage: extension %q is configured but not listed in service::extensions", key, name))
		}
	}
	slices.SortFunc(errs, func(a, b error) int { return cmp.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}

// parseID reads a component id as the collector writes it: type[/name].
func parseID(s string) (component.ID, bool) {
	var id component.ID
	if err := id.UnmarshalText([]byte(s)); err != nil {
		return component.ID{}, false
	}
	return id, true
}

// stringList reads a list of strings from the configuration.
func stringList(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, item := range list {
		if s, ok := item.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
