package scoring

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// ToolCallVerdicts is the tool_use scorer's analyze result: one entry per
// tool call of the trajectory, in call order.
type ToolCallVerdicts struct {
	Verdicts []ToolCallVerdict `json:"verdicts"`
	// Reordered is set when the judge returned the verdicts in another
	// order than the calls; they were put in order by their call numbers.
	Reordered bool `json:"reordered,omitempty"`
}

// ToolCallVerdict judges one tool call. RightTool says whether calling
// that tool at that point served the request, ArgumentsSupported whether
// its arguments came from the run so far, ResultUsed ("yes", "no" or
// "n/a") whether the run used what it returned. The call is Appropriate
// when RightTool and ArgumentsSupported are both "yes"; ResultUsed does
// not count towards the score.
type ToolCallVerdict struct {
	Call               int    `json:"call"`
	Tool               string `json:"tool"`
	RightTool          string `json:"right_tool"`
	ArgumentsSupported string `json:"arguments_supported"`
	ResultUsed         string `json:"result_used"`
	Appropriate        bool   `json:"appropriate"`
	Reason             string `json:"reason"`
}

// runToolUse is the tool_use pipeline: no preprocess (the calls are read
// from the trajectory), one analyze call judging every tool call, score
// appropriate / calls × scale. A case without a trajectory or without tool
// calls is not scorable.
func runToolUse(e *evaluation) {
	if e.c.Trajectory.empty() {
		e.notScorable("The case has no trajectory: tool_use judges the tool calls of an agent run, and this case records none.")
		return
	}
	calls, _ := trajectoryCalls(e.c.Trajectory)
	if len(calls) == 0 {
		e.notScorable("The agent made no tool calls in the steps recorded, so there is no tool use to judge.")
		return
	}
	msgs, err := render(SchemaToolUseVerdicts, promptData{
		Scorer:     ToolUse,
		Input:      e.c.Input,
		Output:     e.c.Output,
		Trajectory: trajectoryLines(e.c.Trajectory),
		Calls:      len(calls),
	})
	if err != nil {
		e.fail(&Error{Type: ErrorInvalidCase, Step: StepAnalyze, Err: err})
		return
	}
	var result ToolCallVerdicts
	if err := e.ask(StepAnalyze, schemaToolUseVerdicts, msgs, func(reply string) error {
		var perr error
		result, perr = parseToolCallVerdicts(reply, calls)
		return perr
	}); err != nil {
		e.fail(err)
		return
	}
	e.res.Steps.Analyze = result
	appropriate := 0
	var faults []string
	var unused []string
	forJudge := make([]any, len(result.Verdicts))
	for i, v := range result.Verdicts {
		forJudge[i] = v
		if v.Appropriate {
			appropriate++
		} else {
			faults = append(faults, fmt.Sprintf("call %d %s (%s)", v.Call, toolName(v.Tool), strings.TrimRight(cmp.Or(v.Reason, "no reason given"), ". ")))
		}
		if v.ResultUsed == verdictNo {
			unused = append(unused, strconv.Itoa(v.Call))
		}
	}
	n := len(calls)
	e.scoreRatio(appropriate, n)
	e.reason(forJudge, func() string {
		var b strings.Builder
		if appropriate == n {
			fmt.Fprintf(&b, "The score is %s because all %d tool %s appropriate", formatScore(e.res.Score), n, plural(n, "call was", "calls were"))
		} else {
			fmt.Fprintf(&b, "The score is %s because %d of %d tool %s appropriate; not appropriate: %s",
				formatScore(e.res.Score), appropriate, n, plural(n, "call was", "calls were"), strings.Join(faults, "; "))
		}
		if len(unused) > 0 {
			fmt.Fprintf(&b, "; the %s of %s %s %s not used", plural(len(unused), "result", "results"),
				plural(len(unused), "call", "calls"), strings.Join(unused, ", "), plural(len(unused), "was", "were"))
		}
		b.WriteString(".")
		return b.String()
	})
}

// parseToolCallVerdicts parses a tool_use analyze reply: exactly one
// verdict per call. Verdicts carrying every call number once are put in
// call order; verdicts without numbers are taken in order.
func parseToolCallVerdicts(reply string, calls []trajectoryCall) (ToolCallVerdicts, error) {
	v, err := extractJSON(reply, schemaToolUseVerdicts)
	if err != nil {
		return ToolCallVerdicts{}, err
	}
	list, err := listField(v, "verdicts", "right_tool", "call")
	if err != nil {
		return ToolCallVerdicts{}, err
	}
	if len(list) != len(calls) {
		return ToolCallVerdicts{}, fmt.Errorf("expected exactly %d items in %q, one per tool call in call order, got %d",
			len(calls), "verdicts", len(list))
	}
	parsed := make([]ToolCallVerdict, len(list))
	named := make([]int, len(list)) // the call each verdict names, from 0; -1: none
	for i, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			return ToolCallVerdicts{}, fmt.Errorf("item %d of %q must be an object, got %s", i+1, "verdicts", jsonKind(it))
		}
		var pv ToolCallVerdict
		for _, f := range []struct {
			dst     *string
			keys    []string
			allowNA bool
			missing string // used when the key is absent; "" makes it required
		}{
			{&pv.RightTool, []string{"right_tool", "tool_appropriate", "appropriate_tool"}, false, ""},
			{&pv.ArgumentsSupported, []string{"arguments_supported", "arguments", "args_supported"}, false, ""},
			{&pv.ResultUsed, []string{"result_used", "result"}, true, verdictNA},
		} {
			raw, ok := lookup(m, f.keys...)
			if !ok {
				if f.missing == "" {
					return ToolCallVerdicts{}, fmt.Errorf("item %d of %q has no %q", i+1, "verdicts", f.keys[0])
				}
				*f.dst = f.missing
				continue
			}
			s, _ := raw.(string)
			verdict, ok := normalizeVerdict(s)
			if !ok || (verdict == verdictNA && !f.allowNA) {
				allowed := `"yes" or "no"`
				if f.allowNA {
					allowed = `"yes", "no" or "n/a"`
				}
				return ToolCallVerdicts{}, fmt.Errorf("item %d of %q has %s %s; it must be %s", i+1, "verdicts", f.keys[0], describe(raw), allowed)
			}
			*f.dst = verdict
		}
		pv.Reason = optionalString(m, "reason")
		pv.Appropriate = isYes(pv.RightTool) && isYes(pv.ArgumentsSupported)
		parsed[i] = pv
		named[i] = -1
		if raw, ok := lookup(m, "call", "number"); ok {
			named[i] = callNumber(raw, len(calls)) - 1
		}
	}
	order, reordered, err := placeVerdicts(named, "tool call", "in call order, with its number")
	if err != nil {
		return ToolCallVerdicts{}, err
	}
	out := ToolCallVerdicts{Verdicts: make([]ToolCallVerdict, len(parsed)), Reordered: reordered}
	for i, j := range order {
		pv := parsed[j]
		pv.Call, pv.Tool = calls[i].Number, calls[i].Tool
		out.Verdicts[i] = pv
	}
	return out, nil
}

// callNumber reads a call number of 1..n written as a number or a numeric
// string; anything else is 0 (no number).
func callNumber(raw any, n int) int {
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
