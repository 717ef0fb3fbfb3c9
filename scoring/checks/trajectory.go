package checks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/llm-eval/llm_eval/scoring/pipeline"
)

// defaultMaxRepeats is how often repeated_tool_calls lets one call (same
// tool, same arguments) happen without a max: twice is a retry, a third
// time looks like a loop.
const defaultMaxRepeats = 2

// maxNamesInDetail bounds the tool names a verdict's detail lists.
const maxNamesInDetail = 5

// countTrajectoryCheck compiles tool_errors, max_steps and
// repeated_tool_calls, each bounded by Max.
func countTrajectoryCheck(r Rule) (trajectoryCheck, error) {
	limit := 0
	switch {
	case r.Max != nil && *r.Max < 0:
		return nil, fmt.Errorf("max: must not be negative, got %d", *r.Max)
	case r.Max != nil:
		limit = *r.Max
	case r.Type == RuleMaxSteps:
		return nil, errors.New("max: missing; set the most steps a run may take")
	case r.Type == RuleRepeatedToolCalls:
		limit = defaultMaxRepeats
	}
	switch r.Type {
	case RuleToolErrors:
		return func(r *runFacts) (bool, string) {
			var tools []string
			perTool := map[string]int{}
			n := 0
			for _, s := range r.t.Steps {
				if s.Failed() {
					name := pipeline.ToolName(s.Tool)
					if perTool[name] == 0 {
						tools = append(tools, name)
					}
					perTool[name]++
					n++
				}
			}
			detail := fmt.Sprintf("%d tool %s ended in error", n, pipeline.Plural(n, "execution", "executions"))
			if n > 0 {
				for i, name := range tools {
					tools[i] = fmt.Sprintf("%s %d", name, perTool[name])
				}
				detail += " (" + listNames(tools) + ")"
			}
			return n <= limit, fmt.Sprintf("%s, want at most %d", detail, limit)
		}, nil
	case RuleMaxSteps:
		return func(r *runFacts) (bool, string) {
			n := r.t.StepCount()
			return n <= limit, fmt.Sprintf("%d %s, want at most %d", n, pipeline.Plural(n, "step", "steps"), limit)
		}, nil
	default: // RuleRepeatedToolCalls
		return func(r *runFacts) (bool, string) {
			calls := r.toolCalls()
			type key struct{ tool, args string }
			counts := make(map[key]int, len(calls))
			canonical := map[string]string{} // a loop repeats the same raw arguments
			worst, worstTool := 0, ""
			for _, c := range calls {
				args, ok := canonical[c.Arguments]
				if !ok {
					args = canonicalArguments(c.Arguments)
					canonical[c.Arguments] = args
				}
				k := key{c.Tool, args}
				counts[k]++
				if n := counts[k]; n > worst {
					worst, worstTool = n, c.Tool
				}
			}
			if worst <= 1 {
				return true, fmt.Sprintf("no call repeated among %d tool %s, want at most %d of each", len(calls), pipeline.Plural(len(calls), "call", "calls"), limit)
			}
			return worst <= limit, fmt.Sprintf("%s called %d times with the same arguments, want at most %d", pipeline.ToolName(worstTool), worst, limit)
		}, nil
	}
}

// toolNamesCheck compiles required_tools and forbidden_tools. A tool
// counts as called when a generation step asked for it or a tool step ran
// it.
func toolNamesCheck(r Rule) (trajectoryCheck, error) {
	if len(r.Tools) == 0 {
		return nil, errors.New("tools: missing; list the tool names")
	}
	for i, name := range r.Tools {
		if strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("tools::%d: empty tool name", i)
		}
	}
	names := slices.Clone(r.Tools)
	required := r.Type == RuleRequiredTools
	return func(r *runFacts) (bool, string) {
		calls := r.toolCalls()
		called := make(map[string]int, len(calls))
		for _, c := range calls {
			called[c.Tool]++
		}
		var hits []string
		for _, name := range names {
			if n := called[name]; required && n == 0 {
				hits = append(hits, name)
			} else if !required && n > 0 {
				hits = append(hits, fmt.Sprintf("%s (%d %s)", name, n, pipeline.Plural(n, "time", "times")))
			}
		}
		switch {
		case required && len(hits) > 0:
			return false, "not called: " + listNames(hits)
		case required:
			return true, fmt.Sprintf("all %d required %s called", len(names), pipeline.Plural(len(names), "tool", "tools"))
		case len(hits) > 0:
			return false, "called: " + listNames(hits)
		default:
			return true, fmt.Sprintf("none of %d forbidden %s called", len(names), pipeline.Plural(len(names), "tool", "tools"))
		}
	}, nil
}

// listNames joins names for a detail, at most maxNamesInDetail of them.
func listNames(names []string) string {
	if len(names) <= maxNamesInDetail {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:maxNamesInDetail], ", ") + fmt.Sprintf(" and %d more", len(names)-maxNamesInDetail)
}

// canonicalArguments is how arguments are compared: JSON re-encoded with
// sorted keys and no spacing, anything else with its surrounding space
// trimmed.
func canonicalArguments(args string) string {
	s := strings.TrimSpace(args)
	if s == "" || (s[0] != '{' && s[0] != '[') {
		return s
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return s
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return s
	}
	return strings.TrimSuffix(b.String(), "\n")
}
