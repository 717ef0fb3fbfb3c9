package genai

import (
	"sort"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// maxIndex bounds the index accepted in a flattened key, so a hostile key
// cannot make a huge sparse array.
const maxIndex = 1_000_000

// indexedEntry is one element of an array flattened into keys
// "prefix.N.suffix": its index N and its fields keyed by suffix.
type indexedEntry struct {
	index  int
	fields map[string]pcommon.Value
}

// Flattened prefixes rebuilt from span attributes.
const (
	prefixPrompt     = "gen_ai.prompt."       // OpenLLMetry input
	prefixCompletion = "gen_ai.completion."   // OpenLLMetry output
	prefixOIInput    = "llm.input_messages."  // OpenInference input
	prefixOIOutput   = "llm.output_messages." // OpenInference output
	prefixOIPrompts  = "llm.prompts."         // OpenInference legacy completions input
	prefixOIChoices  = "llm.choices."         // OpenInference legacy completions output
	prefixOIDocs     = "retrieval.documents." // OpenInference retrieved documents
)

var indexedPrefixes = [...]string{
	prefixPrompt, prefixCompletion, prefixOIInput, prefixOIOutput, prefixOIPrompts, prefixOIChoices, prefixOIDocs,
}

// indexedAttrs holds every flattened array of a span, rebuilt in index order.
type indexedAttrs struct {
	groups map[string][]indexedEntry // by prefix
}

func (ia *indexedAttrs) get(prefix string) []indexedEntry {
	if ia == nil {
		return nil
	}
	return ia.groups[prefix]
}

// collectIndexed rebuilds the flattened arrays of attrs in one pass.
func collectIndexed(attrs pcommon.Map) *indexedAttrs {
	var raw map[string]map[int]map[string]pcommon.Value
	for k, v := range attrs.All() {
		for _, prefix := range indexedPrefixes {
			if !strings.HasPrefix(k, prefix) {
				continue
			}
			if raw == nil {
				raw = map[string]map[int]map[string]pcommon.Value{}
			}
			g := raw[prefix]
			if g == nil {
				g = map[int]map[string]pcommon.Value{}
				raw[prefix] = g
			}
			addIndexed(g, k[len(prefix):], v)
			break
		}
	}
	ia := &indexedAttrs{groups: map[string][]indexedEntry{}}
	for prefix, g := range raw {
		ia.groups[prefix] = sortedEntries(g)
	}
	return ia
}

// addIndexed files value v under "N.suffix" into g, ignoring keys without a
// valid index and new indices beyond maxItems entries.
func addIndexed(g map[int]map[string]pcommon.Value, key string, v pcommon.Value) {
	n, suffix, ok := splitIndex(key)
	if !ok {
		return
	}
	fields, seen := g[n]
	if !seen {
		if len(g) >= maxItems {
			return
		}
		fields = map[string]pcommon.Value{}
		g[n] = fields
	}
	fields[suffix] = v
}

// splitIndex splits "12.message.role" into 12 and "message.role".
func splitIndex(key string) (int, string, bool) {
	n, i := 0, 0
	for i < len(key) && key[i] >= '0' && key[i] <= '9' {
		n = n*10 + int(key[i]-'0')
		if n > maxIndex {
			return 0, "", false
		}
		i++
	}
	if i == 0 || i+1 >= len(key) || key[i] != '.' {
		return 0, "", false
	}
	return n, key[i+1:], true
}

func sortedEntries(g map[int]map[string]pcommon.Value) []indexedEntry {
	out := make([]indexedEntry, 0, len(g))
	for n, f := range g {
		out = append(out, indexedEntry{index: n, fields: f})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].index < out[j].index })
	return out
}

// subIndexed rebuilds a nested flattened array ("message.contents.N.…")
// from the fields of one entry.
func subIndexed(fields map[string]pcommon.Value, prefix string) []indexedEntry {
	var g map[int]map[string]pcommon.Value
	for k, v := range fields {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		if g == nil {
			g = map[int]map[string]pcommon.Value{}
		}
		addIndexed(g, k[len(prefix):], v)
	}
	return sortedEntries(g)
}

// field returns the string form of fields[key], or "".
func field(fields map[string]pcommon.Value, key string) string {
	v, ok := fields[key]
	if !ok {
		return ""
	}
	return valueString(v)
}
